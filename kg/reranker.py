"""The cross-encoder reranker: scores (query, passage) pairs with our own fine-tuned MiniLM.

No cross-encoder ships on any registry, so ``gmprep reranker train`` (the ``training`` package) fine-tunes
one from the bundled MiniLM weights on pairs generated from the corpus, and the result is shipped in
``kg/reranker_model/`` (fp16 safetensors). At load time the weights are cast to fp32 and, on CPU, the
Linear layers are dynamically quantised to int8 (about 1.6x faster here, same ranking) so that a
search with rerank stays inside its latency budget; on a GPU (settings ``device``) the fp32 model runs
there instead (int8 dynamic quantisation is a CPU-only kernel).

The passage a query is scored against is built by ``rerank_passage``: a compact header (name, type,
level, traits, section) and the paragraphs of the entry that share the most words with the query
(``common.text.pick_paragraphs``, the same picker the answers' excerpts use), so that the fact a question asks about survives the short token window even in a long stat block.
Training uses the same function, so train and inference inputs look alike.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import warnings
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from gmprep.common.errors import GmprepError
from gmprep.common.text import clean_markdown, pick_paragraphs
from gmprep.kg import threads
from gmprep.kg.embedder import MODEL_LOAD_LOCK, pick_device, prepare_hf
from gmprep.kg.models import Node
from gmprep.kg.query import condense
from gmprep.kg.render import plain_stat_line

log = logging.getLogger(__name__)

MODEL_DIR = Path(__file__).with_name("reranker_model")
META_NAME = "gmprep_reranker.json"
DEFAULT_MAX_LENGTH = 128
MIN_PASSAGE_TOKENS = 24  # below this the passage window is too small to judge: cut the query too
QUERY_PAIRS = 64  # one search scores ~8-20 pairs; more than this is bulk scoring (training, evaluation)
# The stat line that repeats the header in creature/item/heritage texts ("Creature 4 (common, small ...)").
_STAT_HEAD = re.compile(r"^(?:Creature|Item|Heritage|Hazard|Feat|Spell|Cantrip|Focus|Ritual)\b[^\n]{0,80}\n", re.I)


def passage_header(node: Node) -> str:
    """``Name (type level; traits) [section]``: what the entry is, in a few tokens."""
    meta = node.type
    if node.level is not None:
        meta += f" {node.level}"
    if node.traits:
        meta += "; " + ", ".join(node.traits[:6])
    head = f"{node.name} ({meta})"
    if node.type == "rule" and len(node.path) > 2:
        head += " in " + " > ".join(node.path[2:])
    if node.aliases:
        head += "; also called " + ", ".join(node.aliases[:3])
    return head


def rerank_passage(node: Node, query: str = "", max_chars: int = 700) -> str:
    """The text the cross-encoder reads for ``node``: its header, the fields its text does not state
    (a spell's range, an ancestry's HP), its first paragraph, then the paragraphs sharing most
    content words with ``query`` (kept in their original order)."""
    body = clean_markdown(node.text) if node.text else node.summary
    body = _STAT_HEAD.sub("", body, count=1)
    paras = [p.strip() for p in re.split(r"\n+", body) if p.strip()]
    head = passage_header(node)
    stats = plain_stat_line(node)
    if stats:
        head += "\n" + stats
    budget = max_chars - len(head) - 1
    if sum(len(p) + 1 for p in paras) <= budget or not paras:
        return (f"{head}\n" + "\n".join(paras))[:max_chars]
    first = paras[0][: budget // 2]
    chosen = pick_paragraphs(paras, query, budget)
    parts = [first] + [paras[i] for i in sorted(chosen) if i != 0]
    return (f"{head}\n" + "\n".join(parts))[:max_chars]


def bundled_model_dir() -> Path:
    """Folder of the reranker weights shipped with the package."""
    return MODEL_DIR


class Reranker:
    """A loaded cross-encoder. ``score`` returns one relevance logit per passage (higher is better)."""

    def __init__(self, model, tokenizer, max_length: int, path: Path, meta: dict, device: str = "cpu"):
        self.model = model
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.path = path
        self.meta = meta
        self.device = device
        # a fast tokenizer keeps its truncation/padding settings in shared state that every call sets (pairs cut
        # "only_second", a lone text not at all): two threads at once (a chat's concurrent searches) garble each
        # other's encodings ("Second sequence not provided"), so every use of it goes through this lock
        self._tokenizer_lock = threading.Lock()

    @classmethod
    def load(
        cls, path: Path | str | None = None, quantize: bool | None = None, max_length: int | None = None,
        device: str | None = None,
    ) -> Reranker:
        """Load the reranker in ``path`` (default: the bundled one) onto ``device`` (default: GPU when
        torch sees one, else CPU).

        ``quantize`` (default: on CPU) applies torch dynamic int8 quantisation to Linear layers.
        A missing or unreadable model raises GmprepError saying how to get one.
        """
        path = Path(path) if path else bundled_model_dir()
        if not (path / "config.json").is_file() or not any(path.glob("*.safetensors")):
            raise GmprepError(
                f"no reranker model in {path}: train one with `gmprep reranker train --out {path}` "
                "or search without rerank (--no-rerank / search.rerank = false)"
            )
        prepare_hf()
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        meta = {}
        if (path / META_NAME).is_file():
            try:
                meta = json.loads((path / META_NAME).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                meta = {}
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(path))
            model = AutoModelForSequenceClassification.from_pretrained(str(path), dtype=torch.float32)
        except Exception as exc:  # transformers raises OSError/ValueError/safetensors errors on bad files
            raise GmprepError(
                f"the reranker model in {path} cannot be loaded ({type(exc).__name__}: {exc}); "
                "retrain it with `gmprep reranker train`"
            ) from exc
        if model.config.num_labels != 1:
            raise GmprepError(f"the model in {path} is not a reranker (it has {model.config.num_labels} labels)")
        model.eval()
        device = pick_device(device)
        if quantize is None:
            quantize = quantize_on(device)
        if quantize:
            model = _quantize(model)
        else:
            model = model.to(device)
        return cls(model, tokenizer, max_length or int(meta.get("max_length", DEFAULT_MAX_LENGTH)), path, meta,
                   "cpu" if quantize else device)

    def score(self, query: str, passages: Sequence[str], batch_size: int = 32, query_tokens: int = 0) -> list[float]:
        """Relevance logits of ``passages`` for ``query``, in input order. With ``query_tokens`` a longer
        question is read as what it asks (``kg.query.condense``), so the passage keeps its share of the window."""
        if not passages:
            return []
        import torch

        if query_tokens:
            query = condense(query, query_tokens, self.count_tokens)

        # Cut only the passage, so the whole question is read; a question too long for the window
        # (a pasted paragraph) is cut too rather than failing.
        room = self.max_length - self.count_tokens(query) - 3
        strategy = "only_second" if room >= MIN_PASSAGE_TOKENS else "longest_first"

        def encode(chunk: Sequence[str]):
            # tokenised here, on the calling thread, under the lock: the tokenizer's padding/truncation
            # state is not safe to change from two threads at once
            with self._tokenizer_lock:
                enc = self.tokenizer(
                    [query] * len(chunk), list(chunk), truncation=strategy, max_length=self.max_length,
                    padding=True, return_tensors="pt",
                )
            return enc.to(self.device) if self.device != "cpu" else enc

        def run(enc) -> list[float]:
            with torch.inference_mode():
                return [float(x) for x in self.model(**enc).logits.reshape(-1)]

        # one query's pairs: one shard per query worker, each a single-threaded model call, all at once (a
        # search's latency); more pairs are bulk scoring on every core (kg/threads.py)
        if len(passages) <= QUERY_PAIRS and self.device == "cpu":
            parts = threads.on_workers(run, [encode(chunk) for chunk in threads.shards(passages)])
            return [x for part in parts for x in part]
        out: list[float] = []
        with threads.torch_threads(threads.bulk_threads() if self.device == "cpu" else threads.query_threads()):
            for start in range(0, len(passages), batch_size):
                out.extend(run(encode(passages[start : start + batch_size])))
        return out

    def count_tokens(self, text: str) -> int:
        """How many of the window's tokens ``text`` takes (``verbose=False``: a text longer than the window is
        counted, not warned about: transformers' "Token indices sequence length" line would reach the CLI's stderr)."""
        with self._tokenizer_lock:
            return len(self.tokenizer.tokenize(text, verbose=False))

    def score_nodes(self, query: str, nodes: Sequence[Node], query_tokens: int = 0, passage_query: str = "") -> list[float]:
        """Scores of graph nodes, each read through ``rerank_passage`` (its paragraphs picked by the whole
        question's words, or by ``passage_query``'s when ``query`` is one reading of a longer question);
        ``query_tokens`` as in ``score``."""
        words = passage_query or query
        return self.score(query, [rerank_passage(n, words) for n in nodes], query_tokens=query_tokens)


def quantize_on(device: str) -> bool:
    """Whether to run int8 on ``device``: on the CPU yes (faster, same ranking), elsewhere no (the
    dynamic int8 kernels are CPU-only; a GPU runs the fp32 model)."""
    return device == "cpu"


def _quantize(model):
    """int8 dynamic quantisation of the Linear layers (CPU inference only)."""
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao deprecation notice: the API still works in this torch
        from torch.ao.quantization import quantize_dynamic

        return quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


def shared_reranker(path: str | None = None, max_length: int | None = None, device: str | None = None) -> Reranker:
    """One reranker per process, path, token window and device (loading takes about a second)."""
    with MODEL_LOAD_LOCK:
        return _reranker_on(path, max_length, pick_device(device))


@lru_cache(maxsize=4)
def _reranker_on(path: str | None, max_length: int | None, device: str) -> Reranker:
    return Reranker.load(path, max_length=max_length, device=device)
