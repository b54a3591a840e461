"""``gmprep reranker train|score``: fine-tune the cross-encoder on our corpus, or try it on a query."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gmprep.commands import settings_from_args
from gmprep.common.errors import GmprepError


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``reranker`` command group."""
    p = sub.add_parser("reranker", help="train or try the cross-encoder reranker")
    rsub = p.add_subparsers(dest="reranker_cmd", metavar="ACTION")
    t = rsub.add_parser(
        "train", help="fine-tune the reranker on pairs generated from the corpus (needs a built index, "
        "unless --rows-in)",
        description="Mine training rows from the store (queries, hard negatives, passages) and fine-tune. "
        "--rows-out FILE only mines and writes them; --rows-in FILE only trains, from such a file, with no store "
        "(a GPU machine: scripts/gpu_reranker.sh).",
    )
    t.add_argument("--pairs", type=int, default=12000, help="(query, passage) pairs per epoch (default 12000)")
    t.add_argument("--epochs", type=int, default=1)
    t.add_argument("--seed", type=int, default=None, help="mining and training seed (default 13; with --rows-in "
                   "the file's)")
    t.add_argument("--max-length", type=int, default=128, help="token window of a (query, passage) pair")
    t.add_argument("--negatives", type=int, default=3, help="hard negatives per query (with --rows-in: the file's)")
    t.add_argument("--batch-queries", type=int, default=8, help="queries per optimiser step, each with its "
                   "1 + negatives passages (default 8)")
    t.add_argument("--lr", type=float, default=4e-5)
    t.add_argument("--layers", type=int, default=None, help="keep only the first N transformer layers")
    t.add_argument("--out", type=Path, default=None, help="output folder (default: the bundled kg/reranker_model)")
    t.add_argument("--init", type=Path, default=None, help="continue training this reranker instead of starting from MiniLM")
    t.add_argument("--pairs-out", type=Path, default=None, help="also write the generated groups as JSON lines")
    t.add_argument("--questions", type=Path, nargs="+", default=None, metavar="FILE",
                   help="question data files (the question index's format: node_id + questions) whose questions "
                   "become training queries for their entries, beside the generated ones")
    t.add_argument("--questions-share", type=float, default=0.5,
                   help="with --questions: at most this share of the queries comes from them (default 0.5)")
    t.add_argument("--long-share", type=float, default=0.0,
                   help="with --questions: this share of the written questions is told long, the way forum askers "
                   "write (context, aside, follow-up: training/long_questions.py; default 0)")
    t.add_argument("--mention-share", type=float, default=0.5,
                   help="with --long-share: this share of the long questions also names another entry, not the one "
                   "asked about, which becomes their first hard negative (default 0.5)")
    t.add_argument("--context-share", type=float, default=0.0,
                   help="with --questions: this share of the written questions not told long is told inside "
                   "another entry's written questions (a BM25 or linked neighbour of the same scene, which becomes "
                   "their first hard negative): context that is a situation, not a template (default 0)")
    t.add_argument("--query-tokens", type=int, default=0,
                   help="rows hold a question over this many tokens as search reads it (kg.query.condense; "
                   "search.rerank_query_tokens, 28 shipped); default 0: the whole question")
    rows = t.add_mutually_exclusive_group()
    rows.add_argument("--rows-out", type=Path, default=None, metavar="FILE",
                      help="mine only: write the training rows (gzipped JSON lines with a header) and stop")
    rows.add_argument("--rows-in", type=Path, default=None, metavar="FILE",
                      help="train only, from a --rows-out file (no store needed)")
    t.add_argument("--device", default="cpu", help="where to train: cpu (default) or cuda")
    t.add_argument("--json", action="store_true", help="print the training report as JSON")
    t.set_defaults(func=run_train)
    s = rsub.add_parser("score", help="score entries for a query with the reranker")
    s.add_argument("query")
    s.add_argument("ids", nargs="+", help="entry ids to score")
    s.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled one)")
    s.set_defaults(func=run_score)


def run_train(args: argparse.Namespace) -> int:
    """Mine rows from the store and train (or only one of the two: --rows-out, --rows-in); save the model."""
    from gmprep.kg.reranker import bundled_model_dir
    from gmprep.training.rows import RowsError, read_rows, write_rows
    from gmprep.training.trainer import TrainConfig, mine_rows, train_cross_encoder, train_reranker

    if args.pairs < 4 or args.epochs < 1 or args.batch_queries < 1:
        raise GmprepError("--pairs must be at least 4, --epochs and --batch-queries at least 1")
    config = TrainConfig(
        pairs=args.pairs, epochs=args.epochs, seed=13 if args.seed is None else args.seed, max_length=args.max_length,
        negatives=args.negatives, batch_queries=args.batch_queries, lr=args.lr, layers=args.layers,
        written_share=args.questions_share, long_share=args.long_share, mention_share=args.mention_share,
        context_share=args.context_share, query_tokens=max(0, args.query_tokens),
    )
    for name in ("questions_share", "long_share", "mention_share", "context_share"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            raise GmprepError(f"--{name.replace('_', '-')} must be between 0 and 1")
    questions: list[tuple[str, str]] = []
    if args.questions:
        from gmprep.kg.question_index import read_texts

        missing = [str(p) for p in args.questions if not p.is_file()]
        if missing:
            raise GmprepError(f"no such question file: {missing[0]}")
        questions = read_texts(args.questions)
    out = args.out or bundled_model_dir()
    if args.rows_in is not None:  # no store: the rows file says what the mining was
        try:
            rows = read_rows(args.rows_in)
        except (OSError, RowsError, KeyError, ValueError) as exc:
            raise GmprepError(f"cannot read the rows file {args.rows_in}: {exc}") from exc
        config.negatives = rows.negatives
        config.pairs = len(rows.rows) * (1 + rows.negatives)
        if args.seed is None:
            config.seed = int(rows.header.get("seed", config.seed))
        report = train_cross_encoder(rows, config, out, base_model=args.init, progress=not args.json,
                                     device=args.device)
    else:
        from gmprep.kg.store import Store

        settings = settings_from_args(args)
        with Store.open(settings.store_dir, create=False) as store:
            if args.rows_out is not None:
                mined = mine_rows(store, config, progress=not args.json, pairs_file=args.pairs_out,
                                  written=questions, written_files=[str(p) for p in args.questions or []])
                written = write_rows(args.rows_out, mined.header, mined.rows)
                summary = {"rows_file": str(args.rows_out), "sha256": written.sha256,
                           "bytes": args.rows_out.stat().st_size, "header": written.header,
                           "by_generator": written.by_generator}
                print(json.dumps(summary, indent=2) if args.json else
                      f"{len(written.rows)} rows written to {args.rows_out} ({summary['bytes']} bytes, sha256 "
                      f"{written.sha256}); queries by generator {json.dumps(written.by_generator)}; positives by "
                      f"group {json.dumps(written.header['positives_by_group'])}")
                return 0
            report = train_reranker(store, config, out, progress=not args.json, pairs_file=args.pairs_out,
                                    init=args.init, device=args.device, written=questions,
                                    written_files=[str(p) for p in args.questions or []])
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        print(
            f"reranker saved to {report.out_dir}: {report.queries} queries, {report.pairs_per_epoch} pairs x "
            f"{report.epochs} epoch(s) in {report.seconds}s on {report.device}, final loss {report.final_loss}; "
            f"queries by generator {json.dumps(report.by_generator)}"
        )
    return 0


def run_score(args: argparse.Namespace) -> int:
    """Print the reranker's score of each entry for the query, best first."""
    from gmprep.kg.reranker import Reranker
    from gmprep.kg.store import Store

    settings = settings_from_args(args)
    with Store.open(settings.store_dir, create=False) as store:
        nodes = store.get_many(args.ids)
        missing = [i for i in args.ids if i not in nodes]
        if missing:
            raise GmprepError(f"no such entries: {', '.join(missing)}")
        reranker = Reranker.load(args.model)
        ordered = [nodes[i] for i in args.ids]
        scores = reranker.score_nodes(args.query, ordered)
    for node, score in sorted(zip(ordered, scores, strict=True), key=lambda x: -x[1]):
        print(f"{score:8.3f}  {node.node_id}  {node.name}")
    return 0
