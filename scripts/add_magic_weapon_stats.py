"""Give specific magic weapons their base weapon and its statistics from saved Archives of Nethys item pages.

Source: MihanEntalpo/pathfinder-2-ui keeps an offline copy of Archives of Nethys pages under ``docs/aonprd/``
(ORC content, see ``ingest/magic_weapons.py``); each specific weapon's ``Equipment.aspx-ID=N.htm`` prints its
base weapon (``Base Weapon Dagger``), whose statistics come from the base weapon notes that
``scripts/add_weapon_stats.py`` reads (``ingest/data/xuartlek-transcribed/weapons.tsv``). With a clone
(``--clone DIR``, bare or not) the pages are parsed directly, and ``--transcribe`` rewrites
``ingest/data/aon-transcribed/weapons.tsv`` (name, source line and base of each page, with path, commit and URL);
without one the script reads that file. Entries that already have a damage or a page keep them; a rerun
changes nothing. Prints what stays unmatched and the weapon-like entries still without a damage die.

Usage: python scripts/add_magic_weapon_stats.py [--clone PATHFINDER_2_UI_CLONE [--transcribe]] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from gmprep.ingest import weapon_stats
from gmprep.ingest.corpus import corpus_dir, iter_records
from gmprep.ingest.creature_speed import replace_sources
from gmprep.ingest.foundry.build import write_corpus
from gmprep.ingest.magic_weapons import (
    REPO,
    add_magic_weapon_stats,
    read_clone,
    read_transcription,
    write_transcription,
)

DATA = Path(__file__).resolve().parents[1] / "ingest" / "data"
TRANSCRIPTION = DATA / "aon-transcribed" / "weapons.tsv"
NOTES = DATA / "xuartlek-transcribed" / "weapons.tsv"
WHAT = "specific weapons "  # this script's manifest entry starts so


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clone", type=Path, help="a MihanEntalpo/pathfinder-2-ui clone (default: the transcription)")
    ap.add_argument("--transcribe", action="store_true", help="with --clone: rewrite the transcription from it")
    ap.add_argument("--corpus", type=Path, default=corpus_dir())
    args = ap.parse_args()
    if args.clone:
        pages = read_clone(args.clone)
        if args.transcribe:
            write_transcription(pages, TRANSCRIPTION)
    else:
        pages = read_transcription(TRANSCRIPTION)
    errors: list[str] = []
    records, report = add_magic_weapon_stats(iter_records(args.corpus, errors), pages,
                                             weapon_stats.read_transcription(NOTES))
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    equipment = [r for r in records if r["type"] == "equipment"]
    specific = [r for r in equipment if r["fields"].get("base_weapon")]
    with_die = [r for r in equipment if r["fields"].get("damage_die")]
    commits = sorted({p.commit for p in pages})
    path = args.corpus / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"sources": []}
    manifest["sources"] = replace_sources(manifest.get("sources", []), _ours, [{
        "repo": REPO, "commit": ", ".join(commits) or "n/a",
        "what": f"{WHAT}({len(specific)}): base weapon (fields.base_weapon) and the base's statistics "
                "(fields.damage/damage_die/damage_type/hands/range/reload/category/group, stat text; the base's "
                "from the kmdavis/xuartlek weapon notes), from the repository's saved Archives of Nethys pages "
                "docs/aonprd/Equipment.aspx-ID=*.htm that print a base weapon (ORC content; see "
                "ingest/data/aon-transcribed/weapons.tsv), by scripts/add_magic_weapon_stats.py",
    }])
    write_corpus(records, args.corpus, manifest)
    print(f"{report.pages} saved pages; stats added to {report.stats_added}, page to {report.page_added}; "
          f"specific weapons {len(specific)}, equipment with a damage die {len(with_die)}", file=sys.stderr)
    for label, rows in (("page of another book", report.other_book), ("base without a weapon note", report.no_base),
                        ("saved pages no entry matched", report.unused)):
        print(f"{label} ({len(rows)}): {'; '.join(rows) or 'none'}", file=sys.stderr)
    # weapon-like: a weapon's group, category or base without a die, or an item held in the hands whose text
    # names a base weapon in its first lines ("This +1 striking *longsword*")
    bases = {n.slug.replace("-", " ") for n in weapon_stats.read_transcription(NOTES)}
    left = sorted(r["name"] for r in equipment if not r["fields"].get("damage_die") and (
        r["fields"].get("item_type") == "weapon" or r["fields"].get("base_weapon") or _names_a_weapon(r, bases)))
    print(f"weapon-like entries without a damage die ({len(left)}): {'; '.join(left) or 'none'}", file=sys.stderr)
    return 0


def _names_a_weapon(rec: dict, bases: set[str]) -> bool:
    if not str(rec["fields"].get("usage", "")).startswith("held"):
        return False
    head = " ".join((rec.get("text") or "").split("\n\n")[2:3]).lower()  # the paragraph after the Price line
    return any(re.search(rf"\b{re.escape(b)}\b", head) for b in bases)


def _ours(source: dict) -> bool:
    return source.get("repo") == REPO and source.get("what", "").startswith(WHAT)


if __name__ == "__main__":
    raise SystemExit(main())
