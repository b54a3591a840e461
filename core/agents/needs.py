"""How many things a question asks, decided from its structure (no model call).

A question of the form "<scene>. What does X do, and how long does it last?" asks two things: the
clauses joined by ", and <question word>" (or "?", ";") are its needs. Each need is searched on its
own (with the scene sentences before it, which name the rule) besides the whole question, so a
passage that answers only the second half still reaches the answer. One clause = one need: the
whole question is searched once and answered in one generation.

On the dev set (tests/agents/test_needs.py measures it) the split marks 11 of the 20 multi-hop
questions and 27 of the 85 single-entry ones as multi-need; a false split costs one extra search,
never a model call, which is why the rule may be loose.
"""

from __future__ import annotations

import re

# the words that open an interrogative clause
_WH = r"(?:what|what's|how|when|where|which|who|why|does|do|is|are|can|will|should|must)"
# a clause boundary: ", and|or|but <wh>", " and <wh>", "; <wh>", "? <wh>"
_BOUNDARY = re.compile(rf"(?:,\s*(?:and|or|but)\s+|\s+and\s+|;\s*|\?\s+)(?={_WH}\b)", re.IGNORECASE)
# sentence ends before the question proper: the scene the question is about
_SENTENCE = re.compile(r"(?<=[.!])\s+(?=[A-Z])")
MAX_NEEDS = 4


def split_needs(question: str) -> list[str]:
    """The question's needs as standalone search queries; [] when it asks one thing."""
    text = " ".join(question.split())
    sentences = _SENTENCE.split(text)
    scene, asked = " ".join(sentences[:-1]), sentences[-1]
    clauses = [c.strip(" ,;?") for c in _BOUNDARY.split(asked) if c and c.strip(" ,;?")]
    if len(clauses) <= 1:
        return []
    return [f"{scene} {c}?".strip() for c in clauses[:MAX_NEEDS]]
