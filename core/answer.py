"""Public API of the answer engine: ``answer_question`` and the ``Answer`` it returns.

The language server (``gmprep/ask``), the CLI (``gmprep ask``) and the answer eval all call
``answer_question``. With ``llm.backend == "extractive"`` no model runs: the answer is the best
passages quoted with citations (``gmprep.core.llm.extractive``). Any other backend runs the typed
step pipeline (``gmprep.core.agents.pipeline``). Either way the outcome is explicit and a question
the books do not answer is declined, never answered from outside knowledge.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from gmprep.common.settings import Settings
from gmprep.core.agents.relevance import RelevanceJudge
from gmprep.core.sources import KnowledgeSource, OtherSystemsSource, Searcher, SearchSource
from gmprep.core.traces import TraceStep
from gmprep.kg.models import Citation

if TYPE_CHECKING:
    from gmprep.core.agents.answerability import AnswerabilityJudge

# not_in_books: not a question these books answer; not_in_corpus: a PF2e rule only mentioned, never defined, by
# the bundled text (its prose is in a book the user has not added) -- gmprep.core.agents.answerability decides
Outcome = Literal["answered", "partial", "not_in_books", "not_in_corpus", "model_error", "cancelled"]

BOOKS_DESCRIPTION = "the Pathfinder 2e Remaster rulebooks (Player Core 1-2, GM Core, Monster Core)"
NOTES_DESCRIPTION = "the GM's own notes, house rules and homebrew"
NOT_IN_BOOKS = (
    "The books gmprep holds (Player Core, Player Core 2, GM Core, Monster Core) do not answer this, "
    "so I won't guess."
)


class ChatTurn(BaseModel):
    """One earlier message of the conversation."""

    role: Literal["user", "assistant"]
    content: str


class Answer(BaseModel):
    """The answer to one question, with its citations and the trace of how it was made."""

    text: str
    outcome: Outcome
    citations: list[Citation] = Field(default_factory=list)
    steps: list[TraceStep] = Field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    ms: float = 0.0
    question: str = ""  # the question as answered (rewritten to stand alone when there was history)
    backend: str = "extractive"

    @property
    def declined(self) -> bool:
        """True when the answer says the books (or the rules text gmprep holds) do not answer the question."""
        return self.outcome in ("not_in_books", "not_in_corpus")


class AnswerContext:
    """What every answer strategy needs: the searcher, the relevance judge and the knowledge sources.

    The judge encodes questions with the searcher's own embedder (one MiniLM per process and device)."""

    def __init__(self, searcher: Searcher, settings: Settings, judge: RelevanceJudge | None = None):
        self.searcher = searcher
        self.settings = settings
        store = searcher.store
        if judge is None:
            judge = RelevanceJudge(store, searcher.embedder)
        self.judge = judge
        self._answerability: AnswerabilityJudge | None = None
        self.other_systems = OtherSystemsSource(store)
        self.books = SearchSource("books", BOOKS_DESCRIPTION, searcher, judge, ["corpus:"], settings.books)
        self.notes = SearchSource("notes", NOTES_DESCRIPTION, searcher, judge, ["notes:"])

    @property
    def answerability(self) -> AnswerabilityJudge:
        """The answer / not_in_books / not_in_corpus decision (loaded on first use)."""
        if self._answerability is None:
            from gmprep.core.agents.answerability import AnswerabilityJudge

            self._answerability = AnswerabilityJudge(self.searcher.store, self.judge, books=self.settings.books)
        return self._answerability

    def search_sources(self) -> list[KnowledgeSource]:
        """The sources that can answer, in default order (books first), that hold anything."""
        return [s for s in (self.books, self.notes) if s.available()]


_CONTEXTS: dict[tuple[int, str], AnswerContext] = {}


def context_for(searcher: Searcher, settings: Settings) -> AnswerContext:
    """One context per (searcher, settings): the glossary scan and judge are reused across questions."""
    key = (id(searcher), settings.model_dump_json(include={"books", "device"}))
    ctx = _CONTEXTS.get(key)
    if ctx is None or ctx.searcher is not searcher:
        ctx = AnswerContext(searcher, settings)
        _CONTEXTS[key] = ctx
        while len(_CONTEXTS) > 4:  # searchers are replaced after a rebuild: forget the oldest
            _CONTEXTS.pop(next(iter(_CONTEXTS)))
    return ctx


_RESOLVERS: dict[int, object] = {}


def creators_route(question: str, searcher, on_delta: Callable[[str], None] | None) -> Answer | None:
    """An encounter or creature request goes to the deterministic builders (``gmprep.core.creators``):
    their numbers come from the GM Core tables, never from a model or retrieval. None: a rules question."""
    from gmprep.core.creators.chat import creators_answer

    def resolver():
        store = searcher.store
        if id(store) not in _RESOLVERS:  # one resolver per store (its creature list is read once)
            from gmprep.core.creators.resolver import CreatureResolver

            _RESOLVERS.clear()
            _RESOLVERS[id(store)] = CreatureResolver.from_store(store)
        return _RESOLVERS[id(store)]

    answer = creators_answer(question, resolver)
    if answer is not None and on_delta:
        on_delta(answer.text)
    return answer


def finish(answer: Answer, started: float) -> Answer:
    """Fill the totals (tokens, wall time) from the trace."""
    answer.tokens_in = sum(s.tokens_in for s in answer.steps)
    answer.tokens_out = sum(s.tokens_out for s in answer.steps)
    answer.ms = (time.perf_counter() - started) * 1000
    return answer


async def answer_question(
    question: str,
    *,
    history: list[ChatTurn],
    searcher: Searcher,
    settings: Settings,
    on_delta: Callable[[str], None] | None = None,
    cancel: asyncio.Event | None = None,
    context: AnswerContext | None = None,
    llm=None,
) -> Answer:
    """Answer ``question`` from the books (and the user's notes) only, with citations.

    ``history`` holds the earlier turns (oldest first). ``on_delta`` receives the answer text as it
    is produced; ``cancel`` stops the run, which then returns outcome ``cancelled`` with the text so far.
    ``context`` and ``llm`` override the per-process defaults (an embedding application, tests).
    """
    started = time.perf_counter()
    routed = creators_route(question, searcher, on_delta)
    if routed is not None:
        return finish(routed, started)
    ctx = context or context_for(searcher, settings)
    if llm is None and settings.llm.backend == "extractive":
        from gmprep.core.llm.extractive import ExtractiveAnswerer

        answer = await ExtractiveAnswerer(ctx).answer(question, history, on_delta=on_delta, cancel=cancel)
        return finish(answer, started)
    from gmprep.common.errors import GmprepError
    from gmprep.core.agents.pipeline import AgentPipeline
    from gmprep.core.llm.base import LLMError
    from gmprep.core.llm.factory import backend_for

    try:
        llm = llm or backend_for(settings.llm, settings.device)
    except (LLMError, GmprepError) as exc:
        text = f"The {settings.llm.backend} model is not available: {exc}"
        if on_delta:
            on_delta(text)
        step = TraceStep(name="load_model", status="failed", error=str(exc))
        return finish(Answer(text=text, outcome="model_error", steps=[step], question=question,
                             backend=settings.llm.backend), started)
    answer = await AgentPipeline(llm, ctx).run(question, history, on_delta=on_delta, cancel=cancel)
    return finish(answer, started)
