"""The contextual mention scorer: a small transformer reads a hover candidate in its sentence (issue 11).

The input is the candidate's paragraph window (at most ``WINDOW_WORDS`` words each side, never past a
blank line) with the span between ``<<`` and ``>>``, paired with the entry's type and name
("the fighter wore << Shield >> ... [SEP] spell: Shield"). The shipped model (``mention_context_model/``)
is the bundled reranker's 4-layer MiniLM cross-encoder fine-tuned, its word embeddings frozen, on the
corpus's automatic labels and on every judged candidate of the eleven tuning GMs' notes
(``training/mention_context_folds.py``, on a GPU; docs/mention-scorer.md). It stores only what differs
from the reranker: the layers, int8 per row, and the word embeddings are read from the reranker's file.

The hover decision uses it as a correction to the logistic scorer's staged confidence, fitted on the
tuning GMs' out-of-GM scores with that logit as an offset: ``logit' = logit + a + b * clip(ctx)``
(``ContextStack.adjust``). Only candidates whose logit lies within ``|a| + |b| * clip`` of a threshold can
change side, so only they are read; each (window, entry) pair is read once per process (a cache), so an
edit re-reads only the candidates of the paragraph it changed.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path

from gmprep.kg.embedder import prepare_hf

log = logging.getLogger(__name__)

WINDOW_WORDS = 24  # words each side of the span: ~48 tokens of context, bounded so a scan stays linear
MAX_TOKENS = 96
_WORD = re.compile(r"\S+")
# a table rule or an underline ("|-----|", "=====") is one token per character to the tokenizer: squashed,
# it cannot crowd the words out of the window
_RUN = re.compile(r"([^\w\s])\1{2,}")


def window(text: str, start: int, end: int) -> str:
    """The span in its paragraph, marked: bounded reads either side (linear in the note's length)."""
    lo = max(0, start - 12 * WINDOW_WORDS)
    hi = min(len(text), end + 12 * WINDOW_WORDS)
    before, after = text[lo:start], text[end:hi]
    cut = before.rfind("\n\n")
    if cut >= 0:
        before = before[cut + 2:]
    cut = after.find("\n\n")
    if cut >= 0:
        after = after[:cut]
    bw = _WORD.findall(before)[-WINDOW_WORDS:]
    aw = _WORD.findall(after)[:WINDOW_WORDS]
    return _RUN.sub(r"\1\1", " ".join([*bw, "<<", text[start:end], ">>", *aw]))


def pair(text: str, start: int, end: int, etype: str, name: str) -> tuple[str, str]:
    """The model's input for a candidate: its marked window and "type: name" (a lone surrogate, which an
    editor may send and the tokenizer refuses, becomes "?")."""
    return _valid(window(text, start, end)), _valid(f"{etype}: {name}")


def _valid(s: str) -> str:
    return s if s.isascii() else s.encode("utf-8", "replace").decode("utf-8")


class ContextScorer:
    """A fine-tuned model folder (a full one, as training saves it) or the compact shipped one;
    ``logits`` scores (window, entry) pairs in batches."""

    def __init__(self, path: Path, threads: int = 1) -> None:
        prepare_hf()
        import torch
        from transformers import AutoTokenizer

        self.torch = torch
        self.threads = threads
        self.path = Path(path)
        compact = (self.path / WEIGHTS).is_file()
        self.tok = AutoTokenizer.from_pretrained(str(reranker_dir() if compact else self.path))
        # the tokenizer sets its truncation/padding in shared state on a call (kg/reranker.py, Reranker's lock)
        self._tok_lock = threading.Lock()
        model = _load_compact(self.path) if compact else _load_full(self.path)
        self.model = _quantize_mixed(model.eval())

    def logits(self, pairs: Sequence[tuple[str, str]], batch: int = 64) -> list[float]:
        from gmprep.kg import threads

        out: list[float] = []
        with self.torch.inference_mode(), threads.torch_threads(self.threads):
            for i in range(0, len(pairs), batch):
                chunk = pairs[i:i + batch]
                with self._tok_lock:
                    enc = self.tok([a for a, _ in chunk], [b for _, b in chunk], truncation="only_first",
                                   max_length=MAX_TOKENS, padding=True, return_tensors="pt")
                out.extend(self.model(**enc).logits[:, 0].float().tolist())
        return out


def _quantize_mixed(model):
    """int8 dynamic quantisation of every Linear layer but the feed-forward outputs (``*.output.dense``):
    their weights carry outliers (up to 8 against a typical 0.1), and quantised per tensor they moved the
    ranking (Spearman 0.95 against fp32 on 800 tuning candidates, AUC -0.015); left in fp32, 0.985 and
    -0.002 at 6 ms a pair against 22 ms all fp32 (2 threads)."""
    import warnings

    import torch

    names = {n for n, mod in model.named_modules() if isinstance(mod, torch.nn.Linear) and not n.endswith("output.dense")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao deprecation notice: the API still works in this torch
        from torch.ao.quantization import default_dynamic_qconfig, quantize_dynamic

        return quantize_dynamic(model, dict.fromkeys(names, default_dynamic_qconfig), dtype=torch.qint8, inplace=True)


def reranker_dir() -> Path:
    from gmprep.kg.reranker import bundled_model_dir

    return bundled_model_dir()


def _load_full(path: Path):
    import torch
    from transformers import AutoModelForSequenceClassification

    return AutoModelForSequenceClassification.from_pretrained(str(path), dtype=torch.float32)


WORDS = "bert.embeddings.word_embeddings.weight"


def _load_compact(path: Path):
    """The compact folder: ``config.json`` and ``weights.safetensors`` (int8 rows ``name.q`` with their
    fp16 scales ``name.s``, other tensors fp16), the word embeddings from the bundled reranker."""
    import torch
    from safetensors import safe_open
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModelForSequenceClassification

    config = AutoConfig.from_pretrained(str(path))
    with torch.device("meta"):  # no random weights first: the stored ones are assigned (RSS)
        model = AutoModelForSequenceClassification.from_config(config)
    stored = load_file(str(path / WEIGHTS))
    state: dict = {}
    for name, tensor in stored.items():
        if name.endswith(".s"):
            continue
        if name.endswith(".q"):
            # rounded to fp16 as the model was measured (its config is fp16: the held-out decision read these
            # weights through fp16 parameters), then widened
            state[name[:-2]] = (tensor.float() * stored[name[:-2] + ".s"].float()[:, None]).half().float()
        else:
            state[name] = tensor.float()
    with safe_open(str(reranker_dir() / "model.safetensors"), framework="pt") as f:  # that one tensor only
        words = f.get_tensor(WORDS)
    state[WORDS] = torch.empty(0)  # placeholder: the table is kept in fp16 below
    state.pop(WORDS)
    missing, unexpected = model.load_state_dict(state, strict=False, assign=True)
    del stored, state
    # the word table as stored (fp16, 23 MB; fp32 would be 47 MB of the server's memory), widened per lookup:
    # the same numbers the fp32 table would give, since the stored values are fp16 anyway
    model.set_input_embeddings(_half_embedding(words))
    missing = [k for k in missing if k != WORDS]
    for owner in model.modules():  # buffers no checkpoint holds (position ids, token type ids)
        for name, buf in list(owner.named_buffers(recurse=False)):
            if buf.is_meta:
                value = (torch.arange(buf.shape[-1]).expand(buf.shape) if name == "position_ids"
                         else torch.zeros(buf.shape, dtype=buf.dtype))
                owner.register_buffer(name, value, persistent=False)
    if unexpected or [k for k in missing if "position_ids" not in k]:
        from gmprep.common.errors import GmprepError

        raise GmprepError(f"the context model in {path} does not match its config ({(missing or unexpected)[0]})")
    return model


def _half_embedding(words):
    """An embedding lookup over an fp16 table that returns fp32 rows."""
    import torch

    class HalfEmbedding(torch.nn.Module):
        def __init__(self, weight) -> None:
            super().__init__()
            self.register_buffer("weight", weight.to(torch.float16), persistent=False)
            self.padding_idx = None

        def forward(self, ids):
            return torch.nn.functional.embedding(ids, self.weight).float()

    return HalfEmbedding(words)


def save_compact(full: Path, out: Path, stack: dict, manifest: dict) -> None:
    """Write ``full`` (a trained folder whose word embeddings are the reranker's) as the compact folder."""
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import AutoConfig

    state = load_file(str(full / "model.safetensors"))
    words = load_file(str(reranker_dir() / "model.safetensors"))[WORDS]
    if not torch.equal(state[WORDS].float(), words.float()):
        raise ValueError("the model's word embeddings are not the reranker's (train with --freeze-words)")
    stored: dict = {}
    for name, tensor in state.items():
        if name == WORDS:
            continue
        t = tensor.float()
        if t.dim() == 2 and "embeddings" not in name:
            scale = t.abs().amax(1).clamp(min=1e-8) / 127.0
            stored[name + ".q"] = torch.round(t / scale[:, None]).to(torch.int8)
            stored[name + ".s"] = scale.to(torch.float16)
        else:
            stored[name] = t.to(torch.float16)
    out.mkdir(parents=True, exist_ok=True)
    save_file(stored, str(out / WEIGHTS))
    AutoConfig.from_pretrained(str(full)).save_pretrained(str(out))
    (out / STACK_FILE).write_text(json.dumps({"stack": stack, **manifest}, indent=1) + "\n", encoding="utf-8")


MODEL_DIR = Path(__file__).with_name("mention_context_model")
WEIGHTS = "weights.safetensors"
STACK_FILE = "gmprep_context.json"
CACHE = 50_000  # (window, entry) pairs remembered: a few hundred notes' candidates


class ContextStack:
    """The model and the offset stack fitted on the tuning GMs (``a``, ``b``, ``clip``)."""

    def __init__(self, scorer: ContextScorer, a: float, b: float, clip: float) -> None:
        self.scorer = scorer
        self.a, self.b, self.clip = a, b, clip
        self.band = abs(a) + abs(b) * clip
        self._cache: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: Path | None = None) -> ContextStack:
        path = path or MODEL_DIR
        meta = json.loads((path / STACK_FILE).read_text(encoding="utf-8"))["stack"]
        return cls(ContextScorer(path), float(meta["a"]), float(meta["b"]), float(meta["clip"]))

    def read(self, pairs: list[tuple[str, str]]) -> list[float]:
        """The model's logits, cached per pair."""
        with self._lock:
            known = {p: self._cache[p] for p in pairs if p in self._cache}
        todo = list(dict.fromkeys(p for p in pairs if p not in known))
        if todo:
            new = dict(zip(todo, self.scorer.logits(todo), strict=True))
            if len(todo) >= TRIM_AFTER:
                _trim()
            with self._lock:
                self._cache.update(new)
                while len(self._cache) > CACHE:
                    self._cache.popitem(last=False)
            known.update(new)
        return [known[p] for p in pairs]

    def adjust(self, logits: Sequence[float], pairs: Callable[[int], tuple[str, str]],
               thresholds: Sequence[float], budget: int | None = None,
               pending: list[tuple[str, str]] | None = None) -> list[float | None]:
        """For each candidate logit within ``band`` of a threshold logit, the corrected logit; None for
        the rest (they cannot change side). ``pairs(i)`` builds candidate i's input. With ``budget``: when
        more than that many of those pairs were never read, only the pairs read before are used and the
        others are appended to ``pending``."""
        near = [i for i, z in enumerate(logits) if any(abs(z - t) <= self.band for t in thresholds)]
        out: list[float | None] = [None] * len(logits)
        if not near:
            return out
        inputs = [pairs(i) for i in near]
        if budget is not None:
            with self._lock:
                unread = list(dict.fromkeys(p for p in inputs if p not in self._cache))
            if len(unread) > budget:
                if pending is not None:
                    pending.extend(unread)
                with self._lock:
                    known = [(i, self._cache[p]) for i, p in zip(near, inputs, strict=True) if p in self._cache]
                for i, c in known:
                    out[i] = self.corrected(logits[i], c)
                return out
        for i, c in zip(near, self.read(inputs), strict=True):
            out[i] = self.corrected(logits[i], c)
        return out

    def corrected(self, z: float, ctx: float) -> float:
        """The scorer's logit ``z`` corrected by the model's reading ``ctx``."""
        return z + self.a + self.b * max(-self.clip, min(self.clip, ctx))


TRIM_AFTER = 16  # pairs read at once after which freed memory goes back to the system


def _trim() -> None:
    """Give the heap's freed pages back (glibc): the quantised model's batches leave ~200 MB of freed arena
    behind after a note's first reading, which the server's RSS would otherwise keep (measured: 878 -> 645 MB
    after a 300-line note). Elsewhere (another libc) nothing to do."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


_shared: dict[str, ContextStack | None] = {}


def shared_context() -> ContextStack | None:
    """The shipped context model, loaded once per process; None when it is absent or cannot load (the
    logistic scorer alone decides)."""
    from gmprep.kg.embedder import MODEL_LOAD_LOCK

    with MODEL_LOAD_LOCK:
        if "ctx" not in _shared:
            try:
                _shared["ctx"] = ContextStack.load() if (MODEL_DIR / WEIGHTS).is_file() else None
            except Exception as exc:  # a broken model file must not take hovers down
                log.warning("context model unavailable (%s: %s); hovers use the logistic scorer alone",
                            type(exc).__name__, exc)
                _shared["ctx"] = None
        return _shared["ctx"]
