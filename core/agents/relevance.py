"""Is anything retrieved actually about the question? A calibrated relevance score for declining.

Search always returns *something*; an off-topic question ("which pizza place delivers late?")
still gets its nearest passages. The judge scores the retrieved set with two signals that do not
depend on how the searcher fuses or reranks:

- semantic: the best cosine between the question's MiniLM vector and the top passages' stored
  vectors (the same vectors the index searches with, so no extra encoding of passages);
- lexical coverage: the share of the question's content words that occur in the top passages
  (light stemming), which catches questions built around words the books never use.

``relevance = semantic + coverage_weight * coverage``. The single threshold was chosen on the dev
questions (the only thing fitted on them), see docs/benchmarks.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gmprep.kg.models import Hit

if TYPE_CHECKING:
    from gmprep.kg.embedder import Embedder
    from gmprep.kg.store import Store

DEFAULT_THRESHOLD = 0.55
COVERAGE_WEIGHT = 0.5
TOP_N = 5

_WORD = re.compile(r"[a-z][a-z'-]+")
_STOP = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
    off on once only or other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours yourself yourselves get gets got make
    makes much many also still even does doesn't don't can't won't i'm it's what's how's let's us one two three
    four five six first second third next last like just really want wants need needs work works happen happens
    rule rules exactly tell give go goes going use uses used""".split()
)


def content_words(text: str) -> list[str]:
    """Lower-case content words of ``text`` (stop words and 1-2 letter tokens dropped)."""
    return [w.strip("'-") for w in _WORD.findall(text.lower()) if w not in _STOP and len(w.strip("'-")) > 2]


def _stem(word: str) -> str:
    # a crude prefix stem: "poisoned"/"poison", "jumps"/"jumping" meet; enough for coverage
    return word[:5] if len(word) > 5 else word.rstrip("s")


class RelevanceJudge:
    """Scores how well a set of hits matches a query; ``threshold`` splits on-topic from off-topic."""

    def __init__(
        self, store: Store, embedder: Embedder | None, threshold: float = DEFAULT_THRESHOLD,
        coverage_weight: float = COVERAGE_WEIGHT,
    ):
        """``embedder`` encodes the question (the searcher's; None for a store without vectors, where
        the semantic signal is 0)."""
        self.store = store
        self.embedder = embedder
        self.threshold = threshold
        self.coverage_weight = coverage_weight

    def semantic(self, query: str, hits: Sequence[Hit]) -> float:
        """Best cosine between the query and the top hits' stored vectors (0 when none)."""
        ids = [h.node_id for h in hits[:TOP_N]]
        if not ids or self.embedder is None:
            return 0.0
        vectors = np.asarray(self.store.vectors_for(ids), dtype=np.float32)
        if vectors.size == 0:
            return 0.0
        q = np.asarray(self.embedder.encode_query(query), dtype=np.float32)
        return float(np.max(vectors @ q))

    @staticmethod
    def coverage(query: str, hits: Sequence[Hit]) -> float:
        """Share of the query's content words found in the top hits' names and texts."""
        words = content_words(query)
        if not words:
            return 0.0
        text = " ".join(f"{h.name} {h.text}" for h in hits[:TOP_N]).lower()
        stems = {_stem(w) for w in _WORD.findall(text)}
        prefixes = {s[:5] for s in stems}
        found = sum(1 for w in words if _stem(w) in stems or _stem(w)[:5] in prefixes)
        return found / len(words)

    def relevance(self, query: str, hits: Sequence[Hit]) -> float:
        """The combined score compared against ``threshold``."""
        if not hits:
            return 0.0
        return self.semantic(query, hits) + self.coverage_weight * self.coverage(query, hits)

    def is_relevant(self, query: str, hits: Sequence[Hit]) -> bool:
        """``relevance >= threshold``."""
        return self.relevance(query, hits) >= self.threshold
