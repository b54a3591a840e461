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

import sys
from pathlib import Path

from gmprep.ingest import corpus_step
from gmprep.ingest.armor_stats import (
    REPO,
    add_armor_stats,
    read_clone,
    read_transcription,
    write_transcription,
)

TRANSCRIPTION = Path(__file__).resolve().parents[1] / "ingest" / "data" / "aon-transcribed" / "armor.tsv"
WHAT = "armor and shield statistics "  # this script's manifest entry starts so
_OURS = corpus_step.owned_by(REPO, WHAT)


def main() -> int:
    args = corpus_step.parser(__doc__, "clone", "a MihanEntalpo/pathfinder-2-ui clone", transcribe=True).parse_args()
    pages = corpus_step.read_source(args, TRANSCRIPTION, read_clone, read_transcription, write_transcription)
    records, report = corpus_step.transform(args.corpus, lambda recs: add_armor_stats(recs, pages))
    kinds = {kind: [r for r in records if r["type"] == "equipment" and r["fields"].get("item_type") == kind]
             for kind in ("armor", "shield")}
    specific = {kind: sum(bool(r["fields"].get(f"base_{kind}")) for r in rs) for kind, rs in kinds.items()}
    with_page = sum(bool(r.get("page")) for rs in kinds.values() for r in rs)
    commits = sorted({p.commit for p in pages})
    corpus_step.write(args.corpus, records, _OURS, [{
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
    print(f"{report.pages} saved pages; stats added to {report.stats_added}, page to {report.page_added}; "
          f"armor {len(kinds['armor'])} ({specific['armor']} specific), shields {len(kinds['shield'])} "
          f"({specific['shield']} specific), with a page {with_page}", file=sys.stderr)
    corpus_step.report("page of another book", report.other_book)
    corpus_step.report("saved pages no entry matched", report.unused)
    return 0


if __name__ == "__main__":
    raise SystemExit(corpus_step.run(main))
