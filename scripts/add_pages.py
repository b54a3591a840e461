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

import argparse
import json
import sys
from pathlib import Path

from gmprep.ingest.aon_pages import REPO, add_pages, read_clone, read_transcription, write_transcription
from gmprep.ingest.corpus import corpus_dir, iter_records
from gmprep.ingest.creature_speed import replace_sources
from gmprep.ingest.foundry.build import write_corpus

TRANSCRIPTION = Path(__file__).resolve().parents[1] / "ingest" / "data" / "aon-transcribed" / "pages.tsv"
WHAT = "printed pages "  # this script's manifest entry starts so
OLD_WHAT = "condition and action pages "  # and did so before feats, spells and items had pages


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
    records, report = add_pages(iter_records(args.corpus, errors), pages)
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    kinds = ("condition", "action", "feat", "spell", "equipment")
    counts = {kind: sum(1 for r in records if r["type"] == kind and r.get("page")) for kind in kinds}
    totals = {kind: sum(1 for r in records if r["type"] == kind) for kind in kinds}
    have = ", ".join(f"{counts[k]} of {totals[k]} {k}{'' if k == 'equipment' else 's'}" for k in kinds)
    commits = sorted({p.commit for p in pages})
    path = args.corpus / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"sources": []}
    manifest["sources"] = replace_sources(manifest.get("sources", []), _ours, [{
        "repo": REPO, "commit": ", ".join(commits) or "n/a",
        "what": f"{WHAT}(the `page` of {have}, where a page is set) from the repository's saved Archives "
                "of Nethys pages docs/aonprd/*.htm: Conditions, Actions, Feats, Spells, Rituals and Equipment "
                "pages and the list pages that hold such entries (ORC content; title and source line, see "
                "ingest/data/aon-transcribed/pages.tsv), by scripts/add_pages.py",
    }])
    write_corpus(records, args.corpus, manifest)
    print(f"{report.pages} saved pages; page added to {report.page_added}; with a page: "
          + ", ".join(f"{k} {counts[k]}/{totals[k]}" for k in kinds), file=sys.stderr)
    print(f"page of another book ({len(report.other_book)}): {'; '.join(report.other_book) or 'none'}",
          file=sys.stderr)
    print(f"saved pages no entry matched: {len(report.unused)}", file=sys.stderr)
    print(f"without a page ({len(report.unmatched)}): {'; '.join(report.unmatched) or 'none'}", file=sys.stderr)
    return 0


def _ours(source: dict) -> bool:
    return source.get("repo") == REPO and source.get("what", "").startswith((WHAT, OLD_WHAT))


if __name__ == "__main__":
    raise SystemExit(main())
