"""``gmprep embedder train|vectors``: fine-tune the MiniLM bi-encoder for search's dense stage, and embed
a store's dense-stage vectors with it."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from gmprep.commands import settings_from_args
from gmprep.common.errors import GmprepError

DEFAULT_QUESTIONS = [Path("bench/data/question-gen") / f"{name}.jsonl.gz" for name in (
    "written-situations", "written-prose-situations", "written-entry-situations", "written-entry-situations-2")]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``embedder`` command group."""
    p = sub.add_parser("embedder", help="fine-tune the dense-stage bi-encoder, or embed a store with it")
    esub = p.add_subparsers(dest="embedder_cmd", metavar="ACTION")
    t = esub.add_parser(
        "train", help="fine-tune MiniLM on written situation questions (needs a built index)",
        description="Mine one hard negative per written question from the store (BM25 and stock-dense "
        "neighbours), then train with MultipleNegativesRankingLoss for one epoch and save fp16 weights.")
    t.add_argument("--questions", type=Path, nargs="+", default=None, metavar="FILE",
                   help="question data files (node_id + questions; default: bench/data/question-gen/written-*)")
    t.add_argument("--limit", type=int, default=None, help="at most this many questions (drawn by seed)")
    t.add_argument("--negatives", type=int, default=1, help="mined hard negatives per question (default 1)")
    t.add_argument("--epochs", type=int, default=1)
    t.add_argument("--seed", type=int, default=13)
    t.add_argument("--max-length", type=int, default=128, help="tokens per text while training")
    t.add_argument("--batch", type=int, default=32, help="questions per step (default 32)")
    t.add_argument("--lr", type=float, default=2e-5)
    t.add_argument("--out", type=Path, default=None, help="output folder (default: the bundled kg/embedder_model)")
    t.add_argument("--device", default="cpu", help="where to train: cpu (default) or cuda")
    t.add_argument("--json", action="store_true", help="print the training report as JSON")
    t.set_defaults(func=run_train)
    v = esub.add_parser("vectors", help="(re)build the store's dense-stage vectors with the fine-tuned model",
                        description="Embed the store's entries and question index with the fine-tuned "
                        "bi-encoder into the dense-stage sidecar (what `index build` does at its end).")
    v.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled one)")
    v.set_defaults(func=run_vectors)


def run_train(args: argparse.Namespace) -> int:
    """Mine the triples from the store, fine-tune, save."""
    from gmprep.kg.embedder import FINETUNED_DIR
    from gmprep.kg.question_index import read_texts
    from gmprep.kg.store import Store
    from gmprep.training.bi_encoder import EmbedderTrainConfig, mine_triples, train_bi_encoder

    if args.epochs < 1 or args.batch < 2 or args.negatives < 1 or (args.limit is not None and args.limit < 2):
        raise GmprepError("--epochs and --negatives must be at least 1, --batch and --limit at least 2")
    files = args.questions or DEFAULT_QUESTIONS
    missing = [str(p) for p in files if not p.is_file()]
    if missing:
        raise GmprepError(f"no such question file: {missing[0]}")
    config = EmbedderTrainConfig(questions=args.limit, negatives=args.negatives, epochs=args.epochs, seed=args.seed,
                                 max_length=args.max_length, batch=args.batch, lr=args.lr)
    settings = settings_from_args(args)
    t0 = time.perf_counter()
    with Store.open(settings.store_dir, create=False) as store:
        triples, passages = mine_triples(store, read_texts(files), config, progress=not args.json)
    mined = round(time.perf_counter() - t0, 1)
    report = train_bi_encoder(triples, passages, config, args.out or FINETUNED_DIR, progress=not args.json,
                              device=args.device)
    report.mine_seconds = mined
    report.question_files = [str(p) for p in files]
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        print(f"embedder saved to {report.out_dir}: {report.rows} questions x {report.epochs} epoch(s) in "
              f"{report.seconds}s on {report.device} (mining {mined}s), final loss {report.final_loss}; "
              f"by group {json.dumps(report.by_group)}")
    return 0


def run_vectors(args: argparse.Namespace) -> int:
    """Embed the store's dense-stage sidecar with the fine-tuned model."""
    from gmprep.kg.dense_stage import build_dense_stage
    from gmprep.kg.store import Store

    settings = settings_from_args(args)
    with Store.open(settings.store_dir, create=False) as store:
        print(build_dense_stage(store, model_dir=args.model, device=settings.device))
    return 0
