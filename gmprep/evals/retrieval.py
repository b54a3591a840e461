"""``gmprep eval retrieval``: recall@k and MRR@10 of search on labelled questions, with baselines.

Systems measured in one run on the same questions:

- ``system``: the configured hybrid search (names, BM25 + vectors, rerank, graph expansion);
- ``no_rerank``: the same without the cross-encoder;
- ``baselines.bm25``: FTS5 BM25 alone;
- ``baselines.dense``: plain embedding top-k over entry text *without* headers (``common.text.plain_text``), no
  names, no rerank, no graph. Those vectors are computed once and cached in the store folder.

Metrics follow the reference scorer (``score.py`` in the eval folder): over answerable questions,
recall@k ("all" questions need every gold id in the top k) and MRR@10 ("all": 1 + the non-gold ids
ranked above the last gold id). ``followup`` questions are searched with their history in front.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from gmprep.commands import settings_from_args
from gmprep.common.errors import GmprepError
from gmprep.common.settings import SearchSettings
from gmprep.evals.questions import Question, load_questions

KS = (1, 5, 10)
DENSE_CACHE = "dense_plain_baseline.npz"


class KindMetrics(BaseModel):
    """Recall and MRR over one group of answerable questions."""

    n: int = 0
    recall_at_1: float = 0.0
    recall_at_5: float = 0.0
    recall_at_10: float = 0.0
    mrr_at_10: float = 0.0


class SystemMetrics(KindMetrics):
    """Metrics of one system: overall, per kind, and search latency."""

    by_kind: dict[str, KindMetrics] = Field(default_factory=dict)
    latency_ms: dict[str, float] = Field(default_factory=dict)


def rank_of_hit(gold: list[str], ranked: list[str], mode: str, k: int) -> int | None:
    """Effective 1-based rank at which the question is answered in the top ``k`` (as score.py defines it)."""
    top = ranked[:k]
    pos = sorted(top.index(g) + 1 for g in set(gold) if g in top)
    if mode == "any":
        return pos[0] if pos else None
    if len(pos) != len(set(gold)):
        return None
    return pos[-1] - (len(pos) - 1)


def _metrics(questions: list[Question], runs: dict[str, list[str]]) -> KindMetrics:
    m = KindMetrics(n=len(questions))
    if not questions:
        return m
    for q in questions:
        ranked = runs.get(q.id, [])
        for k in KS:
            if rank_of_hit(q.gold, ranked, q.gold_mode, k) is not None:
                setattr(m, f"recall_at_{k}", getattr(m, f"recall_at_{k}") + 1)
        rk = rank_of_hit(q.gold, ranked, q.gold_mode, 10)
        m.mrr_at_10 += 1.0 / rk if rk else 0.0
    for k in KS:
        setattr(m, f"recall_at_{k}", round(getattr(m, f"recall_at_{k}") / m.n, 4))
    m.mrr_at_10 = round(m.mrr_at_10 / m.n, 4)
    return m


def score_system(questions: list[Question], runs: dict[str, list[str]], latencies: list[float]) -> SystemMetrics:
    """Overall and per-kind metrics over the answerable questions, plus latency percentiles."""
    answerable = [q for q in questions if q.gold]
    overall = _metrics(answerable, runs)
    out = SystemMetrics(**overall.model_dump())
    for kind in sorted({q.kind for q in answerable}):
        out.by_kind[kind] = _metrics([q for q in answerable if q.kind == kind], runs)
    if latencies:
        arr = np.asarray(latencies) * 1000.0
        out.latency_ms = {"p50": round(float(np.percentile(arr, 50)), 1), "p95": round(float(np.percentile(arr, 95)), 1)}
    return out


def run_system(questions: list[Question], fn: Callable[[str], list[str]]) -> tuple[dict[str, list[str]], list[float]]:
    """Ranked ids and wall time of ``fn`` for every question."""
    runs, times = {}, []
    for q in questions:
        t0 = time.perf_counter()
        runs[q.id] = fn(q.search_text())
        times.append(time.perf_counter() - t0)
    return runs, times


def dense_baseline(store, embedder, cache_dir: Path | None = None) -> tuple[list[str], np.ndarray]:
    """Entry ids and embeddings of their plain text (no header), cached in ``cache_dir`` (default: the
    store folder) and recomputed when the entries' texts change."""
    from gmprep.common.text import plain_text

    nodes = list(store.iter_nodes(kinds=("entry",)))
    ids = [n.node_id for n in nodes]
    texts = [plain_text(n) for n in nodes]
    digest = hashlib.sha256("\x00".join(f"{i}\x01{t}" for i, t in zip(ids, texts, strict=True)).encode()).hexdigest()[:16]
    cache = Path(cache_dir or store.root) / DENSE_CACHE
    cache.parent.mkdir(parents=True, exist_ok=True)
    if cache.is_file():
        try:
            data = np.load(cache, allow_pickle=False)
            if str(data["digest"]) == digest and data["vectors"].shape[0] == len(ids):
                return ids, data["vectors"]
        except (OSError, ValueError, KeyError):
            pass
    vecs = embedder.encode(texts, batch_size=64)
    tmp = cache.with_suffix(".tmp.npz")
    np.savez(tmp, vectors=vecs, digest=np.asarray(digest))
    tmp.replace(cache)
    return ids, vecs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``gmprep eval retrieval``."""
    parser.add_argument("--questions", type=Path, required=True, help="questions JSON Lines (eval README format)")
    parser.add_argument("--k", type=int, default=10, help="how many hits each system returns (default 10)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    parser.add_argument("--json", action="store_true", help="print the metrics as JSON")
    parser.add_argument("--run-out", type=Path, default=None, help="write the system's ranking as a score.py run file")
    parser.add_argument("--no-baselines", action="store_true", help="skip the BM25 and dense baselines")
    parser.add_argument("--search", action="append", default=[], metavar="KEY=VALUE",
                        help="override a search setting for this run, e.g. rerank=true, rerank_top=12 (repeatable)")
    parser.add_argument("--dense-cache", type=Path, default=None,
                        help="folder for the dense baseline's vectors (default: the store folder)")


def run(args: argparse.Namespace) -> int:
    """Run every system over the questions and print the metrics (table or JSON)."""
    from gmprep.kg.search import Searcher
    from gmprep.kg.store import Store

    settings = settings_from_args(args)
    if args.search:
        settings = settings.merged({"search": _overrides(args.search)})
    questions = load_questions(args.questions, limit=args.limit)
    if not questions:
        raise GmprepError(f"no questions in {args.questions}")
    with Store.open(settings.store_dir, create=False) as store:
        if not store.entry_count():
            raise GmprepError(f"the index in {settings.store_dir} is empty: run `gmprep index build` first")
        searcher = Searcher.from_settings(store, settings)
        k = args.k
        result: dict = {}

        def system(text: str, rerank: bool | None = None) -> list[str]:
            return [h.node_id for h in searcher.search(text, k=k, rerank=rerank)]

        # warm up the models so the first question's latency is not the model load
        system("warm up", None)
        sys_runs, sys_t = run_system(questions, system)
        result["system"] = score_system(questions, sys_runs, sys_t).model_dump()
        result["system"]["rerank"] = bool(settings.search.rerank and searcher.reranker is not None)
        result["system"]["settings"] = settings.search.model_dump()
        nr_runs, nr_t = run_system(questions, lambda t: system(t, rerank=False))
        result["no_rerank"] = score_system(questions, nr_runs, nr_t).model_dump()
        if not args.no_baselines:
            result["baselines"] = _baselines(store, searcher, questions, k, args.dense_cache)
        if searcher.warnings:
            result["warnings"] = searcher.warnings
        result["questions"] = {"file": str(args.questions), "total": len(questions),
                               "answerable": sum(1 for q in questions if q.gold)}
    if args.run_out:
        args.run_out.parent.mkdir(parents=True, exist_ok=True)
        with open(args.run_out, "w", encoding="utf-8") as fh:
            for q in questions:
                fh.write(json.dumps({"id": q.id, "ranked": sys_runs.get(q.id, []), "declined": False}) + "\n")
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_table(result)
    return 0


def _overrides(pairs: list[str]) -> dict:
    """``["rerank=true", "rerank_top=12"]`` -> ``{"rerank": "true", "rerank_top": "12"}`` (pydantic converts)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise GmprepError(f"--search takes KEY=VALUE, not {pair!r}")
        if key.strip() not in SearchSettings.model_fields:
            raise GmprepError(f"unknown search setting {key.strip()!r} (known: {', '.join(SearchSettings.model_fields)})")
        out[key.strip()] = value.strip()
    return out


def _baselines(store, searcher, questions: list[Question], k: int, cache_dir: Path | None) -> dict:
    out = {}
    bm_runs, bm_t = run_system(questions, lambda t: [nid for nid, _ in store.bm25(t, k)])
    out["bm25"] = score_system(questions, bm_runs, bm_t).model_dump()
    embedder = searcher.embedder
    if embedder is None:
        out["dense"] = {"skipped": "the store has no vectors"}
        return out
    ids, vecs = dense_baseline(store, embedder, cache_dir)

    def dense(text: str) -> list[str]:
        q = embedder.encode_query(text)
        sims = vecs @ q
        top = np.argpartition(-sims, min(k, len(sims) - 1))[:k]
        return [ids[i] for i in sorted(top, key=lambda i: -sims[i])]

    d_runs, d_t = run_system(questions, dense)
    out["dense"] = score_system(questions, d_runs, d_t).model_dump()
    return out


def _print_table(result: dict) -> None:
    rows = [("system", result["system"]), ("no_rerank", result["no_rerank"])]
    for name, block in (result.get("baselines") or {}).items():
        if "n" in block:
            rows.append((f"baseline {name}", block))
    w = sys.stdout.write
    w(f"{'system':16s} {'n':>4s} {'R@1':>6s} {'R@5':>6s} {'R@10':>6s} {'MRR@10':>7s} {'p50ms':>7s} {'p95ms':>7s}\n")
    for name, b in rows:
        lat = b.get("latency_ms", {})
        w(f"{name:16s} {b['n']:4d} {b['recall_at_1']:6.3f} {b['recall_at_5']:6.3f} {b['recall_at_10']:6.3f} "
          f"{b['mrr_at_10']:7.3f} {lat.get('p50', 0):7.1f} {lat.get('p95', 0):7.1f}\n")
    w("\nby kind (system):\n")
    for kind, m in result["system"]["by_kind"].items():
        w(f"  {kind:14s} {m['n']:4d} {m['recall_at_1']:6.3f} {m['recall_at_5']:6.3f} {m['recall_at_10']:6.3f} {m['mrr_at_10']:7.3f}\n")
    for msg in result.get("warnings", []):
        w(f"warning: {msg}\n")
