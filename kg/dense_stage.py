"""Search's dense stage with the fine-tuned bi-encoder (``gmprep embedder train``), beside the stock one.

The stock MiniLM's cosines are calibrated into other parts: the relevance judge and the answerability
stages compare the question with the store's vectors, outline coverage has cosine thresholds, search's
graph expansion maps a lead's cosine to a weight. So the store's own vectors stay stock, and the
fine-tuned model gets a sidecar of its own (``dense_stage.npz`` in the store folder): the corpus entries'
vectors and the question index's texts, embedded with it. Search reads from it only its two ranked
seed lists (dense and question index); reciprocal-rank fusion reads ranks, never cosines, so nothing
calibrated moves. The sidecar records which model wrote it; a sidecar of another model (or none, or no
fine-tuned model) means search runs on the stock vectors as before.

Notes are indexed one by one as they change; the sidecar holds corpus entries only (built with the
question index, when the rules are re-ingested), and a store's notes keep their stock-vector dense rank.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gmprep.kg.question_index import QuestionIndex

if TYPE_CHECKING:
    from gmprep.kg.embedder import Embedder
    from gmprep.kg.store import Store

log = logging.getLogger(__name__)

SIDECAR = "dense_stage.npz"
CORPUS_PREFIX = "corpus:"


def model_fingerprint(model_dir: Path) -> str:
    """Short digest of a model folder's weights: which model wrote a sidecar."""
    h = hashlib.sha256()
    for f in sorted(model_dir.glob("*.safetensors")):
        with f.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:16]


def build_dense_stage(store: Store, model_dir: Path | None = None, device: str | None = None,
                      embedder: Embedder | None = None, question_paths: Sequence[Path] | None = None) -> str:
    """Embed the store's corpus entries and question-index texts with the fine-tuned model into the
    sidecar. Without a fine-tuned model an old sidecar is removed (search then uses the stock vectors)."""
    from gmprep.common.text import contextual_text
    from gmprep.kg.embedder import finetuned_dir, shared_finetuned_embedder
    from gmprep.kg.question_index import default_data_paths, question_pairs

    target = Path(store.root) / SIDECAR
    model_dir = model_dir or finetuned_dir()
    if model_dir is None:
        target.unlink(missing_ok=True)
        return "dense stage: no fine-tuned embedder, search uses the stock vectors"
    if embedder is None:
        embedder = shared_finetuned_embedder(device, model_dir)
    entries = list(store.iter_nodes(kinds=("entry",), origin_prefix=CORPUS_PREFIX))
    texts = {n.node_id: contextual_text(n) for n in entries}
    order = sorted(texts, key=lambda nid: len(texts[nid]))  # similar lengths batch together: less padding
    entry_vecs = embedder.encode([texts[nid] for nid in order])
    pairs = question_pairs(store, default_data_paths() if question_paths is None else question_paths)
    q_vecs = embedder.encode([t for _, t in pairs]) if pairs else np.zeros((0, embedder.dim), np.float32)
    tmp = target.with_suffix(".tmp.npz")
    np.savez(tmp, entry_ids=np.array(order), entry_vectors=entry_vecs.astype(np.float16),
             question_ids=np.array([nid for nid, _ in pairs]), question_vectors=q_vecs.astype(np.float16),
             model=np.array(model_fingerprint(model_dir)))
    tmp.replace(target)
    return f"dense stage: {len(order)} entries and {len(pairs)} questions embedded with {model_dir.name} -> {target}"


def dense_stage_current(store: Store) -> bool:
    """Whether the sidecar matches the shipped model: none without a fine-tuned model, else one it wrote."""
    from gmprep.kg.embedder import finetuned_dir

    path = Path(store.root) / SIDECAR
    model_dir = finetuned_dir()
    if model_dir is None or not path.exists():
        return model_dir is None and not path.exists()
    with np.load(path) as z:
        return str(z["model"]) == _fingerprint(model_dir)


class DenseStage:
    """The sidecar's two exact indexes (entries, questions) and the model that reads queries for them."""

    def __init__(self, embedder: Embedder, entries: QuestionIndex, questions: QuestionIndex | None):
        self.embedder = embedder
        self.entries = entries
        self.questions = questions
        self.entry_ids = frozenset(entries.ids.tolist())

    @classmethod
    def load(cls, store: Store, model_dir: Path, device: str | None = None) -> DenseStage | None:
        """The store's sidecar and the model in ``model_dir`` when that model wrote it, else None (the
        model is loaded only then)."""
        from gmprep.kg.embedder import shared_finetuned_embedder

        path = Path(store.root) / SIDECAR
        if not path.exists():
            return None
        with np.load(path) as z:
            if str(z["model"]) != _fingerprint(model_dir):
                log.warning("the dense-stage vectors were built by another embedder: run `gmprep embedder vectors`")
                return None
            entries = QuestionIndex(z["entry_ids"], z["entry_vectors"].astype(np.float32))
            questions = (QuestionIndex(z["question_ids"], z["question_vectors"].astype(np.float32))
                         if len(z["question_ids"]) else None)
        return cls(shared_finetuned_embedder(device, model_dir), entries, questions)


_cache: dict[tuple[str, str, str], tuple[float, DenseStage | None]] = {}
_lock = threading.Lock()


def dense_stage_for(store: Store, device: str | None = None) -> DenseStage | None:
    """The store's fine-tuned dense stage (reloaded when its file changes), or None when there is no
    fine-tuned model or no sidecar written by it."""
    from gmprep.kg.embedder import finetuned_dir

    model_dir = finetuned_dir()
    path = Path(store.root) / SIDECAR
    if model_dir is None or not path.exists():
        return None
    mtime = path.stat().st_mtime
    key = (str(path), str(model_dir), str(device))
    with _lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == mtime:
            return hit[1]
        stage = DenseStage.load(store, model_dir, device)
        _cache[key] = (mtime, stage)
        return stage


_fingerprints: dict[tuple[str, float], str] = {}


def _fingerprint(model_dir: Path) -> str:
    """The model's fingerprint, once per process and weights file (45 MB of weights to hash)."""
    key = (str(model_dir), max((f.stat().st_mtime for f in model_dir.glob("*.safetensors")), default=0.0))
    if key not in _fingerprints:
        _fingerprints[key] = model_fingerprint(model_dir)
    return _fingerprints[key]
