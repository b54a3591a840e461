"""Is anything retrieved actually about the question? A calibrated relevance score for declining.

Search always returns *something*; an off-topic question ("which pizza place delivers late?")
still gets its nearest passages. The judge scores the retrieved set with two signals that do not
depend on how the searcher fuses or reranks:

- semantic: the best cosine between the question's MiniLM vector and the top passages' stored
  vectors (the same vectors the index searches with, so no extra encoding of passages);
- lexical coverage: the share of the question's content words (stemmed, ``common.text``) that occur
  in the top passages, which catches questions built around words the books never use.

``relevance = semantic + coverage_weight * coverage``. The single threshold was chosen on the dev
questions (the only thing fitted on them), see docs/benchmarks.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gmprep.common.text import QUESTION_WORDS, content_words, stem, words
from gmprep.kg.models import Hit

if TYPE_CHECKING:
    from gmprep.kg.embedder import Embedder
    from gmprep.kg.store import Store

DEFAULT_THRESHOLD = 0.55
COVERAGE_WEIGHT = 0.5
TOP_N = 5


def question_stems(query: str) -> set[str]:
    """What a passage has to cover: the stems of the query's content words, without the words any rules
    question is phrased with ("how does X work", "tell me the rules")."""
    # numbers ("level 3", "after 11 pm") are left out as before: any rules text has some, so they would
    # lift an off-topic question's coverage (the threshold was fitted without them)
    return {stem(w) for w in content_words(query, extra_stop=QUESTION_WORDS) if not w.isdigit()}

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
        wanted = question_stems(query)
        if not wanted:
            return 0.0
        text = " ".join(f"{h.name} {h.text}" for h in hits[:TOP_N])
        have = {stem(w) for w in words(text)}
        return len(wanted & have) / len(wanted)

    def relevance(self, query: str, hits: Sequence[Hit]) -> float:
        """The combined score compared against ``threshold``."""
        if not hits:
            return 0.0
        return self.semantic(query, hits) + self.coverage_weight * self.coverage(query, hits)

    def is_relevant(self, query: str, hits: Sequence[Hit]) -> bool:
        """``relevance >= threshold``."""
        return self.relevance(query, hits) >= self.threshold
