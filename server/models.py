"""The wire protocol of the custom ``gmprep/*`` requests and notifications, in one place.

Params, results and notification payloads are pydantic models, camelCase on the wire; ``REQUESTS``,
``NOTIFICATIONS`` and ``COMMANDS`` name every method. ``python -m gmprep.server.protocol_gen`` turns this
module into the extension's ``clients/vscode/src/shared/protocol.ts`` and the tables of
``docs/protocol.md`` (``--check`` in CI fails when either is stale), so change the protocol here only.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from gmprep.core.conversations import ConversationSummary, StoredMessage
from gmprep.core.question import QUESTION_MAX_CHARS
from gmprep.kg.models import Citation, Hit


class Wire(BaseModel):
    """camelCase JSON, snake_case Python; unknown keys ignored."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def wire(self) -> dict[str, Any]:
        """The JSON object sent to the client."""
        return self.model_dump(by_alias=True, mode="json")


# ---- params -----------------------------------------------------------------------------------
class SearchParams(Wire):
    query: str = Field(min_length=1, max_length=2000)
    k: int = Field(default=10, ge=1, le=100)
    books: list[str] = Field(default_factory=list)
    types: list[str] = Field(default_factory=list)


class EntryParams(Wire):
    id: str = Field(min_length=1)


class AskParams(Wire):
    question: str = Field(min_length=1, max_length=QUESTION_MAX_CHARS)
    uri: str
    conversation_id: str | None = None
    partial_result_token: int | str | None = None


class UriParams(Wire):
    uri: str


class IdParams(Wire):
    id: str


class NewConversationParams(Wire):
    uri: str
    title: str | None = None


class TraceParams(Wire):
    message_id: str


# ---- results ----------------------------------------------------------------------------------
class CitationOut(Wire):
    """Where a passage comes from; `page` is text ("12", "xii") or null when unknown."""

    source_id: str
    name: str
    type: str
    book: str | None = None
    page: str | None = None
    path: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, c: Citation) -> CitationOut:
        return cls(**c.model_dump())


class SourceOut(CitationOut):
    """A passage an answer draws on: `n` is its number in the answer text (`[n]` cites it); `where` is
    "Book, p. N" and `label` "Name (Book, p. N) [id]", written by the server as every other source."""

    model_config = ConfigDict(title="Source")

    n: int
    where: str
    label: str

    @classmethod
    def numbered(cls, n: int, c: Citation) -> SourceOut:
        return cls(**c.model_dump(), n=n, where=c.where(), label=c.label())


class HitOut(CitationOut):
    """A search result: a citation plus its score and text."""

    score: float
    text: str
    level: int | None = None
    traits: list[str] = Field(default_factory=list)
    via: str = "seed"

    @classmethod
    def of_hit(cls, h: Hit) -> HitOut:
        return cls(
            source_id=h.source_id, name=h.name, type=h.type, book=h.book, page=h.page, path=h.path,
            score=h.score, text=h.text, level=h.level, traits=h.traits, via=h.via,
        )


class MessageOut(Wire):
    """A saved chat message; `traceId` is set (to the message id) when a trace was recorded; `replyTo` is,
    on an answer, the id of the question it answers; `used`, on an answer, the source ids its text cites
    (null when it was saved before they were kept)."""

    model_config = ConfigDict(title="Message")

    id: str
    role: Literal["user", "assistant"]
    text: str
    citations: list[CitationOut] = Field(default_factory=list)
    outcome: str | None = None
    created_at: str
    trace_id: str | None = None
    reply_to: str | None = None  # an answer: the id of the question it answers
    used: list[str] | None = None  # an answer: the source ids its text cites (null: saved before it was kept)

    @classmethod
    def of(cls, m: StoredMessage, has_trace: bool = False) -> MessageOut:
        return cls(
            id=m.id, role=m.role, text=m.text, citations=[CitationOut.of(c) for c in m.citations],
            outcome=m.outcome, created_at=m.created_at, trace_id=m.id if has_trace else None, reply_to=m.reply_to,
            used=m.used,
        )


class ConversationOut(Wire):
    """A conversation of one prep file; `path` is workspace-relative, `title` the first question
    unless one was given."""

    model_config = ConfigDict(title="ConversationSummary")

    id: str
    title: str
    uri: str
    path: str
    created_at: str
    updated_at: str
    message_count: int

    @classmethod
    def of(cls, c: ConversationSummary, uri: str) -> ConversationOut:
        return cls(
            id=c.id, title=c.title, uri=uri, path=c.path, created_at=c.created_at, updated_at=c.updated_at,
            message_count=c.message_count,
        )


class TraceStepOut(Wire):
    """One step of the run behind an answer."""

    model_config = ConfigDict(title="TraceStep")

    name: str
    status: str = "ok"
    error: str | None = None
    input: Any = None
    output: Any = None
    ms: float | None = None
    tokens: int | None = None
    retrieved: list[str] = Field(default_factory=list)


IndexState = Literal["empty", "building", "ready", "error"]


class StatusResult(Wire):
    """The index state; `percentage` while building."""

    state: IndexState
    message: str
    entries: int
    embeddings: bool
    names_ready: bool
    percentage: int | None = None


class SearchResult(Wire):
    hits: list[HitOut]


class EntryResult(Wire):
    """A full entry with its ancestors, as markdown."""

    id: str
    markdown: str
    citation: CitationOut


class TimingsOut(Wire):
    """Milliseconds from the question to the sources, to the first answer token, to the whole answer
    (null when that point was not reached, e.g. a declined question streams no model token)."""

    model_config = ConfigDict(title="Timings")

    sources: float | None = None
    first_token: float | None = None
    total: float | None = None


class AskResult(Wire):
    """`used`: the source ids the answer text cites (of `answer.citations`); `backend` and `model`: what
    answered; `notice`: one line when the answer came without a model that could have run (why, and the
    command that turns it on), else null."""

    conversation_id: str
    user_message: MessageOut
    answer: MessageOut
    used: list[str] = Field(default_factory=list)
    timings_ms: TimingsOut = Field(default_factory=TimingsOut)
    backend: str = "extractive"
    model: str | None = None
    notice: str | None = None


class ConversationsResult(Wire):
    conversations: list[ConversationOut]


class ConversationResult(Wire):
    conversation: ConversationOut
    messages: list[MessageOut]


class ConversationNewResult(Wire):
    conversation: ConversationOut


class DeletedResult(Wire):
    deleted: bool


class ExportResult(Wire):
    markdown: str


class TraceResult(Wire):
    steps: list[TraceStepOut]


class StartedResult(Wire):
    started: bool


class AppliedResult(Wire):
    applied: bool


class IgnoredWordResult(Wire):
    file: str
    ignored: str


class EmptyParams(Wire):
    pass


# ---- notifications (server -> client) ---------------------------------------------------------
class AnswerDelta(Wire):
    """Answer text streamed while `gmprep/ask` runs; `requestId` is the JSON-RPC id of the ask."""

    conversation_id: str
    request_id: int | str | None = None
    delta: str


class AnswerSources(Wire):
    """The numbered passages an answer draws on, sent once per `gmprep/ask` before its first
    `gmprep/answerDelta`; the answer text cites them as `[n]`."""

    conversation_id: str
    request_id: int | str | None = None
    sources: list[SourceOut]


class IndexStateNotification(Wire):
    state: IndexState
    message: str
    percentage: int | None = None


# ---- the method tables --------------------------------------------------------------------------
class Request(NamedTuple):
    method: str
    key: str  # the name in the extension's ``Methods`` table
    params: type[Wire]
    result: type[Wire]
    note: str = ""


class Notification(NamedTuple):
    method: str
    key: str
    payload: type[Wire]
    note: str = ""


class Command(NamedTuple):
    command: str
    key: str
    arguments: str  # the argument list as written in the docs
    result: type[Wire] | None
    note: str = ""


REQUESTS: tuple[Request, ...] = (
    Request("gmprep/status", "status", EmptyParams, StatusResult),
    Request("gmprep/search", "search", SearchParams, SearchResult, "`books` defaults to the configured books"),
    Request("gmprep/entry", "entry", EntryParams, EntryResult, "the full entry with its ancestors"),
    Request("gmprep/ask", "ask", AskParams, AskResult, "without `conversationId` a new conversation starts for `uri`"),
    Request("gmprep/conversations", "conversations", UriParams, ConversationsResult, "newest first"),
    Request("gmprep/conversation", "conversation", IdParams, ConversationResult),
    Request("gmprep/conversation/new", "conversationNew", NewConversationParams, ConversationNewResult),
    Request("gmprep/conversation/delete", "conversationDelete", IdParams, DeletedResult, "its messages' traces go too"),
    Request("gmprep/conversation/export", "conversationExport", IdParams, ExportResult),
    Request("gmprep/trace", "trace", TraceParams, TraceResult, "`steps` is `[]` when none were recorded"),
    Request("gmprep/index/rebuild", "rebuild", EmptyParams, StartedResult, "progress via `$/progress`"),
)

NOTIFICATIONS: tuple[Notification, ...] = (
    Notification("gmprep/answerSources", "answerSources", AnswerSources,
                 "the passages the answer draws on, numbered as the answer cites them (`[n]`), before any delta"),
    Notification("gmprep/answerDelta", "answerDelta", AnswerDelta,
                 "streamed answer text while `gmprep/ask` runs; the final text is the result's `answer.text`"),
    Notification("gmprep/indexState", "indexState", IndexStateNotification,
                 "index state changes (also reported with work-done `$/progress` while building)"),
)

INSERT_RULE_TEXT = "gmprep.insertRuleText"
REPLACE_LEGACY_NAME = "gmprep.replaceLegacyName"
REBUILD_INDEX = "gmprep.rebuildIndex"
ASK_ABOUT_SELECTION = "gmprep.askAboutSelection"  # client-side: the code action opens the chat with [text, uri]
IGNORE_WORD = "gmprep.ignoreWord"  # the code action "Don't hover 'X' in this workspace"

COMMANDS: tuple[Command, ...] = (
    Command(INSERT_RULE_TEXT, "insertRuleText", "[uri, line, character]", AppliedResult,
            "applies (via `workspace/applyEdit`) the rule quote below that line"),
    Command(REPLACE_LEGACY_NAME, "replaceLegacyName", "[uri, range, newName]", AppliedResult,
            "applies the replacement"),
    Command(REBUILD_INDEX, "rebuildIndex", "[]", StartedResult, "starts a full rebuild"),
    Command(IGNORE_WORD, "ignoreWord", "[word]", IgnoredWordResult,
            "adds the word to `hover.ignore_words` in the workspace `gmprep.toml` and rescans open notes"),
    Command(ASK_ABOUT_SELECTION, "askAboutSelection", "[text, uri]", None,
            "client-side: the code action \"Ask gmprep about this\" carries it; the client opens the chat"),
)
