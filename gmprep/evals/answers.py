"""``gmprep eval answers``: run labelled questions through ``answer_question`` and score the answers.

Per question: outcome, cited ids, citation recall at 5 against the gold ids (``any``: one gold id in
the first five citations; ``all``: every gold id), whether an unanswerable question was declined,
latency and tokens. ``--rewrite-vs-concat`` measures, for the follow-up questions only, retrieval
recall@5 of the model's rewritten question against the concatenated-history baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from gmprep.common.errors import GmprepError
from gmprep.core.agents.support import Passage
from gmprep.evals.faithfulness import citation_precision
from gmprep.evals.questions import Question, load_questions
from gmprep.kg.render import passage_text

K = 5
# kinds whose questions the books cannot answer: "unanswerable" (dev / held-out sets) and "not_in_corpus"
# (bench/data/not-in-corpus.jsonl: PF2e rules whose text the bundled corpus lacks)
UNANSWERABLE_KINDS = ("unanswerable", "not_in_corpus")


class QuestionResult(BaseModel):
    """How one question went."""

    id: str
    kind: str
    outcome: str
    cited: list[str]
    declined: bool  # not_in_books or not_in_corpus
    not_in_corpus: bool = False
    recall_at_5: float | None  # None for unanswerable questions
    ms: float
    tokens_in: int
    tokens_out: int
    tokens_cached: int = 0  # prompt tokens the backend reused from its prefix cache
    standalone: str = ""
    text: str = ""  # the answer as the user reads it
    # the passages the answer was given, numbered in this order ([1] is the first; without a sources
    # callback, the cited ones): what the support check reads beside each sentence
    passages: list[Passage] = Field(default_factory=list)
    # the ids the answer text cites ([n] markers; Answer.used), where the backend says; else the citations
    used: list[str] = Field(default_factory=list)
    citation_precision: float | None = None  # share of the used ids that are gold (answerable, citing)
    used_recall: float | None = None  # the gold (any / all) among the used ids
    support: dict | None = None  # the support check's summary (--faithfulness; answered outcomes)
    backend: str = ""


def recall_hit(ranked: list[str], gold: list[str], mode: str, k: int = K) -> float:
    """1.0 when the top ``k`` of ``ranked`` hold the gold (any / all), else 0.0."""
    top = set(ranked[:k])
    ok = all(g in top for g in gold) if mode == "all" else any(g in top for g in gold)
    return 1.0 if ok else 0.0


def reciprocal_rank(ranked: list[str], gold: list[str], mode: str, k: int = K) -> float:
    """1 / place at which the top ``k`` first holds the gold (any / all), 0.0 when it never does."""
    for place in range(1, min(k, len(ranked)) + 1):
        if recall_hit(ranked, gold, mode, k=place):
            return 1.0 / place
    return 0.0


def passages_for(store, ids: list[str]) -> list[Passage]:
    """The entry text of every id, in order (the whole entry: the model saw an excerpt of it)."""
    nodes = store.get_many(ids)
    return [Passage(source_id=i, name=nodes[i].name, text=passage_text(nodes[i])) for i in ids if i in nodes]


def _takes_sources() -> bool:
    """Whether ``answer_question`` hands over the passages it will answer from (``on_sources``): then the
    answer's ``[n]`` markers number those passages; before that, the answer cites source ids."""
    import inspect

    from gmprep.core.answer import answer_question

    return "on_sources" in inspect.signature(answer_question).parameters


def _history(q: Question):
    from gmprep.core.answer import ChatTurn

    return [ChatTurn(role=t["role"], content=t["content"]) for t in q.history]


async def evaluate(questions: list[Question], searcher, settings, progress: bool = True,
                   on_result: Callable[[QuestionResult], None] | None = None) -> list[QuestionResult]:
    """Answer every question in turn (one at a time: latency is per answer). ``on_result`` gets each
    result as soon as it is made (a long model run keeps what it did when stopped)."""
    from gmprep.core.answer import answer_question

    out: list[QuestionResult] = []
    with_sources = _takes_sources()
    for i, q in enumerate(questions, 1):
        shown: list[str] = []
        extra: dict[str, Any] = {}
        if with_sources:
            extra["on_sources"] = lambda items, shown=shown: shown.extend(
                getattr(x, "source_id", str(x)) for x in items)
        t0 = time.perf_counter()
        ans = await answer_question(q.question, history=_history(q), searcher=searcher, settings=settings, **extra)
        ms = (time.perf_counter() - t0) * 1000
        cited = [c.source_id for c in ans.citations]
        used = list(getattr(ans, "used", None) or cited)
        answerable = q.kind not in UNANSWERABLE_KINDS
        res = QuestionResult(
            id=q.id, kind=q.kind, outcome=ans.outcome, cited=cited, declined=ans.declined,
            not_in_corpus=ans.outcome == "not_in_corpus",
            recall_at_5=recall_hit(cited, q.gold, q.gold_mode) if answerable else None,
            ms=ms, tokens_in=ans.tokens_in, tokens_out=ans.tokens_out,
            tokens_cached=sum(s.tokens_cached for s in ans.steps), standalone=ans.question,
            text=ans.text, passages=passages_for(searcher.store, list(dict.fromkeys(shown or cited))),
            used=used, citation_precision=citation_precision(used, q.gold) if answerable else None,
            used_recall=recall_hit(used, q.gold, q.gold_mode, k=len(used) or 1) if answerable and used else None,
        )
        out.append(res)
        if on_result:
            on_result(res)
        if progress:
            mark = "declined" if res.declined else (f"r@5={res.recall_at_5:.0f}" if answerable else "ANSWERED")
            print(f"[{i}/{len(questions)}] {q.id} {q.kind:<12} {res.outcome:<12} {mark:<9} {ms / 1000:6.1f}s",
                  file=sys.stderr, flush=True)
    return out


def _pct(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))]


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(statistics.fmean(kept), 4) if kept else None


def check_support(results: list[QuestionResult], checker) -> None:
    """Run the support check on every answered result (``support`` filled in place)."""
    from gmprep.evals.faithfulness import scored, support_summary

    for r in results:
        if scored(r.model_dump(include={"outcome", "text"})):
            r.support = support_summary(checker.check(r.text, r.passages, given=r.standalone))


def summarize(results: list[QuestionResult], backend: str) -> dict:
    """Totals: answerable citation recall@5 and false declines (false not_in_corpus apart), unanswerable
    declines (not_in_corpus apart), by kind, latency."""
    ans = [r for r in results if r.kind not in UNANSWERABLE_KINDS]
    una = [r for r in results if r.kind in UNANSWERABLE_KINDS]
    by_kind: dict[str, dict] = {}
    for kind in sorted({r.kind for r in results}):
        rs = [r for r in results if r.kind == kind]
        entry: dict = {"n": len(rs)}
        if kind in UNANSWERABLE_KINDS:
            entry["declined"] = round(sum(r.declined for r in rs) / len(rs), 4)
            entry["not_in_corpus"] = round(sum(r.not_in_corpus for r in rs) / len(rs), 4)
        else:
            entry["citation_recall_at_5"] = round(statistics.fmean(r.recall_at_5 or 0.0 for r in rs), 4)
            entry["false_declines"] = sum(r.declined for r in rs)
            entry["false_not_in_corpus"] = sum(r.not_in_corpus for r in rs)
        by_kind[kind] = entry
    outcomes: dict[str, int] = {}
    for r in results:
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
    ms = [r.ms for r in results]
    return {
        "n": len(results),
        "backend": backend,
        "answerable": {
            "n": len(ans),
            "citation_recall_at_5": round(statistics.fmean(r.recall_at_5 or 0.0 for r in ans), 4) if ans else None,
            "false_decline_rate": round(sum(r.declined for r in ans) / len(ans), 4) if ans else None,
            "false_not_in_corpus_rate": round(sum(r.not_in_corpus for r in ans) / len(ans), 4) if ans else None,
            # mean over the answerable questions whose answer cites anything: share of the cited ids that are gold
            "citation_precision": _mean([r.citation_precision for r in ans]),
            # gold among the passages the text actually cites (answerable questions whose answer cites any)
            "used_recall": _mean([r.used_recall for r in ans]),
        },
        "unanswerable": {
            "n": len(una),
            "declined": round(sum(r.declined for r in una) / len(una), 4) if una else None,
            "not_in_corpus": round(sum(r.not_in_corpus for r in una) / len(una), 4) if una else None,
        },
        "by_kind": by_kind,
        "outcomes": outcomes,
        "latency_ms": {"p50": round(_pct(ms, 50), 1), "p95": round(_pct(ms, 95), 1)},
        "tokens": {"in": sum(r.tokens_in for r in results), "out": sum(r.tokens_out for r in results),
                   "cached": sum(r.tokens_cached for r in results)},
    } | ({"faithfulness": _faith_totals(results)} if any(r.support for r in results) else {})


def _faith_totals(results: list[QuestionResult]) -> dict:
    from gmprep.evals.faithfulness import totals

    return totals([r.model_dump() for r in results])


async def rewrite_vs_concat(questions: list[Question], searcher, settings) -> dict:
    """Follow-up questions: retrieval recall@1 and @5 of the model's rewrite vs the concatenated-history query."""
    from gmprep.core.agents.pipeline import AgentPipeline
    from gmprep.core.answer import context_for
    from gmprep.core.llm.extractive import followup_query
    from gmprep.core.llm.factory import backend_for
    from gmprep.kg.models import SearchFilters

    llm = backend_for(settings.llm, settings.device)
    if llm is None:
        raise GmprepError("--rewrite-vs-concat needs a model backend (--backend llamacpp|transformers|openai)")
    pipeline = AgentPipeline(llm, context_for(searcher, settings))
    filters = SearchFilters(origins=["corpus:"])
    rows: list[dict[str, Any]] = []
    for q in [q for q in questions if q.history]:
        hist = _history(q)
        concat = followup_query(q.question, hist)
        t0 = time.perf_counter()
        trace: list = []
        standalone = await pipeline._standalone(q.question, hist, trace, None)
        ms = (time.perf_counter() - t0) * 1000
        full = " ".join([t.content for t in hist] + [q.question])

        def ranked(query: str) -> list[str]:
            return [h.source_id for h in searcher.search(query, k=K, filters=filters)]

        variants = {"question_only": q.question, "concat_last_user_turn": concat, "concat_full_history": full,
                    "rewrite_step": standalone}
        lists = {name: ranked(text) for name, text in variants.items()}
        # what the pipeline searches for a one-node follow-up: the rewrite fused with the conversation's phrasing
        lists["rewrite_fused_with_concat"] = [h.source_id for h in searcher.search_fused(
            [standalone, concat], k=K, filters=filters)]
        row = {"id": q.id, "concat": concat, "rewrite": standalone, "rewrite_ms": round(ms, 1)}
        for name, top in lists.items():
            row[f"r1_{name}"] = recall_hit(top, q.gold, q.gold_mode, k=1)
            row[f"r5_{name}"] = recall_hit(top, q.gold, q.gold_mode)
            row[f"rr_{name}"] = reciprocal_rank(top, q.gold, q.gold_mode)
        rows.append(row)
        print(f"{q.id} alone={row['r5_question_only']:.0f} concat={row['r5_concat_last_user_turn']:.0f} "
              f"full={row['r5_concat_full_history']:.0f} rewrite={row['r5_rewrite_step']:.0f} "
              f"fused={row['r5_rewrite_fused_with_concat']:.0f} (@1 concat={row['r1_concat_last_user_turn']:.0f} "
              f"rewrite={row['r1_rewrite_step']:.0f} fused={row['r1_rewrite_fused_with_concat']:.0f}) "
              f"{ms / 1000:5.1f}s  {standalone!r}", file=sys.stderr, flush=True)
    n = len(rows) or 1
    names = ("question_only", "concat_last_user_turn", "concat_full_history", "rewrite_step", "rewrite_fused_with_concat")
    return {
        "n": len(rows),
        "backend": settings.llm.backend,
        "recall_at_5": {name: round(sum(r[f"r5_{name}"] for r in rows) / n, 4) for name in names},
        # At 5 both can saturate (every gold entry found); recall@1 shows whether the query points at it.
        "recall_at_1": {name: round(sum(r[f"r1_{name}"] for r in rows) / n, 4) for name in names},
        "mrr_at_5": {name: round(sum(r[f"rr_{name}"] for r in rows) / n, 4) for name in names},
        "rewrite_ms_p50": round(_pct([r["rewrite_ms"] for r in rows], 50), 1),
        "questions": rows,
    }


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``gmprep eval answers``."""
    from gmprep.commands.ask import add_backend_arguments

    p.add_argument("--questions", help="questions JSONL (e.g. ../shared/eval/questions-dev.jsonl); needed unless "
                   "--answers-in is given")
    p.add_argument("--json", action="store_true", help="print the totals as JSON")
    p.add_argument("--limit", type=int, help="first N questions (after --kinds / --sample)")
    p.add_argument("--sample", type=int, help="N evenly spaced questions (keeps each kind's share)")
    p.add_argument("--kinds", nargs="+",
                   help="only these kinds (lookup, named, multi-hop, followup, unanswerable, legacy, not_in_corpus)")
    p.add_argument("--out", help="write per-question results (JSONL) here")
    p.add_argument("--run-out", help="write a score.py run file ({id, ranked, declined} per line) here")
    p.add_argument("--faithfulness", action="store_true",
                   help="support check of every answered question's sentences against the passages they cite, "
                        "citation precision, and the extractive answer on the same questions as the baseline")
    p.add_argument("--answers-in", nargs="+", metavar="JSONL",
                   help="score these saved answers (--out files; ids unique across them) instead of generating")
    p.add_argument("--judgements", nargs="+", metavar="JSONL",
                   help="hand judgements JSONL (one or more): report the support check's agreement with them")
    p.add_argument("--fit-support", metavar="JSON",
                   help="fit the support check's weights on the judgements' calibration part and write them here")
    p.add_argument("--rewrite-vs-concat", action="store_true",
                   help="follow-ups only: retrieval recall@5 of the rewrite step vs the concatenated history")
    add_backend_arguments(p)


def _now() -> str:
    import datetime

    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _manifest(args: argparse.Namespace, settings, n: int) -> dict:
    """How an --out file was made: the command, the code's commit, the model, when."""
    import subprocess

    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
                                cwd=Path(__file__).resolve().parent).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                                    text=True, cwd=Path(__file__).resolve().parent).stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "unknown", False
    return {"command": "gmprep " + " ".join(sys.argv[1:]), "commit": commit, "uncommitted_changes": dirty,
            "backend": settings.llm.backend, "model_path": settings.llm.model_path, "questions": n,
            "started": _now()}


def _recount_citations(results: list[QuestionResult], questions: list[Question]) -> None:
    """Saved answers from before ``used`` was kept: read the cited ids back from the text's markers and
    score them against the gold of ``questions``."""
    from gmprep.core.agents.support import resolve, split_sentences

    gold = {q.id: q for q in questions}
    for r in results:
        q = gold.get(r.id)
        if r.used or q is None or r.kind in UNANSWERABLE_KINDS:
            continue
        r.used = resolve([m for s in split_sentences(r.text) for m in s.markers], r.passages) or list(r.cited)
        r.citation_precision = citation_precision(r.used, q.gold)
        r.used_recall = recall_hit(r.used, q.gold, q.gold_mode, k=len(r.used) or 1) if r.used else None


def _load_results(path: Path) -> list[QuestionResult]:
    if not path.is_file():
        raise GmprepError(f"answers file {path} not found")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(QuestionResult.model_validate_json(line))
            except ValueError as exc:
                raise GmprepError(f"{path}:{n}: not an answer line ({exc})") from exc
    return out


def run(args: argparse.Namespace) -> int:
    """Entry point of ``gmprep eval answers``."""
    from gmprep.commands import open_searcher
    from gmprep.commands.ask import settings_with_backend

    settings = settings_with_backend(args)
    if not args.questions and not args.answers_in:
        raise GmprepError("give --questions (to generate answers) or --answers-in (to score saved ones)")
    questions = load_questions(Path(args.questions), args.kinds, args.limit, args.sample) if args.questions else []
    saved = [r for path in args.answers_in for r in _load_results(Path(path))] if args.answers_in else None
    if saved is not None and questions:
        ids = {r.id for r in saved}
        questions = [q for q in questions if q.id in ids]
    backend: str = settings.llm.backend
    baseline: list[QuestionResult] = []
    store, searcher = open_searcher(settings)
    with store:
        if args.rewrite_vs_concat:
            report = asyncio.run(rewrite_vs_concat(questions, searcher, settings))
            print(json.dumps(report, indent=2))
            return 0
        if saved is not None:
            results = saved
            backend = next((r.backend for r in saved if r.backend), backend)
            _recount_citations(results, questions)
        else:
            manifest = _manifest(args, settings, len(questions))  # the code as it was when generation began
            out = open(args.out, "w", encoding="utf-8") if args.out else None  # noqa: SIM115  # closed below

            def keep(r: QuestionResult) -> None:
                r.backend = backend
                if out:
                    out.write(r.model_dump_json() + "\n")
                    out.flush()

            try:
                results = asyncio.run(evaluate(questions, searcher, settings, on_result=keep))
            finally:
                if out:
                    out.close()
            if args.out:
                manifest["finished"] = _now()
                Path(args.out).with_suffix(".manifest.json").write_text(json.dumps(manifest, indent=1) + "\n",
                                                                        encoding="utf-8")
        if args.faithfulness and backend != "extractive" and questions:
            print("extractive baseline on the same questions", file=sys.stderr, flush=True)
            extractive = settings.merged({"llm": {"backend": "extractive"}})
            baseline = asyncio.run(evaluate(questions, searcher, extractive))
        if args.faithfulness or args.judgements or args.fit_support:
            from gmprep.core.agents.support import SupportChecker

            checker = SupportChecker(device=settings.device)
            if args.fit_support:
                _fit(results, args, checker)
            check_support(results, checker)
            check_support(baseline, checker)
    totals = summarize(results, backend)
    if baseline:
        totals["baseline"] = summarize(baseline, "extractive")
    if args.judgements:
        from gmprep.evals.faithfulness import agreement

        totals["agreement"] = agreement([r.model_dump() for r in results], _judgements(args.judgements))
    if args.out and (args.faithfulness or saved is None):
        Path(args.out).write_text("".join(r.model_dump_json() + "\n" for r in results), encoding="utf-8")
    if args.run_out:
        Path(args.run_out).write_text(
            "".join(json.dumps({"id": r.id, "ranked": r.cited, "declined": r.declined}) + "\n" for r in results),
            encoding="utf-8",
        )
    if args.json:
        print(json.dumps(totals, indent=2))
    else:
        _print(totals)
    return 0


# the feature sets the fit compares (see docs/faithfulness.md): lexical, each model alone, lexical with models
FEATURE_SETS = (
    ("coverage",),
    ("coverage", "numbers_anchored"),
    ("cross_encoder",),
    ("cosine",),
    ("coverage", "numbers_anchored", "cross_encoder"),
    ("coverage", "numbers_anchored", "cosine"),
    ("coverage", "numbers_anchored", "cross_encoder", "cosine"),
    ("local_coverage",),
    ("coverage", "local_coverage"),
    ("local_coverage", "cross_encoder"),
    ("coverage", "local_coverage", "cross_encoder"),
)


def _judgements(paths: list[str]) -> list:
    from gmprep.evals.faithfulness import load_judgements

    return [j for path in paths for j in load_judgements(Path(path))]


def _fit(results: list[QuestionResult], args: argparse.Namespace, checker) -> None:
    from gmprep.evals.faithfulness import fit, write_model

    if not args.judgements:
        raise GmprepError("--fit-support needs --judgements")
    model, candidates = fit([r.model_dump() for r in results], _judgements(args.judgements), checker,
                            FEATURE_SETS)
    write_model(model, Path(args.fit_support))
    for c in candidates:
        print(f"  fit {'+'.join(c['features']):<50} calibrate cv={c['calibrate_cv']} fitted={c['calibrate']} "
              f"test={c['test']}", file=sys.stderr)
    print(f"support weights ({'+'.join(model.features)}) written to {args.fit_support}", file=sys.stderr)
    checker.model = model


def _print(totals: dict) -> None:
    for t in [totals, *([totals["baseline"]] if "baseline" in totals else [])]:
        a, u = t["answerable"], t["unanswerable"]
        print(f"backend {t['backend']}: {t['n']} questions")
        print(f"  answerable   n={a['n']} citation recall@5={a['citation_recall_at_5']} precision="
              f"{a['citation_precision']} false declines={a['false_decline_rate']}"
              f" (false not_in_corpus={a['false_not_in_corpus_rate']})")
        print(f"  unanswerable n={u['n']} declined={u['declined']} (as not_in_corpus={u['not_in_corpus']})")
        for kind, e in t["by_kind"].items():
            print(f"  {kind:<13} {e}")
        if "faithfulness" in t:
            print(f"  faithfulness {t['faithfulness']}")
        print(f"  latency p50={t['latency_ms']['p50'] / 1000:.1f}s p95={t['latency_ms']['p95'] / 1000:.1f}s")
    if "agreement" in totals:
        for part, e in totals["agreement"].items():
            print(f"  agreement with hand judgements ({part}): {e}")
