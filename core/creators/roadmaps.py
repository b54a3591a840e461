"""GM Core's Class Road Maps (in the "PC-style Build" rules entry, Building NPCs): how to build an NPC that works like a
class ("**Wizard** Low Perception; high Arcana; high Int; low AC; ... **Abilities** prepared arcane spellcasting as a
wizard of their level, Drain Bonded Item, ..."), read from the entry's text, never typed in here.

A road map gives the columns of the statistics it lists ("Any statistic that isn't specifically listed can use moderate
numbers") and the abilities that are "good quick choices" for the class; ``roadmap_abilities`` finds each of those in
the rules gmprep holds (the class's feature, a feat or action of that name) so the NPC's abilities are cited rules text
at the NPC's level, not a Monster Core lender's.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from gmprep.common.text import STOP_WORDS

# the rules entry that prints the road maps (GM Core, Building Creatures > Building NPCs)
CLASS_ROADMAPS_ID = "pf2e:rule:gm-core--pc-style-build"
# the rules entry that says how many spell slots a creature casting like a PC gets
SPELL_SLOTS_ID = "pf2e:rule:gm-core--prepared-and-spontaneous-spells"


# spells have ranks 1 to 10 (Player Core); GM Core's creature levels go to 24
MAX_RANK = 10


def spell_slots(level: int) -> tuple[list[tuple[int, int]], int, int]:
    """(rank, slots) from the highest rank down, the cantrips and their rank, for a creature of ``level`` that casts as
    many spells as a PC, as GM Core's "Prepared and Spontaneous Spells" says: "the highest spell rank the creature can
    cast is half its level rounded up. It gets five cantrips. If the creature's level is odd, it gets two spell slots of
    the highest spell rank (plus three spell slots of each lower rank) ... If its level is even, it gets three spell
    slots of the highest spell rank (plus three spell slots of each lower rank)" (the smaller of the two options each
    time; the GM may give more)."""
    top = min(MAX_RANK, max(0, -(-level // 2)))  # a 21st- to 24th-level creature casts 10th-rank spells at most
    slots = [(rank, (2 if level % 2 else 3) if rank == top else 3) for rank in range(top, 0, -1)]
    return slots, 5, max(1, top)

_MAP = re.compile(r"^\*\*(?P<name>[^*\n]+?)\*\*\s*(?P<body>[^\n]*?)\s*\*\*Abilities\*\*\s*(?P<abilities>[^\n]+)$", re.M)
_COLUMNS = ("extreme", "high", "moderate", "low", "terrible")
# the printed words for the statistics a road map sets (the building tables' fields); an attribute as GM Core abbreviates
_STATS = {"perception": ["perception"], "ac": ["ac"], "fortitude": ["fort"], "reflex": ["ref"], "will": ["will"],
          "hp": ["hp"], "attack": ["attack"], "accuracy": ["attack"], "damage": ["damage"],
          "str": ["str"], "dex": ["dex"], "con": ["con"], "int": ["int"], "wis": ["wis"], "cha": ["cha"]}
# the fields every road map NPC has; what its road map does not list is moderate
BASE_FIELDS = ("perception", "str", "dex", "con", "int", "wis", "cha", "ac", "fort", "ref", "will", "hp", "attack",
               "damage")


class ClassRoadMap(BaseModel):
    """One class's road map: ``name`` as printed ("Cleric (Warpriest)"), its class ("Cleric") and variant
    ("Warpriest"), the columns of the statistics it lists (field -> column: "perception" -> "low", "skill:Arcana" ->
    "high", "spell_dc" -> "high"), and its abilities as printed, one phrase each."""

    name: str
    class_name: str
    variant: str | None = None
    columns: dict[str, str]
    abilities: list[str]
    text: str


def _parts(body: str) -> list[str]:
    body = re.sub(r"\([^)]*\)", "", body)  # "(when raging)", "(or for a simpler ranger, ...)"
    return [p.strip() for clause in re.split(r"[;.]", body) for p in re.split(r",|\band\b|\bplus\b", clause) if p.strip()]


def parse_columns(body: str, skills: set[str]) -> dict[str, str]:
    """The statistics a road map's text lists, each at the first column it names ("low to moderate HP": low; "high or
    extreme damage": high; "high Str or Dex": Str); a part naming no column takes the previous part's ("high Stealth and
    Thievery"); a part about skills in general ("high Charisma-based skills") sets no attribute. The first mention of a
    statistic counts ("low to moderate damage before sneak attack plus high damage with sneak attack": low)."""
    out: dict[str, str] = {}
    column: str | None = None
    for part in _parts(body):
        words = re.findall(r"[A-Za-z]+", part)
        lower = [w.lower() for w in words]
        cols = [w for w in lower if w in _COLUMNS]
        if cols:
            column = cols[0]
        if column is None:
            continue
        # the statistic: the words after the column words, up to an "or" naming an alternative
        picked: list[str] = []
        i = 0
        while i < len(lower) and (lower[i] in _COLUMNS or lower[i] in ("to", "or", "better", "and")):
            i += 1
        rest = lower[i:]
        if "or" in rest:
            rest = rest[:rest.index("or")]
        if "skill" in rest or "skills" in rest:
            named = [w for w in words[i:i + len(rest)] if w in skills]
            picked += [f"skill:{w}" for w in named]
        elif rest[:2] == ["spell", "dc"]:
            picked += ["spell_dc", "spell_attack"]
        else:
            for w, orig in zip(rest, words[i:i + len(rest)], strict=True):
                if w in _STATS:  # before the skills: Perception is a skill entry too
                    picked += _STATS[w]
                    break
                if orig in skills:
                    picked.append(f"skill:{orig}")
                    break
        for field in picked:
            out.setdefault(field, column)
    return out


def parse_class_roadmaps(text: str, skills: set[str]) -> list[ClassRoadMap]:
    """The road maps of the entry's text: each bold class name with its statistics and its "**Abilities**" list."""
    out = []
    for m in _MAP.finditer(text):
        name = m.group("name").strip()
        variant = re.search(r"\(([^)]+)\)", name)
        # "swashbuckler's style (plus exemplary finisher at 9th level)": two
        printed = re.sub(r"\(\s*(?:plus\s+)?([^)]*)\)", r", \1", m.group("abilities")).rstrip(". ")
        abilities = [a.strip() for a in re.split(r"[;,]", printed) if a.strip()]
        out.append(ClassRoadMap(name=name, class_name=re.sub(r"\s*\([^)]*\)", "", name).strip(),
                                variant=variant.group(1).strip() if variant else None,
                                columns=parse_columns(m.group("body"), skills),
                                abilities=[re.sub(r"^(?:and|or)\s+", "", a) for a in abilities], text=m.group(0)))
    return out


def roadmap_for(roadmaps: list[ClassRoadMap], class_name: str, concept: str) -> ClassRoadMap | None:
    """The road map of ``class_name``; of its variants, the one whose name's words the concept uses ("warpriest"),
    else the first printed (the cloistered cleric)."""
    mine = [r for r in roadmaps if r.class_name.lower() == class_name.lower()]
    said = set(re.findall(r"[a-z]+", concept.lower()))
    for r in mine:
        if r.variant and set(re.findall(r"[a-z]+", r.variant.lower())) - {class_name.lower()} <= said:
            return r
    return mine[0] if mine else None


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z']+", text.lower()) if w not in STOP_WORDS}


def _class_of(node, class_id: str, class_slugs: set[str]) -> int:
    """How much ``node`` belongs to the class (its id's last part, "wizard"): 2 its class feature, 1 a feat or action
    with the class's trait, 0 a general entry (no class's trait, ``class_slugs``: Reactive Strike, the general feat
    Shield Block), -1 an entry of other classes or an archetype's."""
    slug = class_id.rsplit(":", 1)[-1]
    if node.node_id.startswith(f"pf2e:class-feature:{slug}--"):
        return 2
    traits = {t.lower() for t in node.traits}
    if slug in traits:
        return 1
    if node.type == "class-feature" or "archetype" in traits or node.type not in ("feat", "action"):
        return -1
    return 0 if "general" in traits or not traits & class_slugs else -1


def _level(node, features: list, class_name: str = "") -> int:
    """The level an entry comes at: its own; for a class's action that has none, the level the action says the class
    grants it at ("granted_by": "Rogue (level 19)" for Master Strike, whose class feature the corpus leaves out under
    the action's name), else that of the lowest of the class's features that names it (Drain Bonded Item: Arcane Bond,
    1); else 0 (not known: kept)."""
    if node.level is not None:
        return int(node.level)
    for said in node.fields.get("granted_by") or []:
        m = re.fullmatch(r"(.+) \(level (\d+)\)", str(said))
        if m and m.group(1).lower() == class_name.lower():
            return int(m.group(2))
    named = re.compile(r"\b" + re.escape(node.name) + r"\b", re.I)
    return min((int(f.level) for f in features if f.level is not None and named.search(f.text)), default=0)


def roadmap_abilities(roadmap: ClassRoadMap, class_id: str, level: int, by_name: dict[str, list],
                      features: list, class_slugs: set[str]) -> list[tuple[str, object | None]]:
    """(phrase, entry or None) for each of the road map's abilities an NPC of ``level`` has: the entry named by the
    phrase ("Drain Bonded Item", "Shield Block"; the class's own first), else the class feature whose name's words the
    phrase uses ("prepared arcane spellcasting as a wizard of their level": Wizard Spellcasting; "bloodline and related
    feats": Bloodline), else nothing found (the phrase as printed). An entry above the NPC's level is left out (a level 5
    rogue has no Debilitating Strike, a 9th-level feature), and so is a phrase that asks for more of the class ("a few
    other alchemist abilities")."""
    slug = class_id.rsplit(":", 1)[-1]
    mine = [f for f in features if f.node_id.startswith(f"pf2e:class-feature:{slug}--")]
    out: list[tuple[str, object | None]] = []
    seen: set[str] = set()
    for phrase in roadmap.abilities:
        core = re.split(r"\s+if\s+", phrase)[0].strip()  # "Quick Bomber if a bomber alchemist"
        ranked = sorted((n for n in by_name.get(core.lower(), []) if _class_of(n, class_id, class_slugs) >= 0
                         and n.name.lower() != f"{slug} feats"),
                        key=lambda n: -_class_of(n, class_id, class_slugs))
        node = ranked[0] if ranked else None
        if node is None:
            said = _words(core)
            # not the class's "<Class> Feats" feature, which only says when feats come ("muse feats" is no bard's)
            named = [f for f in mine if (w := _words(f.name) - {slug}) and w <= said and w != {"feats"}]
            node = max(named, key=lambda f: len(_words(f.name)), default=None)
        if node is None and re.search(r"\b(?:other|a few|more)\b", core, re.I):
            continue
        if node is not None:
            if _level(node, mine, roadmap.class_name) > level or node.node_id in seen:
                continue
            seen.add(node.node_id)
        out.append((core, node))
    return out
