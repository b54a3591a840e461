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
    t = rsub.add_parser("train", help="fine-tune the reranker on pairs generated from the corpus (needs a built index)")
    t.add_argument("--pairs", type=int, default=12000, help="(query, passage) pairs per epoch (default 12000)")
    t.add_argument("--epochs", type=int, default=1)
    t.add_argument("--seed", type=int, default=13)
    t.add_argument("--max-length", type=int, default=128, help="token window of a (query, passage) pair")
    t.add_argument("--negatives", type=int, default=3, help="hard negatives per query")
    t.add_argument("--lr", type=float, default=4e-5)
    t.add_argument("--layers", type=int, default=None, help="keep only the first N transformer layers")
    t.add_argument("--out", type=Path, default=None, help="output folder (default: the bundled kg/reranker_model)")
    t.add_argument("--init", type=Path, default=None, help="continue training this reranker instead of starting from MiniLM")
    t.add_argument("--pairs-out", type=Path, default=None, help="also write the generated groups as JSON lines")
    t.add_argument("--json", action="store_true", help="print the training report as JSON")
    t.set_defaults(func=run_train)
    s = rsub.add_parser("score", help="score entries for a query with the reranker")
    s.add_argument("query")
    s.add_argument("ids", nargs="+", help="entry ids to score")
    s.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled one)")
    s.set_defaults(func=run_score)


def run_train(args: argparse.Namespace) -> int:
    """Generate pairs from the store's corpus entries, train, save; prints where the model went."""
    from gmprep.kg.reranker import bundled_model_dir
    from gmprep.kg.store import Store
    from gmprep.training.trainer import TrainConfig, train_reranker

    settings = settings_from_args(args)
    if args.pairs < 4 or args.epochs < 1:
        raise GmprepError("--pairs must be at least 4 and --epochs at least 1")
    config = TrainConfig(
        pairs=args.pairs, epochs=args.epochs, seed=args.seed, max_length=args.max_length,
        negatives=args.negatives, lr=args.lr, layers=args.layers,
    )
    with Store.open(settings.store_dir, create=False) as store:
        out = args.out or bundled_model_dir()
        report = train_reranker(store, config, out, progress=not args.json, pairs_file=args.pairs_out, init=args.init)
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        print(
            f"reranker saved to {report.out_dir}: {report.queries} queries, {report.pairs_per_epoch} pairs x "
            f"{report.epochs} epoch(s) in {report.seconds}s, final loss {report.final_loss}; "
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
