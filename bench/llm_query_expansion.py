"""LLM query expansion at ask time, measured: the local model names the rules a question turns on, and search reads
that beside the question (issue 12's third option; measured, not in the answer path: docs/retrieval.md, "The local
model's expansion of a question").

``expand`` asks the model, per answerable question, for the names of the Pathfinder 2e rules, actions, conditions,
spells, feats or items whose text answers it (at most 40 tokens; resumable). ``score`` compares recall@5 of the plain
search with three ways of reading the expansion: fused by reciprocal rank with the plain query (``Searcher.search_fused``,
as a follow-up's phrasings are), fused with question + expansion, and question + expansion as one query.

    python bench/llm_query_expansion.py expand --questions Q.jsonl [...] --out X.jsonl
    python bench/llm_query_expansion.py score X.jsonl --questions Q.jsonl [...] [--store STORE]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SYSTEM = "You are an expert on the rules of Pathfinder Second Edition (Remaster)."
ASK = ("Name the Pathfinder 2e rules, actions, conditions, spells, feats or items whose text answers this. Reply with "
       "the names only, comma-separated.")


def _questions(paths: list[Path]) -> list[tuple[str, dict]]:
    return [(p.stem, q) for p in paths for q in map(json.loads, p.open(encoding="utf-8"))
            if q.get("kind") not in ("unanswerable", "not_in_corpus") and q.get("gold")]


def expand(args: argparse.Namespace) -> int:
    import xllamacpp

    from gmprep.core.llm.models import installed_model

    model = args.model_path or installed_model()
    if model is None:
        raise SystemExit("llm_query_expansion: no model installed (gmprep model install), or give --model-path")
    done = {json.loads(line)["id"] for line in args.out.open()} if args.out.exists() else set()
    p = xllamacpp.CommonParams()
    p.model.path = str(model)
    p.n_ctx = 4096
    p.cpuparams.n_threads = p.cpuparams_batch.n_threads = args.threads
    p.cache_prompt = True
    p.verbosity = -1
    server = xllamacpp.Server(p)
    with args.out.open("a", encoding="utf-8") as out:
        for name, q in _questions(args.questions):
            if q["id"] in done:
                continue
            msgs = [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": f"A player or game master asks:\n\n{q['question']}\n\n{ASK}"}]
            t0 = time.perf_counter()
            res = server.handle_chat_completions({"messages": msgs, "max_tokens": 40, "temperature": 0})
            out.write(json.dumps({"id": q["id"], "set": name, "expansion": res["choices"][0]["message"]["content"],
                                  "ms": round((time.perf_counter() - t0) * 1000), "usage": res.get("usage")}) + "\n")
            out.flush()
    return 0


def score(args: argparse.Namespace) -> int:
    import statistics

    from gmprep.commands import open_searcher
    from gmprep.common.settings import load_settings
    from gmprep.evals.retrieval import rank_of_hit

    expansions = {d["id"]: d for d in map(json.loads, args.expansions.open(encoding="utf-8"))}
    settings = load_settings()
    if args.store:
        settings = settings.merged({"store_dir": str(args.store)})
    store, searcher = open_searcher(settings)
    systems = ("plain", "fused", "fused_with_question", "concatenated")
    per_set: dict[str, list[dict[str, bool]]] = {}
    with store:
        for name, q in _questions(args.questions):
            d = expansions.get(q["id"])
            if d is None:
                continue
            e = re.sub(r"\s+", " ", d["expansion"]).strip().strip(".")
            runs = {"plain": searcher.search(q["question"], k=10),
                    "fused": searcher.search_fused([q["question"], e], k=10),
                    "fused_with_question": searcher.search_fused([q["question"], f"{q['question']}\n{e}"], k=10),
                    "concatenated": searcher.search(f"{q['question']}\n{e}", k=10)}
            per_set.setdefault(name, []).append(
                {s: rank_of_hit(q["gold"], [h.node_id for h in hits], q.get("gold_mode", "any"), 5) is not None
                 for s, hits in runs.items()})
    every = [r for rows in per_set.values() for r in rows]
    for name, rows in [*per_set.items(), ("all", every)]:
        print(f"{name} ({len(rows)}): " + ", ".join(f"{s} {sum(r[s] for r in rows) / len(rows):.3f}" for s in systems))
    ms = [d["ms"] for d in expansions.values()]
    if ms:
        print(f"expansion ms per question: median {statistics.median(ms):.0f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("expand")
    e.add_argument("--questions", nargs="+", required=True, type=Path)
    e.add_argument("--out", required=True, type=Path)
    e.add_argument("--model-path", type=Path)
    e.add_argument("--threads", type=int, default=2)
    s = sub.add_parser("score")
    s.add_argument("expansions", type=Path)
    s.add_argument("--questions", nargs="+", required=True, type=Path)
    s.add_argument("--store", type=Path)
    args = p.parse_args(argv)
    return expand(args) if args.cmd == "expand" else score(args)


if __name__ == "__main__":
    raise SystemExit(main())
