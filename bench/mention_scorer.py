"""Mention scorer benchmark: prints one JSON object.

    python bench/mention_scorer.py [--notes DIR] [--repeat N]

Measured in one run, each next to its baseline:

- ``per_candidate``: p50/p95 microseconds of ``MentionScorer.score`` on every candidate the name index
  finds in the notes (``--notes``: a folder of .md files, default ``.cache/real-notes``, else the
  shared notes-dev set), beside the baseline of finding those candidates (``NameIndex.matches``)
  per candidate;
- ``note_300_lines``: a 300-line note made of the notes' own lines, scanned cold by a fresh
  ``kg.note_scan.NoteScanner`` (markdown parse, candidates, scoring), beside the same scan with no
  scorer (rules of thumb only) - the scorer's share of a full rescan;
- ``cpu_count``: the cores the numbers were taken on.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _notes(folder: Path | None) -> list[str]:
    for cand in [folder, REPO / ".cache" / "real-notes", REPO.parent / "shared" / "eval" / "notes-dev"]:
        if cand is not None and cand.is_dir():
            texts = [p.read_text(encoding="utf-8") for p in sorted(cand.glob("*.md"))]
            if texts:
                return texts
    sys.exit("no notes found: pass --notes DIR")


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from gmprep.ingest.corpus import load_corpus
    from gmprep.kg.mention_scorer import Candidate, MentionScorer, SpanContext
    from gmprep.kg.names import NameIndex
    from gmprep.kg.note_scan import NoteScanner

    texts = _notes(args.notes)
    names = NameIndex.build([n for n in load_corpus().nodes if n.kind == "entry"])
    scorer = MentionScorer.load()

    # per candidate: scoring vs finding
    score_us: list[float] = []
    find_us: list[float] = []
    for text in texts:
        t0 = time.perf_counter()
        matches = names.matches(text, note_forms=True)
        if matches:
            find_us.append((time.perf_counter() - t0) * 1e6 / len(matches))
        for m in matches:
            c = m.chosen
            cand = Candidate(c.node_id, c.type, c.name, text[m.start:m.end], alternatives=len(m.candidates))
            ctx = SpanContext()
            t0 = time.perf_counter()
            for _ in range(args.repeat):
                scorer.score(text, m.start, m.end, cand, ctx)
            score_us.append((time.perf_counter() - t0) * 1e6 / args.repeat)

    # a 300-line note, scanned cold with and without the scorer
    lines = [ln for t in texts for ln in t.splitlines()]
    note = "\n".join((lines * (300 // max(1, len(lines)) + 1))[:300]) + "\n"
    with_scorer: list[float] = []
    without: list[float] = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        n_with = len(NoteScanner(names, scorer=scorer).scan(note).mentions)
        with_scorer.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        n_without = len(NoteScanner(names, scorer=None).scan(note).mentions)
        without.append((time.perf_counter() - t0) * 1000)
    print(json.dumps({
        "notes": len(texts),
        "candidates": len(score_us),
        "per_candidate": {
            "score_us_p50": round(statistics.median(score_us), 1), "score_us_p95": round(_pct(score_us, 0.95), 1),
            "baseline_find_us_p50": round(statistics.median(find_us), 1) if find_us else None,
        },
        "note_300_lines": {
            "chars": len(note), "scan_ms_median": round(statistics.median(with_scorer), 1),
            "baseline_no_scorer_ms_median": round(statistics.median(without), 1),
            "mentions_shown": n_with, "mentions_shown_no_scorer": n_without,
        },
        "cpu_count": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 1),
    }, indent=2))


if __name__ == "__main__":
    main()
