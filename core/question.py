"""What may be asked: one rule for the chat panel (``gmprep/ask``) and the CLI (``gmprep ask``)."""

from __future__ import annotations

# One question's size, for the chat panel and the CLI alike: the 387 real forum posts of bench/data run to 671
# characters at the 95th percentile and 1,260 at most; a pasted page takes seconds to read (the answer path is linear,
# ~1.7 ms a word) and its question is lost in it
QUESTION_MAX_CHARS = 8000


def question_problem(question: str) -> str | None:
    """Why ``question`` cannot be asked (one line), or None: it is blank, or longer than ``QUESTION_MAX_CHARS``."""
    if not question.strip():
        return "the question is empty"
    if len(question) > QUESTION_MAX_CHARS:
        return (f"the question is {len(question):,} characters; ask in at most {QUESTION_MAX_CHARS:,} "
                "(quote only the part of the text that matters)")
    return None

