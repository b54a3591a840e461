"""Pre-Remaster (legacy) names and the Remaster entries that replaced them.

The Remaster (Player Core, Player Core 2, GM Core, Monster Core) renamed many conditions, spells,
heritages, traits and items. GMs keep typing the old names ("flat-footed", "magic missile"), so
the name index resolves them to the new entry (with a hint to replace the name) and search can
rewrite a query before it looks anything up.

Only renames whose target exists in the bundled corpus are listed; a unit test checks that every
target id exists and that no legacy name is also the name of a current entry.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from pathlib import Path

# legacy name (as usually written) -> Remaster entry id
LEGACY_NAMES: dict[str, str] = {
    # conditions and actions
    "flat-footed": "pf2e:condition:off-guard",
    "attack of opportunity": "pf2e:action:reactive-strike",
    # ancestries / heritages
    "half-elf": "pf2e:heritage:aiuvarin",
    "half-orc": "pf2e:heritage:dromaar",
    "tiefling": "pf2e:heritage:nephilim",
    "aasimar": "pf2e:heritage:nephilim",
    # energy traits (the bare words "positive"/"negative" are too common to flag)
    "positive energy": "pf2e:trait:vitality",
    "positive damage": "pf2e:trait:vitality",
    "negative energy": "pf2e:trait:void",
    "negative damage": "pf2e:trait:void",
    # spells
    "magic missile": "pf2e:spell:force-barrage",
    "true strike": "pf2e:spell:sure-strike",
    "burning hands": "pf2e:spell:breathe-fire",
    "color spray": "pf2e:spell:dizzying-colors",
    "magic weapon": "pf2e:spell:runic-weapon",
    "mage armor": "pf2e:spell:mystic-armor",
    "mage hand": "pf2e:spell:telekinetic-hand",
    "ray of frost": "pf2e:spell:frostbite",
    "produce flame": "pf2e:spell:ignition",
    "disrupt undead": "pf2e:spell:vitality-lash",
    "chill touch": "pf2e:spell:void-warp",
    "ray of enfeeblement": "pf2e:spell:enfeeble",
    "finger of death": "pf2e:spell:execute",
    "feather fall": "pf2e:spell:gentle-landing",
    "comprehend language": "pf2e:spell:translate",
    "tongues": "pf2e:spell:truespeech",
    "dimension door": "pf2e:spell:translocate",
    "dimensional anchor": "pf2e:spell:planar-tether",
    "see invisibility": "pf2e:spell:see-the-unseen",
    "hideous laughter": "pf2e:spell:laughing-fit",
    "obscuring mist": "pf2e:spell:mist",
    "magic fang": "pf2e:spell:runic-body",
    "longstrider": "pf2e:spell:tailwind",
    "gentle repose": "pf2e:spell:peaceful-rest",
    "ghost sound": "pf2e:spell:figment",
    "calm emotions": "pf2e:spell:calm",
    "flaming sphere": "pf2e:spell:floating-flame",
    "glitterdust": "pf2e:spell:revealing-light",
    "faerie fire": "pf2e:spell:revealing-light",
    "cloudkill": "pf2e:spell:toxic-cloud",
    "remove curse": "pf2e:spell:cleanse-affliction",
    "remove disease": "pf2e:spell:cleanse-affliction",
    "remove poison": "pf2e:spell:cleanse-affliction",
    "neutralize poison": "pf2e:spell:cleanse-affliction",
    "remove fear": "pf2e:spell:clear-mind",
    "restore senses": "pf2e:spell:sound-body",
    "tanglefoot": "pf2e:spell:tangle-vine",
    "spiritual weapon": "pf2e:spell:spiritual-armament",
    "baleful polymorph": "pf2e:spell:cursed-metamorphosis",
    "wail of the banshee": "pf2e:spell:wails-of-the-damned",
    "horrid wilting": "pf2e:spell:desiccate",
    "magic mouth": "pf2e:spell:embed-message",
    "nondetection": "pf2e:spell:veil-of-privacy",
    "mind blank": "pf2e:spell:hidden-mind",
    "plane shift": "pf2e:spell:interplanar-teleport",
    "endure elements": "pf2e:spell:environmental-endurance",
    "shield other": "pf2e:spell:share-life",
    "pass without trace": "pf2e:spell:vanishing-tracks",
    "continual flame": "pf2e:spell:everlight",
    "dancing lights": "pf2e:spell:light",
    "sound burst": "pf2e:spell:noise-blast",
    "acid splash": "pf2e:spell:caustic-blast",
    "animate dead": "pf2e:spell:summon-undead",
    "scorching ray": "pf2e:spell:blazing-bolt",
    "searing light": "pf2e:spell:holy-light",
    "magic aura": "pf2e:spell:disguise-magic",
    "spider climb": "pf2e:spell:gecko-grip",
    "shocking grasp": "pf2e:spell:thunderstrike",
    "acid arrow": "pf2e:spell:acid-grip",
    # items
    "healer's tools": "pf2e:equipment:healers-toolkit",
    "thieves' tools": "pf2e:equipment:thieves-toolkit",
    "alchemist's tools": "pf2e:equipment:alchemists-toolkit",
    # the Remaster renamed the bag of holding (Player Core / GM Core item tables)
    "bag of holding": "pf2e:equipment:spacious-pouch-type-i",
    "bag of holding type i": "pf2e:equipment:spacious-pouch-type-i",
    "bag of holding type ii": "pf2e:equipment:spacious-pouch-type-ii",
    "bag of holding type iii": "pf2e:equipment:spacious-pouch-type-iii",
    "bag of holding type iv": "pf2e:equipment:spacious-pouch-type-iv",
}

# Other spellings that people write for the same legacy names.
LEGACY_SPELLINGS: dict[str, str] = {
    "flat footed": "flat-footed",
    "flatfooted": "flat-footed",
    "attacks of opportunity": "attack of opportunity",
    "half elf": "half-elf",
    "half-elven": "half-elf",
    "half orc": "half-orc",
    "tieflings": "tiefling",
    "half-elves": "half-elf",
    "half-orcs": "half-orc",
    "healer's kit": "healer's tools",
    "thieves tools": "thieves' tools",
    "bags of holding": "bag of holding",
}

_SPACES = re.compile(r"\s+")

DATA = Path(__file__).resolve().parent / "data"
# the Foundry VTT pf2e system's "Remaster Changes" journal, transcribed (its source and commit in the file's header)
CHANGES = DATA / "remaster-changes.tsv"
# its renames resolved to bundled entries by scripts/resolve_remaster_changes.py
RENAMES = DATA / "remaster-renames.tsv"


def _journal_renames() -> dict[str, str]:
    """``RENAMES`` as legacy name -> entry id; {} when the file is absent (the resolver has not run)."""
    try:
        lines = RENAMES.read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    return {r["old"]: r["id"] for r in csv.DictReader((x for x in lines if not x.startswith("#")), delimiter="\t")}


# the journal's pages and the entry types a new name of theirs may resolve to
_PAGE_TYPES = {"Class Features": ("class-feature",), "Feats": ("feat",), "Spells": ("spell",),
               "Equipment": ("equipment",), "Remaster Changes": ("heritage", "ancestry")}


def resolve_changes(entries: Iterable, claimed: Iterable[str] = ()) -> tuple[dict[str, str], list[str]]:
    """The journal's renames (``CHANGES``) resolved against ``entries`` (nodes with ``name``, ``node_id``, ``type``):
    legacy name -> entry id, and what was left out, why. A row counts when it is Renamed or Merged, its new name is
    exactly one entry of its page's kind (a class feature several classes share, "Weapon Expertise", is not), and its old
    name is no current entry's (Monster Core's "Knockdown" is a rule of its own). An old name listed with different
    targets (Wild Empathy) is left out, unless one is a spell (Inspire Heroics: the composition, not the feat). A name
    in ``claimed`` (the other-systems guard's hand list: "combat reflexes", "wild shape") stays the other game's: askers
    mean Pathfinder 1e's Combat Reflexes and D&D's Wild Shape far more often than the pre-Remaster feats."""
    claimed_keys = {normalize(c) for c in claimed}
    by_name: dict[str, list[tuple[str, str]]] = {}
    for n in entries:
        by_name.setdefault(normalize(n.name), []).append((n.node_id, n.type))
    lines = [x for x in CHANGES.read_text(encoding="utf-8").splitlines() if not x.startswith("#")]
    targets: dict[str, set[str]] = {}
    skipped: list[str] = []
    for r in csv.DictReader(lines, delimiter="\t"):
        if r["status"] not in ("Renamed", "Merged") or not r["new"]:
            continue
        old = normalize(r["old"])
        if old in claimed_keys:
            skipped.append(f"{r['old']} (another game's, by the guard's hand list)")
            continue
        if by_name.get(old):
            skipped.append(f"{r['old']} (a current entry's name)")
            continue
        found = [i for i, t in by_name.get(normalize(r["new"]), []) if t in _PAGE_TYPES[r["page"]]]
        if len(found) != 1:
            skipped.append(f"{r['old']} -> {r['new']} ({len(found)} entries)")
            continue
        targets.setdefault(old, set()).add(found[0])
    out: dict[str, str] = {}
    for old, ids in sorted(targets.items()):
        chosen = ids if len(ids) == 1 else {i for i in ids if i.startswith("pf2e:spell:")}
        if len(chosen) == 1:
            out[old] = next(iter(chosen))
        else:
            skipped.append(f"{old} (targets {sorted(ids)})")
    return out, skipped


# The hand table above first (its choices stand), then every rename of the journal whose target is a bundled entry
HAND_LEGACY_NAMES = frozenset(LEGACY_NAMES)
JOURNAL_RENAMES = _journal_renames()
for _old, _target in JOURNAL_RENAMES.items():
    LEGACY_NAMES.setdefault(_old, _target)


def normalize(name: str) -> str:
    """Lowercase, typographic apostrophes folded, whitespace collapsed."""
    return _SPACES.sub(" ", name.replace("\u2019", "'").strip().lower())


def legacy_target(name: str) -> str | None:
    """The Remaster entry id for a legacy name (any listed spelling), or None."""
    key = normalize(name)
    key = LEGACY_SPELLINGS.get(key, key)
    return LEGACY_NAMES.get(key)


def all_legacy_names() -> dict[str, str]:
    """Every legacy spelling (listed names and variants) -> its canonical legacy name."""
    out = {name: name for name in LEGACY_NAMES}
    out.update(LEGACY_SPELLINGS)
    return out


def find_legacy(text: str) -> list[tuple[str, str]]:
    """``(legacy_name, target_id)`` for each legacy name in ``text`` (whole words, case-insensitive),
    longest spellings first, each canonical name once: search adds the target's name to a query."""
    low = normalize(text)
    found: list[tuple[str, str]] = []
    for spelling, canonical in sorted(all_legacy_names().items(), key=lambda kv: -len(kv[0])):
        if re.search(rf"(?<![\w'-]){re.escape(spelling)}(?![\w'-])", low):
            pair = (canonical, LEGACY_NAMES[canonical])
            if pair not in found:
                found.append(pair)
    return found
