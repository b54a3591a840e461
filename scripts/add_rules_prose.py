"""Add the rules prose of Player Core and GM Core to the bundled corpus, one ``rule`` entry per section.

Source: MihanEntalpo/pathfinder-2-ui keeps an offline copy of Archives of Nethys pages under ``docs/aonprd/``
(ORC content, see ``ingest/aon_rules.py``); its ``Rules.aspx-ID=N.htm`` pages print the books' rules chapters
and sections with their source lines (``Player Core pg. 425``). With a clone (``--clone DIR``, bare or not) the
pages are parsed directly, and ``--transcribe`` rewrites ``ingest/data/aon-transcribed/rules.jsonl.gz`` (each
section's title, book, page, parents and text, with path, commit and URL); without one the script reads that
file. The entries (``pf2e:rule:player-core--flanking``) replace this script's earlier ones and nothing else; a
rerun changes nothing, and the other ``scripts/add_*.py`` may run before or after.

Usage: python scripts/add_rules_prose.py [--clone PATHFINDER_2_UI_CLONE [--transcribe]] [--corpus ingest/data/pf2e]
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from gmprep.ingest import corpus_step
from gmprep.ingest.aon_rules import (
    REPO,
    add_rules_prose,
    is_prose_id,
    read_clone,
    read_transcription,
    write_transcription,
)

TRANSCRIPTION = Path(__file__).resolve().parents[1] / "ingest" / "data" / "aon-transcribed" / "rules.jsonl.gz"
WHAT = "rules prose "  # this script's manifest entry starts so
_OURS = corpus_step.owned_by(REPO, WHAT)


def main() -> int:
    args = corpus_step.parser(__doc__, "clone", "a MihanEntalpo/pathfinder-2-ui clone", transcribe=True).parse_args()
    sections = corpus_step.read_source(args, TRANSCRIPTION, read_clone, read_transcription, write_transcription)
    records, clash = corpus_step.transform(args.corpus, lambda recs: add_rules_prose(list(recs), sections))
    ours = [r for r in records if is_prose_id(r["id"])]
    per_book = Counter(r["book"] for r in ours)
    chars = sum(len(r["text"]) for r in ours)
    printed = sum(bool(r["fields"]["page_printed"]) for r in ours)
    commits = sorted({s.commit for s in sections})
    books = ", ".join(f"{n} of {b}" for b, n in sorted(per_book.items()))
    corpus_step.write(args.corpus, records, _OURS, [{
        "repo": REPO, "commit": ", ".join(commits) or "n/a",
        "what": f"{WHAT}of Player Core and GM Core: {len(ours)} rule entries, one per section ({books}; "
                f"{chars} characters; page of each, {printed} from the section's own source line, the others the "
                "page printed nearest before them in their chapter), from the repository's saved Archives of "
                "Nethys pages docs/aonprd/Rules.aspx-ID=*.htm (ORC content; setting prose left out; see "
                "ingest/data/aon-transcribed/rules.jsonl.gz), by scripts/add_rules_prose.py",
    }])
    print(f"{len(sections)} sections read; {len(ours)} rule entries ({books}), {chars} characters, "
          f"{printed} with their own printed page", file=sys.stderr)
    corpus_step.report("sections whose id another entry has", clash)
    return 0


if __name__ == "__main__":
    raise SystemExit(corpus_step.run(main))
