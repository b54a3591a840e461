"""Give specific magic weapons their base weapon and its statistics from saved Archives of Nethys item pages.

Source: MihanEntalpo/pathfinder-2-ui keeps an offline copy of Archives of Nethys pages under ``docs/aonprd/``
(ORC content, see ``ingest/magic_weapons.py``); each specific weapon's ``Equipment.aspx-ID=N.htm`` prints its
base weapon (``Base Weapon Dagger``), whose statistics come from the base weapon notes that
``scripts/add_weapon_stats.py`` reads (``ingest/data/xuartlek-transcribed/weapons.tsv``). With a clone
(``--clone DIR``, bare or not) the pages are parsed directly, and ``--transcribe`` rewrites
``ingest/data/aon-transcribed/weapons.tsv`` (name, source line and base of each page, with path, commit and URL)
and ``base-weapons.tsv`` (the saved base weapon pages, ``ingest/aon_weapons.py``, for a base the vault has no
note of: the fist); without one the script reads those files. Items without a saved base line take the base their
own text names (``*+1 trident*``) or, for staves, GM Core's rule (*Attacking with a Staff*, read from the
transcribed rules sections ``ingest/data/aon-transcribed/rules.jsonl.gz``, or the clone's). Entries that already
have a damage or a page keep them; a rerun changes nothing. Prints what stays unmatched and the weapon-like
entries still without a damage die.

Usage: python scripts/add_magic_weapon_stats.py [--clone PATHFINDER_2_UI_CLONE [--transcribe]] [--corpus DIR]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from gmprep.ingest import aon_rules, aon_weapons, corpus_step, weapon_stats
from gmprep.ingest.magic_weapons import (
    REPO,
    add_magic_weapon_stats,
    read_clone,
    read_transcription,
    trait_rules,
    write_transcription,
)

DATA = Path(__file__).resolve().parents[1] / "ingest" / "data"
TRANSCRIPTION = DATA / "aon-transcribed" / "weapons.tsv"
BASE_PAGES = DATA / "aon-transcribed" / "base-weapons.tsv"
RULES = DATA / "aon-transcribed" / "rules.jsonl.gz"
NOTES = DATA / "xuartlek-transcribed" / "weapons.tsv"
WHAT = "specific weapons "  # this script's manifest entry starts so


def main() -> int:
    args = corpus_step.parser(__doc__, "clone", "a MihanEntalpo/pathfinder-2-ui clone", transcribe=True).parse_args()
    pages = corpus_step.read_source(args, TRANSCRIPTION, read_clone, read_transcription, write_transcription)
    base_pages = corpus_step.read_source(args, BASE_PAGES, aon_weapons.read_clone, aon_weapons.read_transcription,
                                         aon_weapons.write_transcription)
    sections = aon_rules.read_clone(args.clone) if args.clone else aon_rules.read_transcription(RULES)
    notes = weapon_stats.read_transcription(NOTES)
    notes += aon_weapons.missing_bases(notes, base_pages)
    rules = trait_rules(sections)
    records, report = corpus_step.transform(args.corpus,
                                            lambda recs: add_magic_weapon_stats(recs, pages, notes, rules))
    equipment = [r for r in records if r["type"] == "equipment"]
    specific = [r for r in equipment if r["fields"].get("base_weapon")]
    with_die = [r for r in equipment if r["fields"].get("damage_die")]
    commits = sorted({p.commit for p in pages} | {n.commit for n, _ in base_pages})
    corpus_step.write(args.corpus, records, corpus_step.owned_by(REPO, WHAT), [{
        "repo": REPO, "commit": ", ".join(commits) or "n/a",
        "what": f"{WHAT}({len(specific)}): base weapon (fields.base_weapon) and the base's statistics "
                "(fields.damage/damage_die/damage_type/hands/range/reload/category/group, stat text; the base's "
                "from the kmdavis/xuartlek weapon notes, else the saved base weapon page docs/aonprd/Weapons.aspx-ID=*.htm), "
                "the base from the repository's saved Archives of Nethys pages docs/aonprd/Equipment.aspx-ID=*.htm that "
                "print a base weapon, else from the item's own text (\"*+1 trident*\"), else from GM Core's "
                "Attacking with a Staff for the staff trait (ORC content; see "
                "ingest/data/aon-transcribed/weapons.tsv, base-weapons.tsv), by scripts/add_magic_weapon_stats.py",
    }])
    print(f"{report.pages} saved pages; stats added to {report.stats_added}, page to {report.page_added}; "
          f"specific weapons {len(specific)}, equipment with a damage die {len(with_die)}", file=sys.stderr)
    for label, rows in (("base from the item's text", report.from_text), ("base from a trait's rule", report.from_rule),
                        ("page of another book", report.other_book), ("base without a weapon note", report.no_base),
                        ("saved pages no entry matched", report.unused)):
        corpus_step.report(label, rows)
    # weapon-like: a weapon's group, category or base without a die, or an item held in the hands whose text
    # names a base weapon in its first lines ("This +1 striking *longsword*")
    bases = {n.slug.replace("-", " ") for n in notes}
    left = sorted(r["name"] for r in equipment if not r["fields"].get("damage_die") and (
        r["fields"].get("item_type") == "weapon" or r["fields"].get("base_weapon") or _names_a_weapon(r, bases)))
    corpus_step.report("weapon-like entries without a damage die", left)
    return 0


def _names_a_weapon(rec: dict, bases: set[str]) -> bool:
    if not str(rec["fields"].get("usage", "")).startswith("held"):
        return False
    head = " ".join((rec.get("text") or "").split("\n\n")[2:3]).lower()  # the paragraph after the Price line
    return any(re.search(rf"\b{re.escape(b)}\b", head) for b in bases)


if __name__ == "__main__":
    raise SystemExit(corpus_step.run(main))
