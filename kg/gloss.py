"""Sense evidence from an entry's own rule text: do the words around a candidate talk about what
the entry talks about?

A GM who writes "cast alarm on the door; anyone who enters without the password" is near the words
of the *alarm* spell's own text (password, enters, ward, area); "the guard raised the alarm and fled"
is not. This is the classic gloss-overlap (Lesk) reading of a word's sense: the candidate's window
and the entry's text, each as a tf-idf vector over the corpus's entries, and their cosine. Nothing is
listed by hand: the "gloss" is whatever the store holds as the entry's text, so a book added to the
store brings its own.

Cost: the document frequencies are counted once per name index, on first use (one pass over the
entries' texts, ~1 s for the bundled corpus); an entry's vector is built on first use and kept; a
candidate costs a window of ``GLOSS_WINDOW`` words each side.
"""

from __future__ import annotations

import bisect
import math
import re
import threading
from collections import Counter
from collections.abc import Iterable

GLOSS_WINDOW = 30  # words each side of the candidate that are read
# Fewer words than this around a candidate in a list item or table cell: a name listed alone, with no
# context to read a sense from ("bare"), which the note stage weighs on its own instead of reading the
# cosine of 0 as evidence against the rule.
BARE_WORDS = 4
_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019\-]*")
_MIN_LEN = 3  # shorter words ("of", "to", "a") carry no sense of their own


def gloss_words(text: str) -> list[str]:
    """Lowercased words of three letters or more (apostrophes folded), the unit of the vectors."""
    out = []
    for w in _WORD.findall(text):
        w = w.replace("\u2019", "'").lower().strip("'-")
        if len(w) >= _MIN_LEN:
            out.append(w)
    return out


class GlossIndex:
    """tf-idf vectors of the entries' own texts, and the cosine of a window of words against one."""

    def __init__(self, texts: Iterable[tuple[str, str]]):
        self._texts = {nid: text for nid, text in texts}
        self._idf: dict[str, float] | None = None
        self._unseen = 0.0  # the idf of a word no entry uses
        self._vectors: dict[str, dict[str, float]] = {}
        self._lock = threading.Lock()

    def _ensure_idf(self) -> dict[str, float]:
        idf = self._idf
        if idf is not None:
            return idf
        with self._lock:
            if self._idf is None:
                df: Counter[str] = Counter()
                for text in self._texts.values():
                    df.update(set(gloss_words(text)))
                n = max(1, len(self._texts))
                self._unseen = math.log(n)
                self._idf = {w: math.log(n / (1 + c)) for w, c in df.items()}
            return self._idf

    def warm(self) -> None:
        """Count the document frequencies now (a server does it on a background thread at startup, so
        the first scan of a note does not pay for it; a scan that comes first waits for it)."""
        self._ensure_idf()

    def vector(self, node_id: str) -> dict[str, float]:
        """The entry's text as a unit tf-idf vector (sublinear tf); empty when it has no text."""
        vec = self._vectors.get(node_id)
        if vec is not None:
            return vec
        idf = self._ensure_idf()
        counts = Counter(gloss_words(self._texts.get(node_id, "")))
        raw = {w: (1.0 + math.log(c)) * idf.get(w, self._unseen) for w, c in counts.items()}
        norm = math.sqrt(sum(x * x for x in raw.values())) or 1.0
        vec = {w: x / norm for w, x in raw.items() if x > 0}
        self._vectors[node_id] = vec
        return vec

    def overlap(self, node_id: str, window: list[str], exclude: Iterable[str] = ()) -> float:
        """Cosine (0..1) of ``window`` (its words, the candidate's own left out) against the entry's text."""
        vec = self.vector(node_id)
        if not vec or not window:
            return 0.0
        idf = self._ensure_idf()
        skip = set(exclude)
        counts = Counter(w for w in window if w not in skip)
        raw = {w: (1.0 + math.log(c)) * idf.get(w, self._unseen) for w, c in counts.items()}
        norm = math.sqrt(sum(x * x for x in raw.values())) or 1.0
        return sum(vec.get(w, 0.0) * x for w, x in raw.items()) / norm

    def around(self, node_id: str, text: str, start: int, end: int, window: int = GLOSS_WINDOW,
               tokens: Tokens | None = None) -> tuple[float, int]:
        """``overlap`` of the ``window`` words each side of ``text[start:end]``, and how many words it
        read: with almost none (a name alone in a list item or a table cell) a cosine of 0 says nothing.
        ``tokens``: ``tokenize(text)``, read once for all the candidates of a text (each then costs
        a bisection and its window, whatever the text's length)."""
        starts, ends, toks = tokens if tokens is not None else tokenize(text)
        i = bisect.bisect_left(ends, start + 1)  # first word ending inside or after the span
        j = bisect.bisect_left(starts, end)  # first word starting after the span
        before = toks[max(0, i - window):i]
        after = toks[j:j + window]
        return self.overlap(node_id, before + after, exclude=toks[i:j]), len(before) + len(after)


Tokens = tuple[list[int], list[int], list[str]]


def tokenize(text: str) -> Tokens:
    """``gloss_words`` of ``text`` with their start and end offsets."""
    starts: list[int] = []
    ends: list[int] = []
    toks: list[str] = []
    for m in _WORD.finditer(text):
        w = m.group().replace("\u2019", "'").lower().strip("'-")
        if len(w) >= _MIN_LEN:
            starts.append(m.start())
            ends.append(m.end())
            toks.append(w)
    return starts, ends, toks
