#!/usr/bin/env python
"""Write core/agents/data/pf1-publications.tsv (the Pathfinder 1st Edition publications by title: title, product
line, the Adventure Path a player's guide is for) from a clone of jasontankapps/pathfinder-data-1-e, less the titles
core/agents/data/other-publications.tsv (Pathfinder 2e) already has.

    python scripts/transcribe_pf1_sources.py --clone /path/to/jasontankapps+pathfinder-data-1-e(.git)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gmprep.ingest.aon_sources import read_publications_tsv, write_publications
from gmprep.ingest.pf1_sources import read_pf1_publications

DATA = Path(__file__).resolve().parents[1] / "core" / "agents" / "data"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clone", type=Path, required=True, help="git dir of a jasontankapps/pathfinder-data-1-e clone")
    p.add_argument("--pf2", type=Path, default=DATA / "other-publications.tsv")
    p.add_argument("--out", type=Path, default=DATA / "pf1-publications.tsv")
    args = p.parse_args()
    pf2 = read_publications_tsv(args.pf2)
    known = [t for r in pf2 for t in (r.title, r.group) if t]
    # the superseded and held Pathfinder 2e books are named by the same titles
    known += ["Core Rulebook", "Gamemastery Guide", "Bestiary", "Bestiary 2", "Bestiary 3", "Player Core",
              "GM Core", "Monster Core", "Player Core 2"]
    n = write_publications(read_pf1_publications(args.clone, known), args.out)
    print(f"{n} Pathfinder 1st Edition publications -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
