"""Add armor and shield statistics and pages to the bundled corpus from saved Archives of Nethys pages.

Source: MihanEntalpo/pathfinder-2-ui keeps an offline copy of Archives of Nethys pages under ``docs/aonprd/``
(ORC content, see ``ingest/armor_stats.py``); each ``Armor.aspx-ID=N.htm`` / ``Shields.aspx-ID=N.htm`` holds
a base armor's or shield's name, source line (``Player Core pg. 273``) and stat block, and each specific
item's ``Equipment.aspx-ID=N.htm`` its base armor or shield (whose statistics it gets). With a clone
(``--clone DIR``, bare or not) the pages are parsed directly, and ``--transcribe`` rewrites
``ingest/data/aon-transcribed/armor.tsv`` (the name, source line and printed stats of each page, with path,
commit and URL); without one the script reads that file. Entries that already have an AC bonus or a page
keep them; a rerun changes nothing. Prints what stays unmatched.

Usage: python scripts/add_armor_stats.py [--clone PATHFINDER_2_UI_CLONE [--transcribe]] [--corpus ingest/data/pf2e]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gmprep.ingest.armor_stats import (
    REPO,
    add_armor_stats,
    read_clone,
    read_transcription,
    write_transcription,
)
from gmprep.ingest.corpus import corpus_dir, iter_records
from gmprep.ingest.creature_speed import replace_sources
from gmprep.ingest.foundry.build import write_corpus

TRANSCRIPTION = Path(__file__).resolve().parents[1] / "ingest" / "data" / "aon-transcribed" / "armor.tsv"
WHAT = "armor and shield statistics "  # this script's manifest entry starts so


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
    records, report = add_armor_stats(iter_records(args.corpus, errors), pages)
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    kinds = {kind: [r for r in records if r["type"] == "equipment" and r["fields"].get("item_type") == kind]
             for kind in ("armor", "shield")}
    specific = {kind: sum(bool(r["fields"].get(f"base_{kind}")) for r in rs) for kind, rs in kinds.items()}
    with_page = sum(bool(r.get("page")) for rs in kinds.values() for r in rs)
    commits = sorted({p.commit for p in pages})
    path = args.corpus / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"sources": []}
    manifest["sources"] = replace_sources(manifest.get("sources", []), _ours, [{
        "repo": REPO, "commit": ", ".join(commits) or "n/a",
        "what": f"{WHAT}of {len(kinds['armor'])} armors ({len(kinds['armor']) - specific['armor']} base, "
                f"{specific['armor']} specific with their base's; fields.ac_bonus/dex_cap/check_penalty/"
                f"speed_penalty/strength/category/group/base_armor) and {len(kinds['shield'])} shields "
                f"({len(kinds['shield']) - specific['shield']} base, {specific['shield']} specific; fields.ac_bonus/"
                f"speed_penalty/hardness/hp/bt/base_shield), stat text, page of {with_page}, from the repository's "
                "saved Archives of Nethys pages docs/aonprd/Armor.aspx-ID=*.htm, Shields.aspx-ID=*.htm and the "
                "Equipment.aspx-ID=*.htm pages that print a base armor or shield (ORC content; see "
                "ingest/data/aon-transcribed/armor.tsv), by scripts/add_armor_stats.py",
    }])
    write_corpus(records, args.corpus, manifest)
    print(f"{report.pages} saved pages; stats added to {report.stats_added}, page to {report.page_added}; "
          f"armor {len(kinds['armor'])} ({specific['armor']} specific), shields {len(kinds['shield'])} "
          f"({specific['shield']} specific), with a page {with_page}", file=sys.stderr)
    print(f"page of another book ({len(report.other_book)}): {'; '.join(report.other_book) or 'none'}",
          file=sys.stderr)
    print(f"saved pages no entry matched ({len(report.unused)}): {'; '.join(report.unused) or 'none'}",
          file=sys.stderr)
    return 0


def _ours(source: dict) -> bool:
    return source.get("repo") == REPO and source.get("what", "").startswith(WHAT)


if __name__ == "__main__":
    raise SystemExit(main())
