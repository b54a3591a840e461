"""A contextual mention scorer (measured, not shipped): a small transformer reads a candidate in its sentence.

The input is the candidate's paragraph window (at most ``WINDOW_WORDS`` words each side, never past a
blank line) with the span between ``<<`` and ``>>``, paired with the entry's type and name
("the fighter wore <<Shield>> ... [SEP] spell: shield"). The model is the bundled all-MiniLM-L6-v2 cut to
its first ``layers`` layers with a one-logit classification head, fine-tuned on CPU by
``kg/mention_context_train.py`` on the mention scorer's automatic corpus labels. It would run when a
paragraph is rescanned, batched, never at hover time; ``docs/mention-scorer.md`` records why it does not
ship (it did not beat the logistic scorer leaving one GM out).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from gmprep.kg.embedder import prepare_hf

WINDOW_WORDS = 24  # words each side of the span: ~48 tokens of context, bounded so a scan stays linear
MAX_TOKENS = 80
_WORD = re.compile(r"\S+")


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
    return " ".join([*bw, "<<", text[start:end], ">>", *aw])


def pair(text: str, start: int, end: int, etype: str, name: str) -> tuple[str, str]:
    return window(text, start, end), f"{etype}: {name}"


class ContextScorer:
    """Loads a fine-tuned model folder; ``logits`` scores (window, entry) pairs in batches."""

    def __init__(self, path: Path, threads: int = 1) -> None:
        prepare_hf()
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        torch.set_num_threads(threads)
        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(str(path))
        self.model = AutoModelForSequenceClassification.from_pretrained(str(path), dtype=torch.float32).eval()

    def logits(self, pairs: Sequence[tuple[str, str]], batch: int = 64) -> list[float]:
        out: list[float] = []
        with self.torch.inference_mode():
            for i in range(0, len(pairs), batch):
                chunk = pairs[i:i + batch]
                enc = self.tok([a for a, _ in chunk], [b for _, b in chunk], truncation="only_first",
                               max_length=MAX_TOKENS, padding=True, return_tensors="pt")
                out.extend(self.model(**enc).logits[:, 0].float().tolist())
        return out
