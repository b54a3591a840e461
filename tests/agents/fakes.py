"""Test doubles for the agent pipeline's control flow. NOT a model: replies come from a script.

``ScriptedFakeLLM`` recognises which step is calling from the step pattern's system prompt and
answers with the next scripted reply for that step (a string, or a function of the messages).
It streams replies word by word through the real ``LLMBackend`` machinery (worker thread, stop
predicate), records every call, and counts how many calls overlap, so tests can check routing,
retries, checker failures, DAG concurrency and cancellation without a model.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable

from gmprep.core.agents.steps import read_pattern
from gmprep.core.llm.base import ChatMessage, Completion, LLMBackend, TokenUsage

STEP_NAMES = ("select_history", "rewrite", "cited_answer")
Reply = str | Callable[[list[ChatMessage]], str]
_NUMBER = re.compile(r"^\[(\d+)\] ", re.M)


def passage_sentence(messages: list[ChatMessage], n: int) -> str:
    """The first sentence of passage ``n``'s text as shown (what a faithful model would restate)."""
    block = re.split(r"^\[\d+\] ", messages[-1].content, flags=re.M)[n]
    body = " ".join(block.splitlines()[1:]).strip()
    return re.split(r"(?<=[.!?])\s", body, maxsplit=1)[0].rstrip(".!?")


def passage_numbers(messages: list[ChatMessage]) -> list[int]:
    """The numbers of the passages shown in the last user message (what a faithful model may cite)."""
    return [int(n) for n in _NUMBER.findall(messages[-1].content)]


class ScriptedFakeLLM(LLMBackend):
    """Scripted replies per step; ``default`` replies when a step's script runs out."""

    name = "scripted-fake"

    def __init__(
        self,
        script: dict[str, list[Reply]] | None = None,
        default: dict[str, Reply] | None = None,
        word_delay_s: float = 0.0,
        call_delay_s: dict[str, float] | None = None,
        parallel: int = 4,
        readings: list[float | None] | None = None,
    ):
        super().__init__()
        # scripted answers to the support check's yes/no reads (``yes_no``); None: a backend that cannot read them
        self.readings = None if readings is None else list(readings)
        self.read_calls: list[list[ChatMessage]] = []
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.default = default or {}
        self.word_delay_s = word_delay_s
        self.call_delay_s = call_delay_s or {}
        self.parallel = parallel
        self.calls: list[tuple[str, list[ChatMessage]]] = []
        self.events: list[tuple[str, str, str]] = []  # (start|end, step, last user message)
        self.in_flight = 0
        self.max_in_flight: dict[str, int] = {}
        self._lock = threading.Lock()
        self._systems = {read_pattern(n).system.strip(): n for n in STEP_NAMES}

    def yes_no(self, messages: list[ChatMessage]) -> float | None:
        if self.readings is None:
            return None
        with self._lock:
            self.read_calls.append(messages)
            return self.readings.pop(0) if self.readings else None

    def step_of(self, messages: list[ChatMessage]) -> str:
        """The step a call comes from (by its system prompt)."""
        return self._systems.get(messages[0].content.strip(), "unknown")

    def _generate(self, messages, *, max_tokens, temperature, json_schema, on_token, should_stop) -> Completion:
        step = self.step_of(messages)
        with self._lock:
            self.calls.append((step, messages))
            self.events.append(("start", step, messages[-1].content))
            self.in_flight += 1
            self.max_in_flight[step] = max(self.max_in_flight.get(step, 0), self.in_flight)
            queue = self.script.get(step)
            reply: Reply | None = queue.pop(0) if queue else self.default.get(step)
        try:
            if reply is None:
                raise AssertionError(f"ScriptedFakeLLM: no scripted reply left for step {step!r}")
            text = reply(messages) if callable(reply) else reply
            time.sleep(self.call_delay_s.get(step, 0.0))
            out: list[str] = []
            stopped = False
            for word in re.findall(r"\S+\s*", text):
                if should_stop():
                    stopped = True
                    break
                out.append(word)
                if on_token:
                    on_token(word)
                if self.word_delay_s:
                    time.sleep(self.word_delay_s)
            return Completion(
                text="".join(out),
                usage=TokenUsage(prompt=sum(len(m.content.split()) for m in messages), completion=len(out)),
                finish_reason="cancelled" if stopped else "stop",
                cancelled=stopped,
            )
        finally:
            with self._lock:
                self.in_flight -= 1
                self.events.append(("end", step, messages[-1].content))

    def steps_called(self) -> list[str]:
        """The steps in call order."""
        return [s for s, _ in self.calls]
