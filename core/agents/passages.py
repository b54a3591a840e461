"""Query-focused excerpts: the part of a long entry that bears on the question.

Entries such as Recall Knowledge or a dragon's stat block run to thousands of characters, and the
fact asked about ("on a critical failure ...") often sits at the end. Cutting the text at N
characters drops it. Instead the entry is split into paragraphs (degree-of-success lines, stat
lines), each scored by how many of the question's content words it contains, and the best ones
are kept in their original order, with the opening paragraph always first (it says what the entry is).
"""

from __future__ import annotations

import re

from gmprep.common.text import clean_markdown, cut_words, linear_tables, pick_paragraphs

# Paragraphs: lines, and the degree-of-success / trigger labels that a flattened entry runs together.
_SPLIT = re.compile(r"\n+|(?<=[.!?])\s+(?=(?:Critical Success|Success|Failure|Critical Failure|Special|Trigger|"
                    r"Requirements?|Effect|Heightened|Frequency)\b)")


def focused_excerpt(text: str, query: str, max_chars: int = 900) -> str:
    """Up to about ``max_chars`` of ``text``: the opening paragraph, then the paragraphs that best match
    ``query`` (``common.text.pick_paragraphs``), in text order, "..." where paragraphs were left out."""
    flat = clean_markdown(linear_tables(text))  # a table row by row, each cell under its column's name
    if len(flat) <= max_chars:
        return flat
    paras = [p.strip() for p in _SPLIT.split(flat) if p and p.strip()]
    if len(paras) <= 1:
        return cut_words(flat, max_chars)
    keep = pick_paragraphs(paras, query, max_chars, match_exact=True)
    # room is handed out best first (the opening gets at most half, so the asked-for text still fits),
    # then the pieces are shown in text order
    pieces: dict[int, str] = {}
    left = max_chars
    for i in keep:
        if left <= 40:  # no room for a meaningful piece: stop here
            break
        room = left // 2 if i == 0 and len(keep) > 1 else left
        pieces[i] = cut_words(paras[i], room)
        left -= len(pieces[i]) + 1
    out, last = [], -1
    for i in sorted(pieces):
        if last >= 0 and i != last + 1:
            out.append("...")
        out.append(pieces[i])
        last = i
    if last != len(paras) - 1:
        out.append("...")
    return "\n".join(out)
