"""Retrieval benchmark: prints one JSON object.

    python bench/retrieval.py [--store DIR] [--build full|graph|skip] [--questions FILE] [--repeat N]

Measured in one run, each next to its baseline:

- ``build``: ``ingest.pipeline.build_index`` into a fresh temporary folder (``full`` embeds every node;
  ``graph`` builds graph + BM25 only; ``skip`` leaves it out);
- ``search``: latency p50/p95 of ``Searcher.search`` with rerank (first pass over unseen queries, then
  ``--repeat`` passes), the same with one query's model calls on one thread in one shard (``rerank_one_thread``, the
  baseline of ``query_threads``), without the link slot (``rerank_no_link_slot``, ``search.link_slot`` off), without
  rerank, and of BM25 alone (the baseline), over the queries (``--questions`` JSON Lines, or a built-in set of GM-style queries);
- ``vectors``: usearch top-10 against exact numpy top-10 over the same stored vectors (time per query,
  speed ratio, and how many of the exact top 10 usearch returns);
- ``peak_rss_mb``: the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# GM-style queries written for the benchmark (not the labelled evaluation questions).
QUERIES = [
    "frightened 2", "What does prone do?", "Stats for a goblin warrior", "fireball", "flat-footed",
    "How does grappling work?", "Which spell makes a creature invisible?", "healing potion price",
    "What happens when a character is dying?", "How far can I fall without taking damage?",
    "Can I Step away from an enemy without provoking?", "dragon turtle capsize", "What does the agile trait do?",
    "cover bonus to AC", "How much XP is a moderate encounter worth?", "Treat Wounds DC",
    "what can I do with a hero point", "How does persistent fire damage end?", "owlbear",
    "Which feats help with Athletics?", "dim light concealed", "Shield Block", "What does stunned 1 do?",
    "cost of living comfortable", "How do I identify a creature with Recall Knowledge?",
    "If I trip a creature what happens on a critical failure?", "lesser alchemist's fire damage",
    "magic missile", "What does the summon trait mean for my summoned animal?", "elite monster adjustments",
]


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50 and p95 of seconds, in milliseconds."""
    arr = np.asarray(samples) * 1000.0
    return {"p50_ms": round(float(np.percentile(arr, 50)), 2), "p95_ms": round(float(np.percentile(arr, 95)), 2),
            "n": len(samples)}


def timed(fn, items, repeat: int) -> list[float]:
    """Wall time of ``fn(item)`` for each item, ``repeat`` passes."""
    out = []
    for _ in range(repeat):
        for item in items:
            t0 = time.perf_counter()
            fn(item)
            out.append(time.perf_counter() - t0)
    return out


def _one_thread(fn):
    """``fn()`` with one query's model calls on one thread, unsharded (the query-threads setting put back after)."""
    from gmprep.kg import threads

    before = threads.configure(1)
    try:
        return fn()
    finally:
        threads.configure(before)


def _without_link_slot(searcher, fn):
    """``fn()`` with the searcher's link slot off (its settings put back after)."""
    before = searcher.settings
    searcher.settings = before.model_copy(update={"link_slot": False})
    try:
        return fn()
    finally:
        searcher.settings = before


def bench_build(mode: str) -> dict:
    """Time a fresh index build into a temporary folder."""
    from gmprep.common.settings import Settings
    from gmprep.ingest.pipeline import build_index

    if mode == "skip":
        return {"skipped": True}
    with tempfile.TemporaryDirectory(prefix="gmprep-bench-") as tmp:
        t0 = time.perf_counter()
        report = build_index(Settings(store_dir=Path(tmp) / "store"), progress=False, embed=(mode == "full"))
        seconds = time.perf_counter() - t0
    return {"mode": mode, "seconds": round(seconds, 2), "entries": report.entries, "nodes_embedded": report.nodes_embedded}


def bench_vectors(store, embedder, queries: list[str], k: int = 10) -> dict:
    """usearch (the store's HNSW index) against exact numpy search over the same vectors."""
    ids, vecs = store.all_vectors()
    qvecs = embedder.encode(queries)
    index = store._open_vectors()  # the same memory-mapped view vector_search uses
    key_of = dict(store.db.execute("SELECT node_id, rowid FROM nodes WHERE embedded=1"))
    rowids = np.asarray([key_of[i] for i in ids], dtype=np.uint64)
    exact_top, approx_top = [], []

    def exact(q):
        sims = vecs @ q
        top = np.argpartition(-sims, k)[:k]
        exact_top.append(set(rowids[top].tolist()))

    def approx(q):
        approx_top.append(set(int(x) for x in index.search(q, k).keys))

    t_exact = timed(exact, qvecs, 1)
    t_approx = timed(approx, qvecs, 1)
    overlap = np.mean([len(a & e) / k for a, e in zip(approx_top, exact_top, strict=True)])
    ex, ap = percentiles(t_exact), percentiles(t_approx)
    return {
        "vectors": int(vecs.shape[0]), "dim": int(vecs.shape[1]), "k": k,
        "usearch": ap, "exact_numpy": ex,
        "speedup_p50": round(ex["p50_ms"] / max(ap["p50_ms"], 1e-6), 2),
        "usearch_recall_of_exact_top10": round(float(overlap), 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=None, help="built store (default: settings / $GMPREP_STORE)")
    parser.add_argument("--build", choices=["full", "graph", "skip"], default="full")
    parser.add_argument("--questions", type=Path, default=None, help="JSON Lines with a 'question' field")
    parser.add_argument("--repeat", type=int, default=2, help="passes over the queries per system")
    args = parser.parse_args(argv)

    from gmprep.common.settings import load_settings
    from gmprep.kg.embedder import shared_embedder
    from gmprep.kg.search import Searcher
    from gmprep.kg.store import Store

    queries = QUERIES
    if args.questions:
        queries = [json.loads(line)["question"] for line in args.questions.read_text().splitlines() if line.strip()]
    settings = load_settings(None, {"store_dir": str(args.store)} if args.store else None)
    result: dict = {"queries": len(queries), "repeat": args.repeat}
    result["build"] = bench_build(args.build)
    with Store.open(settings.store_dir, create=False) as store:
        searcher = Searcher.from_settings(store, settings)
        t0 = time.perf_counter()
        searcher.search("warm up the name index, embedder and reranker", k=10)
        result["warmup_seconds"] = round(time.perf_counter() - t0, 2)
        from gmprep.kg import threads

        result["query_threads"] = threads.query_threads()
        result["cores"] = threads.cores()
        # first pass over queries it has not seen: per-entry caches (paragraph links) start empty
        cold = percentiles(timed(lambda q: searcher.search(q, k=10, rerank=True), queries, 1))
        result["search"] = {
            "rerank_first_pass": cold,
            "rerank": percentiles(timed(lambda q: searcher.search(q, k=10, rerank=True), queries, args.repeat)),
            "no_rerank": percentiles(timed(lambda q: searcher.search(q, k=10, rerank=False), queries, args.repeat)),
            # baseline: the same search with one query's model calls on one thread, the reranker's pairs in
            # one shard (before kg/threads.shards)
            "rerank_one_thread": _one_thread(lambda: percentiles(
                timed(lambda q: searcher.search(q, k=10, rerank=True), queries, args.repeat))),
            # baseline: the same search without the link slot (search.link_slot) and its extra reranker pairs
            "rerank_no_link_slot": _without_link_slot(searcher, lambda: percentiles(
                timed(lambda q: searcher.search(q, k=10, rerank=True), queries, args.repeat))),
            "baseline_bm25_only": percentiles(timed(lambda q: store.bm25(q, 10), queries, args.repeat)),
            "rerank_top": settings.search.rerank_top,
            "rerank_max_length": settings.search.rerank_max_length,
            "reranker": str(searcher.reranker.path) if searcher.reranker else None,
        }
        result["vectors"] = bench_vectors(store, shared_embedder(settings.device), queries)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
