"""Public API of the answer engine: ``answer_question`` and the ``Answer`` it returns.

The language server (``gmprep/ask``), the CLI (``gmprep ask``) and the answer eval all call
``answer_question``. With the extractive backend no model runs: the answer is the best passages
quoted with citations (``gmprep.core.llm.extractive``). A model backend runs the typed step pipeline
(``gmprep.core.agents.pipeline``). ``llm.backend = "auto"`` picks one (``gmprep.core.llm.factory``).
Either way the outcome is explicit and a question the books do not answer is declined, never
answered from outside knowledge.

Streaming contract (``gmprep.core.progress``): ``on_sources`` is called exactly once, before the first
delta of the answer body (a rename-note delta may precede it), with the passages the answer is built
from; inline citations ``[1]``, ``[2]``, ... are positions in that list, which is also
``Answer.citations``. ``Answer.used`` lists the ids the text actually cites; ``Answer.timings_ms``
holds ``sources``, ``first_token`` and ``total`` (ms from the question).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from gmprep.common.settings import Settings
from gmprep.core.agents.relevance import RelevanceJudge
from gmprep.core.progress import AnswerProgress, OnDelta, OnSources, cited_ids
from gmprep.core.sources import KnowledgeSource, OtherSystemsSource, Searcher, SearchSource, SourceResult
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
    model: str = ""  # the model file (or folder / endpoint model) name; "" when no model ran
    # the source ids the answer text cites (``[n]`` into ``citations``), in first-cited order
    used: list[str] = Field(default_factory=list)
    # ms from the question: sources sent, first token of the answer body, done
    timings_ms: dict[str, float] = Field(default_factory=dict)

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
        self.other_systems = OtherSystemsSource(store, names=lambda: searcher.names,
                                                asked_only=settings.answerability.guard_asked,
                                                loose=settings.answerability.guard_loose_forms,
                                                derived=settings.answerability.guard_derived,
                                                feats=settings.answerability.guard_derived_feats,
                                                antecedent=settings.answerability.guard_antecedent,
                                                possessive=settings.answerability.guard_possessive,
                                                inflected=settings.answerability.guard_derived_inflections,
                                                legacy=settings.answerability.guard_legacy)
        self.books = SearchSource("books", BOOKS_DESCRIPTION, searcher, judge, ["corpus:"], settings.books)
        self.notes = SearchSource("notes", NOTES_DESCRIPTION, searcher, judge, ["notes:"])

    @property
    def answerability(self) -> AnswerabilityJudge:
        """The answer / not_in_books / not_in_corpus decision (loaded on first use)."""
        if self._answerability is None:
            from gmprep.core.agents.answerability import AnswerabilityJudge

            # the search's own reading of initials (``search.initials``) is the one the model's features get
            names = getattr(self.searcher, "names", None)
            initials = getattr(getattr(self.searcher, "settings", None), "initials", False)
            spelled = names.spelled_out if names is not None and initials else None
            self._answerability = AnswerabilityJudge(self.searcher.store, self.judge, books=self.settings.books,
                                                     settings=self.settings.answerability, spelled_out=spelled)
        return self._answerability

    def other_game_decline(self, result: SourceResult, steps: list[TraceStep], question: str,
                           backend: str = "extractive") -> Answer | None:
        """The not_in_corpus decline for another game's rule asked by name (the guard's ``game_term``), when
        ``answerability.other_game_not_in_corpus`` is on, or the term is a pre-Remaster Pathfinder 2e name the Remaster
        dropped (``SourceResult.legacy``, read only with ``answerability.guard_legacy``), or the question as a whole reads
        as another game's (``answerability.edition_threshold``); else None. One owner for both answer paths."""
        from gmprep.core.agents.answerability import decline_text

        if result.game_term and (self.settings.answerability.other_game_not_in_corpus or result.legacy):
            verdict = self.answerability.other_game(result.game_term, result.game, legacy=result.legacy)
        else:
            # the question reads as another game's as a whole (``answerability.edition_threshold``): that game's
            # rule, whose text gmprep does not hold, not only a term of it in a PF2e question
            edition = self.answerability.edition_decline(question)
            if edition is None:
                return None
            verdict = edition
            if not verdict.foreign_book and result.game:  # the guard's game when the reader names none
                verdict.foreign_book = result.game
        steps.append(TraceStep(name="answerability", input={"source": result.source}, output=verdict.trace_output()))
        return Answer(text=decline_text(verdict, []), outcome="not_in_corpus", steps=steps, question=question,
                      backend=backend)

    def search_sources(self) -> list[KnowledgeSource]:
        """The sources that can answer, in default order (books first), that hold anything."""
        return [s for s in (self.books, self.notes) if s.available()]


_CONTEXTS: dict[tuple[int, str], AnswerContext] = {}


def context_for(searcher: Searcher, settings: Settings) -> AnswerContext:
    """One context per (searcher, settings): the glossary scan and judge are reused across questions."""
    key = (id(searcher), settings.model_dump_json(include={"books", "device", "answerability", "llm"}))
    ctx = _CONTEXTS.get(key)
    if ctx is None or ctx.searcher is not searcher:
        ctx = AnswerContext(searcher, settings)
        _CONTEXTS[key] = ctx
        while len(_CONTEXTS) > 4:  # searchers are replaced after a rebuild: forget the oldest
            _CONTEXTS.pop(next(iter(_CONTEXTS)))
    return ctx


_RESOLVERS: dict[int, object] = {}


def creators_route(question: str, searcher, progress: AnswerProgress, history: Sequence[ChatTurn] = ()) -> Answer | None:
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

    # the user's earlier messages: an edit of the last build ("make it level 7") is read against them
    answer = creators_answer(question, resolver, [t.content for t in history if t.role == "user"])
    if answer is not None:
        progress.sources(answer.citations)
        progress.delta(answer.text)
    return answer


def finish(answer: Answer, progress: AnswerProgress) -> Answer:
    """Fill the totals (tokens, timings) from the trace and the progress; make sure the sources were sent
    (once) and that ``used`` is known."""
    if progress.sent is None:
        progress.sources(answer.citations)
    answer.tokens_in = sum(s.tokens_in for s in answer.steps)
    answer.tokens_out = sum(s.tokens_out for s in answer.steps)
    answer.timings_ms = progress.timings()
    answer.ms = answer.timings_ms["total"]
    if not answer.used:
        answer.used = cited_ids(answer.text, answer.citations)
    return answer


async def answer_question(
    question: str,
    *,
    history: list[ChatTurn],
    searcher: Searcher,
    settings: Settings,
    on_delta: OnDelta | None = None,
    cancel: asyncio.Event | None = None,
    context: AnswerContext | None = None,
    llm=None,
    on_sources: OnSources | None = None,
) -> Answer:
    """Answer ``question`` from the books (and the user's notes) only, with citations.

    ``history`` holds the earlier turns (oldest first). ``on_sources`` receives the passages the answer
    is built from, once, before the answer body; ``on_delta`` receives the answer text as it is
    produced (see the module doc for the contract); ``cancel`` stops the run, which then returns
    outcome ``cancelled`` with the text so far. ``context`` and ``llm`` override the per-process
    defaults (an embedding application, tests).
    """
    progress = AnswerProgress(on_delta, on_sources)
    routed = creators_route(question, searcher, progress, history)
    if routed is not None:
        return finish(routed, progress)
    ctx = context or context_for(searcher, settings)
    from gmprep.core.llm.factory import resolve_backend

    choice = resolve_backend(settings) if llm is None else None
    if llm is None and choice is not None and choice.backend == "extractive":
        from gmprep.core.llm.extractive import ExtractiveAnswerer

        answer = await ExtractiveAnswerer(ctx).answer(question, history, progress=progress, cancel=cancel)
        return finish(answer, progress)
    from gmprep.common.errors import GmprepError
    from gmprep.core.agents.pipeline import AgentPipeline
    from gmprep.core.llm.base import LLMError
    from gmprep.core.llm.factory import backend_for

    try:
        llm = llm or backend_for(choice.llm if choice else settings.llm, settings.device)
    except (LLMError, GmprepError) as exc:
        name = choice.backend if choice else settings.llm.backend
        text = f"The {name} model is not available: {exc}"
        progress.delta(text)
        step = TraceStep(name="load_model", status="failed", error=str(exc))
        return finish(Answer(text=text, outcome="model_error", steps=[step], question=question, backend=name),
                      progress)
    answer = await AgentPipeline(llm, ctx).run(question, history, progress=progress, cancel=cancel)
    return finish(answer, progress)
