"""The real llama.cpp path on CPU with SmolLM2-135M (98 MB GGUF from PyPI): a genuine generation.

Checks the mechanics, not answer quality: the GGUF's chat template is applied, streamed pieces add
up to the reply, JSON-schema constrained output parses into the pydantic schema, prompt prefixes
are reused from the cache, and cancellation stops decoding early.
"""

from __future__ import annotations

import asyncio
from typing import Literal

import pytest
from pydantic import BaseModel, Field
from smollm import smollm2_path

from gmprep.core.llm.base import ChatMessage, LLMCancelledError

pytest.importorskip("xllamacpp")



@pytest.fixture(scope="module")
def llm():
    from gmprep.core.llm.llamacpp import LlamaCppBackend

    return LlamaCppBackend(smollm2_path(), n_ctx=2048, n_threads=2, max_tokens=48)


class Condition(BaseModel):
    name: str = Field(max_length=30)
    penalty: int = Field(ge=-10, le=10)
    kind: Literal["status", "circumstance", "item"]


SYSTEM = ChatMessage(role="system", content="You answer Pathfinder rules questions briefly.")


async def test_streamed_reply_with_chat_template_and_usage(llm):
    pieces: list[str] = []
    msgs = [SYSTEM, ChatMessage(role="user", content="Name one condition in Pathfinder.")]
    done = await llm.complete(msgs, on_token=pieces.append, max_tokens=24)
    assert done.text.strip()
    assert "".join(pieces) == done.text
    assert len(pieces) > 1  # streamed, not delivered in one piece
    # the chat template wraps both messages with role markers: far more tokens than the raw words
    assert done.usage.prompt > len(" ".join(m.content for m in msgs).split())
    assert 0 < done.usage.completion <= 24


async def test_constrained_json_parses_into_the_schema(llm):
    msgs = [SYSTEM, ChatMessage(role="user", content="Describe the frightened condition as JSON.")]
    value, done = await llm.structured(msgs, Condition, max_tokens=80)
    assert isinstance(value, Condition)
    assert done.finish_reason == "stop"
    # the same prefix again: llama.cpp reuses the cached prompt tokens
    _, again = await llm.structured(msgs, Condition, max_tokens=80)
    assert again.usage.cached > 0


async def test_cancel_stops_decoding(llm):
    cancel = asyncio.Event()
    seen: list[str] = []

    def on_token(piece: str) -> None:
        seen.append(piece)
        if len(seen) == 3:
            cancel.set()

    msgs = [SYSTEM, ChatMessage(role="user", content="Write a long story about a dragon.")]
    with pytest.raises(LLMCancelledError) as info:
        await llm.complete(msgs, on_token=on_token, cancel=cancel, max_tokens=200)
    assert info.value.completion.cancelled
    assert len(info.value.completion.text) < 200 * 8 and len(seen) < 50
    usage = info.value.completion.usage  # stopped before the usage chunk: the per-token timings count it
    assert usage.prompt > 10 and 3 <= usage.completion < 50


async def test_stream_iterator(llm):
    msgs = [SYSTEM, ChatMessage(role="user", content="Say hello.")]
    pieces = [p async for p in llm.stream(msgs, max_tokens=8)]
    assert pieces and all(isinstance(p, str) for p in pieces)


def test_yes_no_reads_the_first_tokens_probabilities(llm):
    """The support check's reader call (``llm.support_reader``): log P(yes) - log P(no) of the reply's first token,
    a finite number from the model's top log-probabilities (SmolLM2 is too small to judge: mechanics only)."""
    from gmprep.core.agents.support import reader_prompt

    messages = [ChatMessage.model_validate(m) for m in reader_prompt(
        "Frightened gives a status penalty to checks [1].",
        [("Frightened", "You take a status penalty equal to this value to all your checks and DCs.")])]
    first = llm.yes_no(messages)
    assert isinstance(first, float) and -40.0 <= first <= 40.0
    # the second call reads the passage from the prefix cache (numbers may move a little: another batch shape)
    again = llm.yes_no(messages)
    assert isinstance(again, float) and abs(again - first) < 2.0
