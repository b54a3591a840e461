"""Answer benchmark: the extractive answer (baseline) and the local model in the same run; prints one JSON object.

    python bench/llm_answers.py [--store DIR] [--questions FILE] [--n N] [--backends extractive,llamacpp]
                                [--model-path GGUF] [--threads T] [--out FILE]

The same N questions (evenly sampled from the file, every kind keeping its share) go through
``answer_question`` once per backend. Per backend it reports:

- ``timings_ms``: p50/p95 of ``sources`` (question -> sources sent), ``first_token`` (-> first token of
  the answer body) and ``total``, for single-need and multi-need questions apart (the split is the
  pipeline's own structural one, ``core/agents/needs.split_needs``), over answered questions (declines
  make no model call and are counted apart);
- ``citation_recall_at_5``: gold in the first five sources shown (``citations``) and in the sources
  the text cites (``used``), with ``gmprep.evals.answers.recall_hit`` (any / all per question);
- ``declines``: answerable questions declined (false declines) and unanswerable ones declined;
- ``model_calls`` and tokens per answer (from the trace), the model's load time, and the process RSS
  after the model is loaded and at the end (``rss_mb``, ``peak_rss_mb``).

Before the timed questions each backend answers one warm-up question (not counted; ``--no-warmup``
counts the cold start instead): it loads the retrieval models and evaluates the answer prompt's fixed
prefix (system + example), which later questions reuse from llama.cpp's cache, as a running server does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEV = REPO.parent / "shared" / "eval" / "questions-dev.jsonl"


def rss_mb() -> float:
    """The process's current resident memory (MiB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return round(s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))], 1)


def settings_for(base, backend: str, model_path: str | None, threads: int | None):
    from gmprep.core.llm.factory import resolve_backend

    if backend == "extractive":
        return base.merged({"llm": {"backend": "extractive"}})
    llm = {"backend": backend, "model_path": model_path, "n_threads": threads}
    settings = base.merged({"llm": llm})
    choice = resolve_backend(settings)  # the installed default model when no --model-path
    return settings.merged({"llm": {"model_path": choice.model, "n_threads": choice.threads}})


WARMUP = "What does the off-guard condition do?"


async def run_backend(questions, searcher, settings, progress: bool, warmup: bool = True) -> dict:
    from gmprep.core.agents.needs import split_needs
    from gmprep.core.answer import ChatTurn, answer_question
    from gmprep.core.llm.factory import backend_for
    from gmprep.evals.answers import UNANSWERABLE_KINDS, recall_hit

    load_ms = 0.0
    if settings.llm.backend != "extractive":
        t0 = time.perf_counter()
        llm = backend_for(settings.llm, settings.device)
        if llm is not None and hasattr(llm, "server"):
            llm.server  # noqa: B018 - load the GGUF now, outside the per-question timings
        load_ms = (time.perf_counter() - t0) * 1000
    if warmup:
        await answer_question(WARMUP, history=[], searcher=searcher, settings=settings)
    rss_loaded = rss_mb()
    rows = []
    for i, q in enumerate(questions, 1):
        history = [ChatTurn(role=t["role"], content=t["content"]) for t in q.history]
        ans = await answer_question(q.question, history=history, searcher=searcher, settings=settings)
        answerable = q.kind not in UNANSWERABLE_KINDS
        shown = [c.source_id for c in ans.citations]
        row = {
            "id": q.id, "kind": q.kind, "multi_need": bool(split_needs(q.question)), "outcome": ans.outcome,
            "declined": ans.declined, "answerable": answerable, "timings_ms": ans.timings_ms,
            "recall_shown": recall_hit(shown, q.gold, q.gold_mode) if answerable else None,
            "recall_used": recall_hit(ans.used, q.gold, q.gold_mode) if answerable else None,
            "model_calls": sum(1 for s in ans.steps if s.tokens_in or s.tokens_out),
            "tokens_in": ans.tokens_in, "tokens_out": ans.tokens_out,
            "tokens_cached": sum(s.tokens_cached for s in ans.steps),
            # what was said and cited, so a run can be read (and judged) afterwards
            "question": q.question, "gold": q.gold, "shown": shown, "used": ans.used, "text": ans.text,
            # the support check's input (the model's text as generated, its question and passages), to replay it
            "checked": next((s.output for s in ans.steps if s.name == "support_check"), None),
        }
        rows.append(row)
        if progress:
            t = ans.timings_ms
            print(f"[{settings.llm.backend} {i}/{len(questions)}] {q.id} {q.kind:<12} {ans.outcome:<13} "
                  f"sources {t['sources'] / 1000:5.1f}s first {t['first_token'] / 1000:5.1f}s "
                  f"total {t['total'] / 1000:5.1f}s calls {row['model_calls']}", file=sys.stderr, flush=True)
    return {"load_ms": round(load_ms), "rss_mb_after_load": round(rss_loaded), "rows": rows}


def summarize(run: dict) -> dict:
    rows = run["rows"]
    out: dict = {"load_ms": run["load_ms"], "rss_mb_after_load": run["rss_mb_after_load"], "n": len(rows)}
    for group, pick in (("single_need", False), ("multi_need", True)):
        answered = [r for r in rows if r["multi_need"] == pick and not r["declined"]]
        out[group] = {"n": len(answered)} | {
            key: {"p50": pct([r["timings_ms"][key] for r in answered], 50),
                  "p95": pct([r["timings_ms"][key] for r in answered], 95)}
            for key in ("sources", "first_token", "total")
        }
        out[group]["model_calls_p50"] = pct([r["model_calls"] for r in answered], 50)
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    out["citation_recall_at_5"] = {
        "shown": round(statistics.fmean(r["recall_shown"] for r in ans), 3) if ans else None,
        "used": round(statistics.fmean(r["recall_used"] for r in ans), 3) if ans else None,
        "n": len(ans),
    }
    out["declines"] = {"false_declines": sum(r["declined"] for r in ans), "answerable": len(ans),
                       "unanswerable_declined": sum(r["declined"] for r in una), "unanswerable": len(una)}
    out["outcomes"] = {o: sum(r["outcome"] == o for r in rows) for o in sorted({r["outcome"] for r in rows})}
    out["tokens_per_answer"] = {k: pct([r[k] for r in rows if r["model_calls"]], 50)
                                for k in ("tokens_in", "tokens_cached", "tokens_out")}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", help="store folder (default: the settings' store)")
    ap.add_argument("--questions", type=Path, default=DEV)
    ap.add_argument("--n", type=int, default=40, help="questions, evenly sampled (default 40)")
    ap.add_argument("--backends", default="extractive,llamacpp")
    ap.add_argument("--model-path", help="GGUF for llamacpp (default: the installed default model)")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--out", type=Path, help="also write the JSON (with per-question rows) here")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--no-warmup", action="store_true", help="time the cold start too (no warm-up question)")
    args = ap.parse_args(argv)

    from gmprep.common.settings import load_settings
    from gmprep.evals.questions import load_questions
    from gmprep.kg.search import Searcher
    from gmprep.kg.store import Store

    base = load_settings(None, {"store_dir": args.store} if args.store else None, workspace_store=False)
    questions = load_questions(args.questions, sample=args.n)
    report: dict = {"questions": str(args.questions), "n": len(questions), "backends": {}}
    runs = {}
    with Store.open(base.store_dir, create=False) as store:
        searcher = Searcher.from_settings(store, base)
        for backend in args.backends.split(","):
            settings = settings_for(base, backend, args.model_path, args.threads)
            run = asyncio.run(run_backend(questions, searcher, settings, not args.quiet, not args.no_warmup))
            runs[backend] = run
            report["backends"][backend] = {"model": Path(settings.llm.model_path).name if settings.llm.model_path
                                           else "", **summarize(run)}
    report["rss_mb"] = round(rss_mb())
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps({**report, "rows": {b: r["rows"] for b, r in runs.items()}}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
