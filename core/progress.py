"""How an answer reaches its caller while it is made: the sources first, then the text, timed.

``answer_question`` hands every answerer one ``AnswerProgress``. The answerer calls ``sources(...)``
once, as soon as it knows the passages the answer is built from (after search, before any model
call), and then streams the answer body through ``delta``. A delta sent before ``sources`` is a
preamble (the Remaster rename note: "Flat-footed is called Off-Guard"); it is passed on but does not
count as the answer's first token. Inline citations in the text are ``[1]``, ``[2]``, ... = 1-based
positions in the list given to ``sources`` (``cited_ids`` reads them back).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence

from gmprep.kg.models import Citation

OnDelta = Callable[[str], None]
OnSources = Callable[[list[Citation]], None]

_NUMBERED = re.compile(r"\[(\d{1,2}(?:\s*,\s*\d{1,2})*)\]")


def cited_ids(text: str, sources: Sequence[Citation]) -> list[str]:
    """The source ids the text cites as ``[n]`` or ``[n, m]`` (1-based into ``sources``), in first-cited
    order; numbers outside the list are ignored."""
    out: list[str] = []
    for m in _NUMBERED.finditer(text):
        for part in m.group(1).split(","):
            n = int(part)
            if 1 <= n <= len(sources) and sources[n - 1].source_id not in out:
                out.append(sources[n - 1].source_id)
    return out


class AnswerProgress:
    """Relays sources and deltas to the caller and times them (``timings_ms``)."""

    def __init__(self, on_delta: OnDelta | None = None, on_sources: OnSources | None = None):
        self._on_delta = on_delta
        self._on_sources = on_sources
        self.started = time.perf_counter()
        self.sent: list[Citation] | None = None  # what ``sources`` was called with (None: not yet)
        self.t_sources: float | None = None
        self.t_first: float | None = None
        self.streamed: list[str] = []  # every delta, preamble included

    def _ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000

    def sources(self, citations: Sequence[Citation]) -> None:
        """Send the passages the answer is built from (only the first call counts)."""
        if self.sent is not None:
            return
        self.sent = list(citations)
        self.t_sources = self._ms()
        if self._on_sources is not None:
            self._on_sources(list(self.sent))

    def delta(self, text: str) -> None:
        """A piece of the answer text (a preamble while no sources were sent)."""
        if not text:
            return
        if self.sent is not None and self.t_first is None:
            self.t_first = self._ms()
        self.streamed.append(text)
        if self._on_delta is not None:
            self._on_delta(text)

    def text(self) -> str:
        """Everything streamed so far."""
        return "".join(self.streamed)

    def timings(self) -> dict[str, float]:
        """``sources`` (question -> sources sent), ``first_token`` (-> first delta of the body), ``total``."""
        total = self._ms()
        sources = self.t_sources if self.t_sources is not None else total
        first = self.t_first if self.t_first is not None else total
        return {"sources": round(sources, 1), "first_token": round(first, 1), "total": round(total, 1)}
