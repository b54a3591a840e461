"""Add printed page numbers to the bundled corpus's conditions, actions, feats, spells and items from saved
Archives of Nethys pages.

Source: MihanEntalpo/pathfinder-2-ui keeps an offline copy of Archives of Nethys pages under ``docs/aonprd/``
(ORC content, see ``ingest/aon_pages.py``); each ``Conditions.aspx-ID=N.htm`` / ``Actions.aspx-ID=N.htm`` /
``Feats.aspx-ID=N.htm`` / ``Spells.aspx-ID=N.htm`` / ``Equipment.aspx-ID=N.htm`` (and list pages) holds the
entry's title and its source line (``Player Core pg. 444``). With a clone (``--clone DIR``, bare or
not) the pages are parsed directly, and ``--transcribe`` rewrites
``ingest/data/aon-transcribed/pages.tsv`` (the title and source line of each page, with path, commit and
URL); without one the script reads that file. Entries that already have a page keep it. Prints the pages
of another book, the saved pages no entry matched, and the conditions and actions still without a page.

Usage: python scripts/add_pages.py [--clone PATHFINDER_2_UI_CLONE [--transcribe]] [--corpus ingest/data/pf2e]
"""

from __future__ import annotations

import sys
from pathlib import Path

from gmprep.ingest import corpus_step
from gmprep.ingest.aon_pages import REPO, add_pages, read_clone, read_transcription, write_transcription

TRANSCRIPTION = Path(__file__).resolve().parents[1] / "ingest" / "data" / "aon-transcribed" / "pages.tsv"
WHAT = "printed pages "  # this script's manifest entry starts so
OLD_WHAT = "condition and action pages "  # and did so before feats, spells and items had pages
_OURS = corpus_step.owned_by(REPO, WHAT, OLD_WHAT)


def main() -> int:
    args = corpus_step.parser(__doc__, "clone", "a MihanEntalpo/pathfinder-2-ui clone", transcribe=True).parse_args()
    pages = corpus_step.read_source(args, TRANSCRIPTION, read_clone, read_transcription, write_transcription)
    records, report = corpus_step.transform(args.corpus, lambda recs: add_pages(recs, pages))
    kinds = ("condition", "action", "feat", "spell", "equipment")
    counts = {kind: sum(1 for r in records if r["type"] == kind and r.get("page")) for kind in kinds}
    totals = {kind: sum(1 for r in records if r["type"] == kind) for kind in kinds}
    have = ", ".join(f"{counts[k]} of {totals[k]} {k}{'' if k == 'equipment' else 's'}" for k in kinds)
    commits = sorted({p.commit for p in pages})
    corpus_step.write(args.corpus, records, _OURS, [{
        "repo": REPO, "commit": ", ".join(commits) or "n/a",
        "what": f"{WHAT}(the `page` of {have}, where a page is set) from the repository's saved Archives "
                "of Nethys pages docs/aonprd/*.htm: Conditions, Actions, Feats, Spells, Rituals and Equipment "
                "pages and the list pages that hold such entries (ORC content; title and source line, see "
                "ingest/data/aon-transcribed/pages.tsv), by scripts/add_pages.py",
    }])
    print(f"{report.pages} saved pages; page added to {report.page_added}; with a page: "
          + ", ".join(f"{k} {counts[k]}/{totals[k]}" for k in kinds), file=sys.stderr)
    corpus_step.report("page of another book", report.other_book)
    print(f"saved pages no entry matched: {len(report.unused)}", file=sys.stderr)
    corpus_step.report("without a page", report.unmatched)
    return 0


if __name__ == "__main__":
    raise SystemExit(corpus_step.run(main))
