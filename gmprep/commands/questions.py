"""``gmprep questions``: the question index's offline data (generate) and its sidecar vectors (index)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gmprep.commands import settings_from_args
from gmprep.common.errors import GmprepError


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``questions`` command group."""
    p = sub.add_parser("questions", help="the question index: generate its questions offline, build its vectors")
    qsub = p.add_subparsers(dest="questions_cmd", metavar="ACTION")
    g = qsub.add_parser("generate", help="write GM-voice questions for rules-heavy entries with the local LLM (resumable)")
    g.add_argument("--out", type=Path, default=None, help="output JSON lines (default: the bundled kg/data/questions.jsonl.gz, refused when another job wrote it)")
    g.add_argument("--model", type=Path, default=None, help="GGUF model (default: the installed default model)")
    g.add_argument("--types", default=None, help="comma-separated entry types (default: the rules-heavy ones)")
    g.add_argument("--limit", type=int, default=None, help="at most this many new entries in this run")
    g.add_argument("--parallel", type=int, default=2, help="entries in flight at once (llama.cpp slots)")
    g.add_argument("--threads", type=int, default=2)
    g.add_argument("--max-tokens", type=int, default=120)
    g.add_argument("--seed", type=int, default=13)
    g.set_defaults(func=run_generate)
    i = qsub.add_parser("index", help="embed the question data into the store's question index (part of index build)")
    i.add_argument("--data", type=Path, action="append", default=None, help="question/context data file(s) (default: the bundled ones)")
    i.set_defaults(func=run_index)


def run_generate(args: argparse.Namespace) -> int:
    from gmprep.core.llm.llamacpp import LlamaCppBackend
    from gmprep.core.llm.models import DEFAULT_MODEL, installed_model
    from gmprep.core.question_gen import (
        RULE_TYPES,
        GenerationManifest,
        file_sha256,
        generate,
        load_manifest,
        select_entries,
    )
    from gmprep.kg.question_index import bundled_questions_path
    from gmprep.kg.store import Store

    settings = settings_from_args(args)
    model = args.model or installed_model()
    if model is None or not Path(model).is_file():
        raise GmprepError("no GGUF model: run `gmprep model install` or pass --model")
    out = args.out or bundled_questions_path()
    types = tuple(t.strip() for t in args.types.split(",")) if args.types else RULE_TYPES
    with Store.open(settings.store_dir, create=False) as store:
        nodes = select_entries(store.iter_nodes(kinds=("entry",)), types)
    try:
        manifest = load_manifest(out)
    except ValueError as exc:  # pydantic's ValidationError: a manifest another job wrote (the written questions')
        raise GmprepError(f"{out} was not written by `gmprep questions generate` ({str(exc).splitlines()[0]}); "
                          "pass --out FILE") from exc
    sha = file_sha256(Path(model))
    if manifest is not None and manifest.model_sha256 != sha:
        raise GmprepError(f"{out} was generated with another model (sha256 {manifest.model_sha256[:12]}); use another --out")
    if manifest is None:
        name = DEFAULT_MODEL.name if args.model is None else Path(model).name
        manifest = GenerationManifest(model=name, model_sha256=sha, seed=args.seed, temperature=0.0,
                                      max_tokens=args.max_tokens, types=list(types))
    backend = LlamaCppBackend(model, n_ctx=1024, n_threads=args.threads, n_parallel=args.parallel,
                              max_tokens=args.max_tokens, temperature=0.0)

    def progress(row) -> None:
        print(f"{row.node_id}: {len(row.questions)} questions, {row.tokens} tokens", file=sys.stderr, flush=True)

    manifest = generate(backend, nodes, out, manifest, limit=args.limit, parallel=args.parallel, on_progress=progress)
    run = manifest.runs[-1]
    print(f"{manifest.entries_done}/{manifest.entries_total} entries done ({manifest.questions} questions); "
          f"this run: {run.get('entries', 0)} entries, {run.get('tokens_per_s', 0)} tokens/s, "
          f"{run.get('wall_s', 0)} s wall, {run.get('cpu_s', 0)} s CPU -> {out}")
    return 0


def run_index(args: argparse.Namespace) -> int:
    from gmprep.kg.dense_stage import build_dense_stage
    from gmprep.kg.embedder import finetuned_dir
    from gmprep.kg.question_index import build_question_index, default_data_paths
    from gmprep.kg.store import Store

    settings = settings_from_args(args)
    with Store.open(settings.store_dir, create=False) as store:
        paths = args.data or default_data_paths()
        report = build_question_index(store, paths, device=settings.device)
        if finetuned_dir() is not None:  # the fine-tuned dense stage holds the same questions (kg.dense_stage)
            report += "\n" + build_dense_stage(store, device=settings.device, question_paths=paths)
    print(report)
    return 0
