"""Compare other-edition reader tables (``core/agents/data/other-edition-ngrams.json.gz`` and variants written by
``scripts/fit_other_edition_reader.py --out``) on saved answer runs: the reader's AUC between gaps and answerable
questions, and at each threshold how many gaps it would newly decline ``not_in_corpus`` (not already so in the run)
against how many answerable questions it would newly decline. Only the tuning sets' runs belong here.

    python bench/edition_reader_sweep.py --runs RUN_DIR --tables shipped OTHER.json.gz [...]

RUN_DIR holds ``SET.ans.jsonl`` files (``gmprep eval answers --out``); each set's questions are read from
bench/data/SET.jsonl or ../shared/eval/SET.jsonl. Dev's own unanswerable questions (mostly off-topic) are left out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def questions(runs: Path) -> list[tuple[str, bool, bool, str]]:
    """(id, is a gap, already not_in_corpus in the run, question) over the run's sets."""
    out = []
    for f in sorted(runs.glob("*.ans.jsonl")):
        name = f.name.split(".")[0]
        done = {r["id"]: bool(r.get("not_in_corpus")) for r in map(json.loads, f.open(encoding="utf-8"))}
        src = next((p for p in (ROOT / "bench" / "data" / f"{name}.jsonl", ROOT.parent / "shared" / "eval" / f"{name}.jsonl")
                    if p.exists()), None)
        if src is None:
            raise SystemExit(f"edition_reader_sweep: no question file for {name}")
        for q in map(json.loads, src.open(encoding="utf-8")):
            if q["id"] not in done or (name == "questions-dev" and q["kind"] == "unanswerable"):
                continue
            out.append((q["id"], q["kind"] in ("not_in_corpus", "unanswerable"), done[q["id"]], q["question"]))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", required=True, type=Path)
    p.add_argument("--tables", nargs="+", default=["shipped"], help="'shipped' or a table file")
    p.add_argument("--thresholds", nargs="*", type=float, default=[0.7, 0.8, 0.85, 0.9, 0.95])
    args = p.parse_args(argv)
    from gmprep.core.agents import edition, otherbooks

    qs = questions(args.runs)
    shipped = edition.DATA
    print(f"{len(qs)} questions: {sum(g for _, g, _, _ in qs)} gaps, {sum(not g for _, g, _, _ in qs)} answerable")
    for table in args.tables:
        edition.DATA = shipped if table == "shipped" else Path(table)
        edition._table.cache_clear()
        ps = [(i, g, nic, 0.0 if otherbooks.names_pathfinder_2e(q) else edition.read(q).probability)
              for i, g, nic, q in qs]
        gaps = [p for _, g, _, p in ps if g]
        ans = [p for _, g, _, p in ps if not g]
        auc = sum((a > b) + 0.5 * (a == b) for a in gaps for b in ans) / (len(gaps) * len(ans))
        top = sorted(((p, i) for i, g, nic, p in ps if not g and not nic), reverse=True)[:3]
        print(f"{table}: AUC {auc:.3f}; highest answerable: " + ", ".join(f"{i} {p:.3f}" for p, i in top))
        for t in args.thresholds:
            new_gaps = sum(1 for _, g, nic, p in ps if g and not nic and p >= t)
            new_ans = [i for i, g, nic, p in ps if not g and not nic and p >= t]
            print(f"  >= {t:g}: gaps newly not_in_corpus {new_gaps}; answerable newly declined {len(new_ans)} "
                  f"{' '.join(new_ans[:6])}")
    edition.DATA = shipped
    edition._table.cache_clear()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
