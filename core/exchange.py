"""Asking inside a saved conversation, for the language server (``gmprep/ask``) and the CLI
(``gmprep ask``) alike: the one owner of that rule.

1. ``begin``: find (or start) the conversation, read its history, save the user's question - before
   anything is answered, so a killed CLI or server keeps it;
2. the caller runs ``answer_question`` its own way (streaming to an editor or a terminal);
3. ``finish``: save the answer linked to its question (``reply_to``) and always its trace.

History is what was said before this question, in reading order; a question another window asked
that has no answer yet is left out (it is not part of what this answer follows on from).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from gmprep.common.errors import GmprepError
from gmprep.core.answer import ChatTurn
from gmprep.core.conversations import ConversationStore, ConversationSummary, StoredMessage
from gmprep.core.traces import TraceStep, TraceStore
from gmprep.kg.models import Citation

log = logging.getLogger(__name__)


class UnknownConversation(GmprepError):
    """The conversation id names no saved conversation."""


class Exchange(BaseModel):
    """A question saved in its conversation, waiting for its answer."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    conversation: ConversationSummary
    question: StoredMessage
    history: list[ChatTurn]


def history(convs: ConversationStore, conversation_id: str) -> list[ChatTurn]:
    """A conversation's answered exchanges in reading order (unanswered questions left out)."""
    messages = convs.messages(conversation_id)
    turns: list[ChatTurn] = []
    for i, m in enumerate(messages):
        answered = m.role == "assistant" or (i + 1 < len(messages) and messages[i + 1].role == "assistant")
        if answered:
            turns.append(ChatTurn(role=m.role, content=m.text))
    return turns


def find(convs: ConversationStore, conversation_id: str) -> ConversationSummary:
    """A saved conversation, or UnknownConversation."""
    conv = convs.get(conversation_id)
    if conv is None:
        raise UnknownConversation(f"no conversation {conversation_id!r}")
    return conv


def begin(convs: ConversationStore, question: str, path: str, conversation_id: str | None = None) -> Exchange:
    """Save ``question`` in conversation ``conversation_id`` (a new one about prep file ``path`` when
    None) and return it with the history the answer follows on from."""
    conv = find(convs, conversation_id) if conversation_id else convs.create(path)
    turns = history(convs, conv.id)
    saved = convs.add_message(conv.id, "user", question)
    return Exchange(conversation=conv, question=saved, history=turns)


def finish(
    convs: ConversationStore,
    traces: TraceStore | None,
    exchange: Exchange,
    text: str,
    citations: Sequence[Citation],
    outcome: str,
    steps: Sequence[TraceStep] = (),
    used: Sequence[str] | None = None,
) -> StoredMessage:
    """Save the answer to ``exchange.question`` (with the source ids its text cites, ``used``, so a
    reopened conversation shows them as the live one did) and its trace (a trace that cannot be saved
    is logged: the answer itself is already safe)."""
    saved = convs.add_message(
        exchange.conversation.id, "assistant", text, list(citations), outcome, reply_to=exchange.question.id,
        used=used,
    )
    if traces is not None:
        try:
            traces.save(saved.id, list(steps))
        except Exception:
            log.exception("could not save the trace of %s", saved.id)
    return saved
