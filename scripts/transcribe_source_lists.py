#!/usr/bin/env python
"""Write core/agents/data/other-books.tsv.gz (the entry names other books list) and
core/agents/data/other-publications.tsv (the books themselves: title, product line, Adventure Path) and
core/agents/data/other-rules-sections.tsv.gz (the rules sections other books head: Dual-Class PCs), from
ingest/aon_sources.py.

    python scripts/transcribe_source_lists.py --clone /path/to/MihanEntalpo+pathfinder-2-ui(.git)
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

from gmprep.ingest.aon_sources import (
    read_clone,
    read_publications,
    read_rules_sections,
    write_publications,
    write_tsv,
)

DATA = Path(__file__).resolve().parents[1] / "core" / "agents" / "data"
OUT = DATA / "other-books.tsv.gz"
PUBLICATIONS = DATA / "other-publications.tsv"
SECTIONS = DATA / "other-rules-sections.tsv.gz"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clone", type=Path, required=True, help="git dir of a MihanEntalpo/pathfinder-2-ui clone")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--publications", type=Path, default=PUBLICATIONS)
    p.add_argument("--sections", type=Path, default=SECTIONS)
    args = p.parse_args()
    rows = list(read_clone(args.clone))
    n = write_tsv(rows, args.out)
    by_line = collections.Counter(r.line for r in rows)
    print(f"{n} names from {len({r.book for r in rows})} books -> {args.out}; by product line: {dict(by_line)}")
    m = write_publications(read_publications(args.clone), args.publications)
    print(f"{m} publications and adventure groups -> {args.publications}")
    k = write_tsv(read_rules_sections(args.clone), args.sections)
    print(f"{k} rules sections -> {args.sections}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
