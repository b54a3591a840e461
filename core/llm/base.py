"""One interface for every answer model: chat messages in, text or a validated pydantic object out.

A backend implements a single blocking call, ``_generate``, that streams text pieces to a callback
and polls a stop predicate between tokens. ``LLMBackend`` wraps it for asyncio: the blocking call
runs in a worker thread (so independent plan nodes really overlap where the backend can serve them
in parallel), pieces are handed back to the event loop thread, and an ``asyncio.Event`` cancels.
Structured output sends the pydantic model's JSON schema to the backend, which constrains decoding
to it; the text is then validated with pydantic, so a caller only ever sees a valid object or
``LLMOutputError``.
"""

from __future__ import annotations

import asyncio
import copy
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from typing import Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError

from gmprep.common.errors import GmprepError

T = TypeVar("T", bound=BaseModel)

OnToken = Callable[[str], None]
ShouldStop = Callable[[], bool]


class ChatMessage(BaseModel):
    """One chat message."""

    role: Literal["system", "user", "assistant"]
    content: str


class TokenUsage(BaseModel):
    """Token counts of one call; ``cached`` is the prompt prefix the backend reused."""

    prompt: int = 0
    completion: int = 0
    cached: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt=self.prompt + other.prompt,
            completion=self.completion + other.completion,
            cached=self.cached + other.cached,
        )


class Completion(BaseModel):
    """The text a backend produced, with its token counts and how it ended."""

    text: str
    usage: TokenUsage = Field(default_factory=TokenUsage)
    finish_reason: str | None = None
    cancelled: bool = False
    ms: float = 0.0


class LLMError(GmprepError):
    """The model backend failed (not loadable, unreachable, or returned an error)."""


class LLMOutputError(LLMError):
    """The model's output did not validate against the requested schema."""

    def __init__(self, message: str, raw: str, completion: Completion | None = None):
        super().__init__(message)
        self.raw = raw
        self.completion = completion


class LLMCancelledError(LLMError):
    """The caller cancelled the generation."""

    def __init__(self, completion: Completion):
        super().__init__("generation cancelled")
        self.completion = completion


def json_schema_for(model: type[BaseModel]) -> dict:
    """A self-contained JSON schema for ``model``: ``$ref``s inlined, titles dropped, no extra keys.

    Grammar compilers (llama.cpp's json-schema-to-grammar, xgrammar) and OpenAI's strict mode all
    accept this plain form; some of them choke on ``$defs`` or ignore unknown keys unevenly.
    """
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})

    def resolve(node):
        if isinstance(node, dict):
            if "$ref" in node:
                name = node["$ref"].rsplit("/", 1)[-1]
                return resolve(copy.deepcopy(defs[name]))
            out = {k: resolve(v) for k, v in node.items() if k not in ("title", "default")}
            if out.get("type") == "object" and "properties" in out:
                out["additionalProperties"] = False
                out["required"] = list(out["properties"])
            return out
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    return resolve(raw)


def parse_structured(model: type[T], text: str, completion: Completion | None = None) -> T:
    """Validate ``text`` as ``model``; tolerate a fenced code block around the JSON."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body[body.find("{") :] if "{" in body else body
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "output"
        if completion is not None and completion.finish_reason == "length":
            where += " (the reply hit max_tokens)"
        raise LLMOutputError(f"model output is not a valid {model.__name__}: {where}: {first['msg']}", text, completion) from exc


class LLMBackend(ABC):
    """Base of all model backends. Subclasses implement ``_generate`` (blocking, thread-safe)."""

    name: str = "llm"
    #: how many calls the backend serves at once; plan nodes beyond this queue in the backend
    parallel: int = 1
    #: the model's file / folder / endpoint name (``Answer.model``)
    model_name: str = ""

    def __init__(self, max_tokens: int = 512, temperature: float = 0.0):
        self.max_tokens = max_tokens
        self.temperature = temperature

    @abstractmethod
    def _generate(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        json_schema: dict | None,
        on_token: OnToken | None,
        should_stop: ShouldStop,
    ) -> Completion:
        """Generate one reply. Call ``on_token`` with each text piece; stop early when ``should_stop()``."""

    def close(self) -> None:  # noqa: B027 - optional hook: most backends hold nothing to release
        """Release the model (default: nothing to release)."""

    def load(self) -> None:  # noqa: B027 - optional hook: most backends load in __init__ or hold nothing
        """Load the weights now (blocking; called in a worker thread while the question is searched)."""

    def yes_no(self, messages: list[ChatMessage]) -> float | None:
        """How much the model answers "yes" rather than "no" to ``messages``: log P(yes) - log P(no) of its first
        token (blocking). None when the backend cannot read its next-token probabilities (the default)."""
        return None

    async def complete(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        schema: type[BaseModel] | None = None,
        on_token: OnToken | None = None,
        cancel: asyncio.Event | None = None,
    ) -> Completion:
        """Generate a reply in a worker thread; ``on_token`` runs on the event loop thread.

        Raises LLMCancelledError (carrying the partial completion) when ``cancel`` was set.
        """
        loop = asyncio.get_running_loop()
        relay = None
        if on_token is not None:
            def relay(piece: str) -> None:
                loop.call_soon_threadsafe(on_token, piece)

        stop_flag = threading.Event()

        def should_stop() -> bool:
            return stop_flag.is_set() or (cancel is not None and cancel.is_set())

        started = time.perf_counter()
        task = asyncio.ensure_future(
            asyncio.to_thread(
                self._generate,
                messages,
                max_tokens=max_tokens or self.max_tokens,
                temperature=self.temperature if temperature is None else temperature,
                json_schema=json_schema_for(schema) if schema else None,
                on_token=relay,
                should_stop=should_stop,
            )
        )
        try:
            completion = await asyncio.shield(task)
        except asyncio.CancelledError:
            # The asyncio task was cancelled: tell the worker to stop, and let it finish in the background.
            stop_flag.set()
            raise
        await asyncio.sleep(0)  # let queued on_token callbacks run before the caller sees the result
        completion.ms = completion.ms or (time.perf_counter() - started) * 1000
        if should_stop():
            completion.cancelled = True
            raise LLMCancelledError(completion)
        return completion

    async def structured(
        self,
        messages: list[ChatMessage],
        schema: type[T],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        cancel: asyncio.Event | None = None,
    ) -> tuple[T, Completion]:
        """A reply constrained to ``schema`` and validated into it (LLMOutputError when it does not)."""
        completion = await self.complete(
            messages, max_tokens=max_tokens, temperature=temperature, schema=schema, cancel=cancel
        )
        return parse_structured(schema, completion.text, completion), completion

    async def stream(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AsyncIterator[str]:
        """The reply as an async iterator of text pieces (the iterator form of ``on_token``)."""
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        task = asyncio.ensure_future(
            self.complete(messages, max_tokens=max_tokens, on_token=queue.put_nowait, cancel=cancel)
        )
        task.add_done_callback(lambda _t: queue.put_nowait(None))
        while (piece := await queue.get()) is not None:
            yield piece
        await task  # re-raise errors and cancellation
