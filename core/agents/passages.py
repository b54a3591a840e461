"""Query-focused excerpts: the part of a long entry that bears on the question.

Entries such as Recall Knowledge or a dragon's stat block run to thousands of characters, and the
fact asked about ("on a critical failure ...") often sits at the end. Cutting the text at N
characters drops it. Instead the entry is split into paragraphs (degree-of-success lines, stat
lines), each scored by how many of the question's content words it contains, and the best ones
are kept in their original order, with the opening paragraph always first (it says what the entry is).
"""

from __future__ import annotations

import re

from gmprep.common.text import clean_markdown
from gmprep.core.agents.relevance import content_words

_SPLIT = re.compile(r"\n+|(?<=[.!?])\s+(?=(?:Critical Success|Success|Failure|Critical Failure|Special|Trigger|"
                    r"Requirements?|Effect|Heightened|Frequency)\b)")
_WORD = re.compile(r"[a-z][a-z'-]+")


def _stems(text: str) -> set[str]:
    return {w[:5] for w in _WORD.findall(text.lower())}


def focused_excerpt(text: str, query: str, max_chars: int = 900) -> str:
    """Up to ``max_chars`` of ``text``: the opening paragraph, then the paragraphs that best match ``query``."""
    flat = clean_markdown(text)
    if len(flat) <= max_chars:
        return flat
    paras = [p.strip() for p in _SPLIT.split(flat) if p and p.strip()]
    if len(paras) <= 1:
        return flat[:max_chars].rsplit(" ", 1)[0] + " ..."
    wanted = {w[:5] for w in content_words(query)}
    scored = sorted(range(1, len(paras)), key=lambda i: (-len(wanted & _stems(paras[i])), i))
    keep = {0}
    budget = max_chars - len(paras[0])
    for i in scored:
        if budget <= 40:
            break
        if len(paras[i]) <= budget:
            keep.add(i)
            budget -= len(paras[i]) + 1
    out, last = [], -1
    for i in sorted(keep):
        if last >= 0 and i != last + 1:
            out.append("...")
        out.append(paras[i] if len(paras[i]) <= max_chars else paras[i][:max_chars].rsplit(" ", 1)[0] + " ...")
        last = i
    if last != len(paras) - 1:
        out.append("...")
    return "\n".join(out)
