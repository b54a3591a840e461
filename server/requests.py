"""The custom ``gmprep/*`` requests of docs/protocol.md: validate params, call kg/core, shape results."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from gmprep.common.errors import GmprepError
from gmprep.core import exchange
from gmprep.core.conversations import ConversationSummary, StoredMessage
from gmprep.core.question import question_problem
from gmprep.kg.models import Citation, SearchFilters
from gmprep.server.ask import AnswerRun
from gmprep.server.markdown import meta_line, readable, where
from gmprep.server.models import (
    AnswerDelta,
    AnswerSources,
    AskParams,
    AskResult,
    CitationOut,
    ConversationNewResult,
    ConversationOut,
    ConversationResult,
    ConversationsResult,
    DeletedResult,
    EntryParams,
    EntryResult,
    ExportResult,
    HitOut,
    IdParams,
    MessageOut,
    NewConversationParams,
    SearchParams,
    SearchResult,
    SourceOut,
    StartedResult,
    StatusResult,
    TimingsOut,
    TraceParams,
    TraceResult,
    TraceStepOut,
    UriParams,
)

if TYPE_CHECKING:
    from gmprep.common.settings import Settings
    from gmprep.core.answer import Answer
    from gmprep.server.app import GmprepServer

log = logging.getLogger(__name__)

REQUEST_FAILED = -32803  # LSP ErrorCodes.RequestFailed
T = TypeVar("T", bound=BaseModel)


def parse(model: type[T], params: Any) -> T:
    """Validate request params into ``model``; bad params become an InvalidParams error."""
    try:
        return model.model_validate(params if params is not None else {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where_ = ".".join(str(p) for p in first.get("loc", ())) or "params"
        raise JsonRpcInvalidParams(f"invalid params: {where_}: {first.get('msg')}") from None


def failed(message: str) -> JsonRpcException:
    """A RequestFailed error with a message for the user."""
    return JsonRpcException(message=message, code=REQUEST_FAILED)


def status(ls: GmprepServer, params: Any) -> dict:
    """``gmprep/status``."""
    return StatusResult.model_validate(ls.state.status.model_dump()).wire()


async def search(ls: GmprepServer, params: Any) -> dict:
    """``gmprep/search``: hybrid search over the index."""
    p = parse(SearchParams, params)
    state = ls.state
    filters = SearchFilters(books=p.books or list(state.settings.books), types=p.types)
    try:
        searcher = await asyncio.to_thread(state.searcher)
        hits = await asyncio.to_thread(searcher.search, p.query, p.k, filters)
    except GmprepError as exc:
        raise failed(str(exc)) from None
    return SearchResult(hits=[HitOut.of_hit(h) for h in hits]).wire()


def entry(ls: GmprepServer, params: Any) -> dict:
    """``gmprep/entry``: the full entry as markdown (with its ancestors) and its citation."""
    p = parse(EntryParams, params)
    node = ls.state.node(p.id)
    if node is None:
        raise failed(f"no entry {p.id!r}")
    markdown = None
    try:
        markdown = ls.entries.render(p.id)
    except Exception:
        log.exception("render_entry(%s) failed", p.id)
    if markdown is None:  # index still building: the bundled text, without the graph context
        markdown = f"# {node.name}\n\n*{meta_line(node)}* — {where(node)} · `{node.source_id}`\n\n{readable(node.text)}\n"
    return EntryResult(id=node.node_id, markdown=markdown, citation=CitationOut.of(Citation.from_node(node))).wire()


def _conversation_out(ls: GmprepServer, conv: ConversationSummary) -> ConversationOut:
    return ConversationOut.of(conv, ls.state.uri_of(conv.path))


def _message_out(ls: GmprepServer, m: StoredMessage) -> MessageOut:
    traces = ls.state.traces() if m.role == "assistant" else None
    return MessageOut.of(m, has_trace=bool(traces and traces.load(m.id)))


def conversations(ls: GmprepServer, params: Any) -> dict:
    """``gmprep/conversations``: the conversations of one prep file, newest first."""
    p = parse(UriParams, params)
    convs = ls.state.conversations().list_for(ls.state.relpath(p.uri))
    return ConversationsResult(conversations=[_conversation_out(ls, c) for c in convs]).wire()


def conversation(ls: GmprepServer, params: Any) -> dict:
    """``gmprep/conversation``: one conversation with its messages."""
    p = parse(IdParams, params)
    store = ls.state.conversations()
    conv = store.get(p.id)
    if conv is None:
        raise failed(f"no conversation {p.id!r}")
    messages = [_message_out(ls, m) for m in store.messages(p.id)]
    return ConversationResult(conversation=_conversation_out(ls, conv), messages=messages).wire()


def conversation_new(ls: GmprepServer, params: Any) -> dict:
    """``gmprep/conversation/new``."""
    p = parse(NewConversationParams, params)
    conv = ls.state.conversations().create(ls.state.relpath(p.uri), p.title)
    return ConversationNewResult(conversation=_conversation_out(ls, conv)).wire()


def conversation_delete(ls: GmprepServer, params: Any) -> dict:
    """``gmprep/conversation/delete``."""
    p = parse(IdParams, params)
    store, traces = ls.state.conversations(), ls.state.traces()
    if traces is not None:
        for m in store.messages(p.id):
            traces.delete(m.id)
    return DeletedResult(deleted=store.delete(p.id)).wire()


def conversation_export(ls: GmprepServer, params: Any) -> dict:
    """``gmprep/conversation/export``: the conversation as markdown."""
    p = parse(IdParams, params)
    try:
        return ExportResult(markdown=ls.state.conversations().export_markdown(p.id)).wire()
    except KeyError:
        raise failed(f"no conversation {p.id!r}") from None


def trace(ls: GmprepServer, params: Any) -> dict:
    """``gmprep/trace``: the steps behind one answer (empty when none were recorded)."""
    p = parse(TraceParams, params)
    traces = ls.state.traces()
    steps = traces.load(p.message_id) if traces is not None else []
    out = [
        TraceStepOut(
            name=step.name, status=step.status, input=step.input, output=step.output, ms=step.ms,
            tokens=step.tokens, retrieved=list(step.retrieved), error=step.error,
        )
        for step in steps
    ]
    return TraceResult(steps=out).wire()


def rebuild(ls: GmprepServer, params: Any) -> dict:
    """``gmprep/index/rebuild``: start a full rebuild in the background."""
    return StartedResult(started=ls.start_index(force=True)).wire()


async def ask(ls: GmprepServer, params: Any) -> dict:
    """``gmprep/ask``: answer a question in a prep file's conversation, streaming
    ``gmprep/answerDelta``; a cancelled ask saves and returns the partial answer (outcome ``cancelled``)."""
    p = parse(AskParams, params)
    problem = question_problem(p.question)  # the CLI's rule too: a blank question is refused before anything is saved
    if problem:
        raise JsonRpcInvalidParams(f"invalid params: question: {problem}")
    state = ls.state
    request_id = ls.protocol.msg_id
    cancelled_early = False
    try:
        searcher = await asyncio.to_thread(state.searcher)
    except GmprepError as exc:
        raise failed(str(exc)) from None
    except asyncio.CancelledError:
        # cancelled while the search models loaded: still record the question, answer "cancelled"
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        searcher, cancelled_early = None, True
    convs = state.conversations()
    try:
        ex = exchange.begin(convs, p.question, state.relpath(p.uri), p.conversation_id)
    except GmprepError as exc:
        raise failed(str(exc)) from None
    conv_id = ex.conversation.id
    loop = asyncio.get_running_loop()

    def on_delta(text: str) -> None:
        payload = AnswerDelta(conversation_id=conv_id, request_id=request_id, delta=text).wire()
        loop.call_soon_threadsafe(ls.protocol.notify, "gmprep/answerDelta", payload)

    def on_sources(cited: list[Citation]) -> None:
        # Queued on the server loop like the deltas, so it reaches the client before the first of them.
        sources = [SourceOut.numbered(n, c) for n, c in enumerate(cited, 1)]
        payload = AnswerSources(conversation_id=conv_id, request_id=request_id, sources=sources).wire()
        loop.call_soon_threadsafe(ls.protocol.notify, "gmprep/answerSources", payload)

    run = AnswerRun(ls.worker)
    answer, error = None, None
    if cancelled_early or searcher is None:
        run.cancelled = True
    else:
        try:
            answer = await run.run(p.question, ex.history, searcher, state.settings, on_delta, on_sources)
        except Exception as exc:  # the engine failed: keep what streamed, say so
            log.exception("answer_question failed")
            error = exc
    if answer is not None:
        text, citations, steps = answer.text, list(answer.citations), list(answer.steps)
        outcome = "cancelled" if run.cancelled else answer.outcome
    else:
        # No answer came back (cancelled past the grace period, or the engine failed): keep the text that
        # streamed and the sources the user saw above it.
        text, citations, steps = "".join(run.deltas), list(run.sources or []), []
        outcome = "cancelled" if run.cancelled else "model_error"
        if error is not None and not text:
            text = f"The answer engine failed: {error}"
    used = list(answer.used) if answer is not None else None
    saved = exchange.finish(convs, state.traces(), ex, text, citations, outcome, steps, used)
    extra = _answer_facts(answer, state.settings)
    return AskResult(
        conversation_id=conv_id, user_message=_message_out(ls, ex.question), answer=_message_out(ls, saved), **extra
    ).wire()


def _answer_facts(answer: Answer | None, settings: Settings) -> dict[str, Any]:
    """What the result says beside the saved message: the ids the text cites, the timings, what answered, and
    the notice when ``auto`` found no model to run (its reason names the command that installs one)."""
    from gmprep.core.llm.factory import resolve_backend

    choice = resolve_backend(settings)  # the one owner of "auto" and of its reason
    notice = choice.reason if choice.auto and choice.backend == "extractive" else None
    if answer is None:
        return {"backend": choice.backend, "notice": notice}
    return {
        "used": list(answer.used),
        "timings_ms": TimingsOut.model_validate(answer.timings_ms),
        "backend": answer.backend,
        "model": answer.model or None,
        "notice": notice if answer.backend == "extractive" else None,
    }
