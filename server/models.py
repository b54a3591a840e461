"""Params and results of the custom ``gmprep/*`` requests (docs/protocol.md), camelCase on the wire."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from gmprep.core.conversations import ConversationSummary, StoredMessage
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
    question: str = Field(min_length=1, max_length=8000)
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
    source_id: str
    name: str
    type: str
    book: str | None = None
    page: str | None = None
    path: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, c: Citation) -> CitationOut:
        return cls(**c.model_dump())


class HitOut(CitationOut):
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
    id: str
    role: str
    text: str
    citations: list[CitationOut] = Field(default_factory=list)
    outcome: str | None = None
    created_at: str
    trace_id: str | None = None
    reply_to: str | None = None  # an answer: the id of the question it answers

    @classmethod
    def of(cls, m: StoredMessage, has_trace: bool = False) -> MessageOut:
        return cls(
            id=m.id, role=m.role, text=m.text, citations=[CitationOut.of(c) for c in m.citations],
            outcome=m.outcome, created_at=m.created_at, trace_id=m.id if has_trace else None, reply_to=m.reply_to,
        )


class ConversationOut(Wire):
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
    name: str
    status: str = "ok"
    error: str | None = None
    input: Any = None
    output: Any = None
    ms: float | None = None
    tokens: int | None = None
    retrieved: list[str] = Field(default_factory=list)
