"""The no-model answer: the best passages quoted verbatim with citations, or a plain decline.

The fallback when no model is installed or the machine is too small. Nothing is generated, so
nothing can be invented; what it must still get right is *when to say nothing*. It declines when
- the question is about another system's rules (``OtherSystemsSource``: "bonus action", "BAB"...), or
- the answerability decision (``gmprep.core.agents.answerability``) says the passages are not about the
  question (``not_in_books``), or that they only mention a rule no entry defines (``not_in_corpus``:
  the answer names the rule and says how to add the book that holds it).
A follow-up question is searched together with the previous user message (there is no model to
rewrite it), which is the concatenated-history baseline of the answer eval.
"""

from __future__ import annotations

import asyncio
import re
import time

from gmprep.core.agents.answerability import answer_note, decline_text
from gmprep.core.agents.passages import focused_excerpt
from gmprep.core.answer import NOT_IN_BOOKS, Answer, AnswerContext, ChatTurn
from gmprep.core.progress import AnswerProgress, OnDelta, OnSources
from gmprep.core.traces import TraceStep
from gmprep.kg.models import Citation, Hit

QUOTES = 5  # passages quoted (and cited); the answer eval reads citation recall at 5
FIRST_CHARS = 600  # the best passage is quoted at length, the others shorter
OTHER_CHARS = 260
_CHUNK = 80  # characters per streamed delta (the text exists at once; stream it like a model would)


FOLLOWUP_BACK = 3  # at most this many earlier questions are read back for what a follow-up is about
# words that point back into the conversation: a question holding one is about what was asked before (and a model's
# rewrite that still holds one did not stand alone, ``agents.pipeline``)
ANAPHORA = re.compile(r"\b(?:it|its|it's|that|those|them|they|their|this|these|he|she|him|her|one|ones|instead|"
                      r"the next|the first|the same)\b", re.IGNORECASE)


def followup_query(question: str, history: list[ChatTurn], names=None) -> str:
    """The search query for ``question``: with history, the last user message is prepended. With ``names`` (the
    search's ``NameIndex``) and a question that points back ("it", "they", "that" ...), earlier ones too, back to the
    last that names an entry (at most ``FOLLOWUP_BACK``): after "What does Fireball do?" and "how much damage at 5th
    rank?", "can it hurt my allies?" is still about Fireball; "and for dragons?" keeps to the question before it."""
    previous = [t.content for t in history if t.role == "user"]
    if not previous:
        return question
    kept = [previous[-1]]
    if names is not None and ANAPHORA.search(question):
        for earlier in reversed(previous[-FOLLOWUP_BACK:-1]):
            if names.find_mentions(kept[0]):
                break  # the newest kept message names what is asked about
            kept.insert(0, earlier)
    return " ".join([*kept, question])


def render_quotes(hits: list[Hit], query: str) -> str:
    """Markdown: each passage's number ``[n]`` (its place among the sources), name, type and book, then
    the part of its text about ``query``."""
    parts = ["From the books (the closest passages, quoted):"]
    for i, hit in enumerate(hits):
        quote = focused_excerpt(hit.text, query, FIRST_CHARS if i == 0 else OTHER_CHARS)
        if hit.stats:  # the fields the text leaves out (a spell's range and duration)
            quote = f"{hit.stats}\n{quote}"
        quote = "\n> ".join(quote.splitlines())
        parts.append(f"[{i + 1}] **{hit.name}** ({hit.type}; {Citation.from_hit(hit).where()})\n> {quote}")
    return "\n\n".join(parts)


class ExtractiveAnswerer:
    """Answers by quoting; declines when the books do not cover the question."""

    name = "extractive"

    def __init__(self, ctx: AnswerContext, k: int = QUOTES):
        self.ctx = ctx
        self.k = k

    async def answer(
        self,
        question: str,
        history: list[ChatTurn],
        *,
        on_delta: OnDelta | None = None,
        on_sources: OnSources | None = None,
        cancel: asyncio.Event | None = None,
        progress: AnswerProgress | None = None,
    ) -> Answer:
        """Quote the best passages for ``question`` or decline (sources first, then the text)."""
        on = progress or AnswerProgress(on_delta, on_sources)
        answer = await self._answer(question, history, on, cancel)
        on.sources(answer.citations)  # a decline without passages: sent (empty) before its text
        return self._emit(answer, on, cancel)

    async def _answer(self, question: str, history: list[ChatTurn], on: AnswerProgress,
                      cancel: asyncio.Event | None) -> Answer:
        steps: list[TraceStep] = []
        query = followup_query(question, history, getattr(self.ctx.searcher, "names", None))
        if query != question:
            steps.append(TraceStep(name="rewrite", input={"question": question}, output={"standalone": query}))
        t0 = time.perf_counter()
        foreign = self.ctx.other_systems.retrieve(query)
        steps.append(TraceStep(name="other_systems", input={"query": query}, output=foreign.model_dump(include={"verdict", "note"}),
                               ms=(time.perf_counter() - t0) * 1000))
        # a Pathfinder 2e book's name (a class: summoner) is decided with the passages below, like another book's
        # entry: a held rule may be asked beside it
        guard = foreign.other_books if foreign.verdict == "not_in_books" else []
        # another system's term derived from its open source: declined below, unless the books decline it themselves
        deferred = foreign.verdict == "not_in_books" and foreign.derived
        if guard and not self.ctx.search_sources():
            verdict = self.ctx.answerability.other_book(foreign.other_book)
            steps.append(TraceStep(name="answerability", input={"source": foreign.source},
                                   output=verdict.trace_output()))
            return Answer(text=decline_text(verdict, []), outcome="not_in_corpus", steps=steps, question=query)
        if foreign.verdict == "not_in_books" and not guard and not deferred:
            return self.ctx.other_game_decline(foreign, steps, query) or Answer(
                text=f"{NOT_IN_BOOKS} {foreign.note}.", outcome="not_in_books", steps=steps, question=query)
        sources = self.ctx.search_sources()
        best = None
        for source in sources:
            if cancel is not None and cancel.is_set():
                return Answer(text="", outcome="cancelled", steps=steps, question=query)
            t0 = time.perf_counter()
            result = await asyncio.to_thread(source.retrieve, query, self.k)
            steps.append(TraceStep(name="retrieve", input={"source": source.name, "query": query},
                                   output={"verdict": result.verdict, "relevance": round(result.relevance, 4)},
                                   retrieved=[h.source_id for h in result.hits], ms=(time.perf_counter() - t0) * 1000))
            if result.hits and (best is None or result.relevance > best.relevance):
                best = result
        if best is None and guard:
            verdict = self.ctx.answerability.other_book(guard[0])
            return Answer(text=decline_text(verdict, []), outcome="not_in_corpus", steps=steps, question=query)
        if best is None:
            return Answer(text=f"{NOT_IN_BOOKS} {foreign.note}." if deferred else NOT_IN_BOOKS,
                          outcome="not_in_books", steps=steps, question=query)
        hits = best.hits[: self.k]
        t0 = time.perf_counter()
        verdict = await asyncio.to_thread(self.ctx.answerability.assess, query, hits, guard)
        steps.append(TraceStep(name="answerability", input={"source": best.source},
                               output=verdict.trace_output(),
                               ms=(time.perf_counter() - t0) * 1000))
        if verdict.outcome == "not_in_books":
            return Answer(text=decline_text(verdict, []) or NOT_IN_BOOKS, outcome="not_in_books", steps=steps,
                          question=query)
        if verdict.outcome == "not_in_corpus":
            mentions = [h for h in hits if verdict.rule in h.text.lower()][:3]
            return Answer(text=decline_text(verdict, mentions), outcome="not_in_corpus",
                          citations=[Citation.from_hit(h) for h in mentions], steps=steps, question=query)
        if deferred:
            return self.ctx.other_game_decline(foreign, steps, query) or Answer(
                text=f"{NOT_IN_BOOKS} {foreign.note}.", outcome="not_in_books", steps=steps, question=query)
        text = render_quotes(hits, query)
        note = answer_note(verdict)
        if note:
            on.delta(f"{note}\n\n")  # the preamble (a rename, another book's name aside), said before the sources
        steps.append(TraceStep(name="quote", input={"source": best.source}, output={"quoted": len(hits)},
                               retrieved=[h.source_id for h in hits]))
        return Answer(text=text, outcome="answered", citations=[Citation.from_hit(h) for h in hits], steps=steps,
                      question=query, used=[h.source_id for h in hits])

    @staticmethod
    def _emit(answer: Answer, on: AnswerProgress, cancel: asyncio.Event | None = None) -> Answer:
        """Stream ``answer.text`` after what was already said (a rename note); the answer's text is all of it."""
        said = on.text()
        for i in range(0, len(answer.text), _CHUNK):
            if cancel is not None and cancel.is_set():
                answer.text = answer.text[:i]
                answer.outcome = "cancelled"
                break
            on.delta(answer.text[i : i + _CHUNK])
        answer.text = said + answer.text
        return answer
