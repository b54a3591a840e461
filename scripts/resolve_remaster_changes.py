#!/usr/bin/env python
"""Resolve the new names of kg/data/remaster-changes.tsv (the Foundry VTT pf2e "Remaster Changes" journal, transcribed)
to the bundled corpus's entries and write kg/data/remaster-renames.tsv (old name, entry id), which ``kg.legacy`` adds
to its table. The rules are ``kg.legacy.resolve_changes``'s; a test checks the file is what they give.

    .venv/bin/python scripts/resolve_remaster_changes.py
"""

from __future__ import annotations

import csv
import sys

from gmprep.core.sources import load_other_system_terms
from gmprep.ingest.corpus import load_corpus
from gmprep.kg.legacy import RENAMES, resolve_changes


def main() -> int:
    hand = [t.term for t in load_other_system_terms() if not t.pf2e]  # the guard's hand list: other games' names
    renames, skipped = resolve_changes((n for n in load_corpus().nodes if n.kind == "entry"), claimed=hand)
    with open(RENAMES, "w", encoding="utf-8", newline="") as f:
        f.write("# written by scripts/resolve_remaster_changes.py from kg/data/remaster-changes.tsv\n")
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["old", "id"])
        w.writerows(sorted(renames.items()))
    print(f"{len(renames)} renames -> {RENAMES}; left out {len(skipped)}: {'; '.join(skipped)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
