"""Steps as typed patterns: a YAML pattern (system prompt, user template, few-shot examples) + an
output schema, run against any ``LLMBackend`` with one retry on invalid output, then a typed failure.

The system prompt and the examples come first and never change between runs of a step, so a
backend with prompt-prefix caching (llama.cpp) evaluates them once; only the final user turn varies.
Patterns live in ``core/agents/patterns/<name>.yaml`` and are validated when loaded: the template's
fields must match every example's input, and every example's output must validate against the
step's schema (a pattern that teaches an invalid shape would be a bug the model copies).
"""

from __future__ import annotations

import asyncio
import json
import string
import time
from functools import cache
from importlib import resources
from typing import Any, Generic, TypeVar

import yaml
from pydantic import BaseModel, Field, ValidationError

from gmprep.common.errors import GmprepError
from gmprep.core.llm.base import (
    ChatMessage,
    Completion,
    LLMBackend,
    LLMCancelledError,
    LLMError,
    LLMOutputError,
)
from gmprep.core.traces import TraceStep

T = TypeVar("T", bound=BaseModel)


class Example(BaseModel):
    """One few-shot example: template fields in, the reply out (a JSON object or, for text steps, text)."""

    input: dict[str, str]
    output: Any


class Pattern(BaseModel):
    """A step's prompt pattern as stored in YAML."""

    name: str
    system: str
    user_template: str
    max_tokens: int = Field(ge=8, le=4096)
    examples: list[Example] = Field(default_factory=list)

    def fields(self) -> set[str]:
        """The ``{names}`` used by the user template."""
        return {f for _, f, _, _ in string.Formatter().parse(self.user_template) if f}

    def render(self, values: dict[str, str]) -> str:
        """The user turn for ``values`` (exactly the template's fields)."""
        missing = self.fields() - values.keys()
        if missing:
            raise ValueError(f"pattern {self.name}: missing input field(s) {sorted(missing)}")
        return self.user_template.format(**{k: values[k] for k in self.fields()})

    def messages(self, values: dict[str, str]) -> list[ChatMessage]:
        """System prompt, few-shot turns, then the rendered question."""
        msgs = [ChatMessage(role="system", content=self.system.strip())]
        for ex in self.examples:
            msgs.append(ChatMessage(role="user", content=self.render(ex.input)))
            reply = ex.output if isinstance(ex.output, str) else json.dumps(ex.output, ensure_ascii=False)
            msgs.append(ChatMessage(role="assistant", content=reply))
        msgs.append(ChatMessage(role="user", content=self.render(values)))
        return msgs


class PatternError(GmprepError):
    """A pattern file is missing or invalid."""


@cache
def read_pattern(name: str) -> Pattern:
    """``patterns/<name>.yaml`` parsed, examples not yet checked against a schema."""
    ref = resources.files("gmprep.core.agents") / "patterns" / f"{name}.yaml"
    try:
        data = yaml.safe_load(ref.read_text(encoding="utf-8"))
        return Pattern.model_validate(data)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise PatternError(f"pattern {name}: {exc}") from exc


@cache
def load_pattern(name: str, schema: type[BaseModel] | None = None) -> Pattern:
    """Load and validate ``patterns/<name>.yaml``: examples must validate against ``schema``, or be
    text when the step has no schema."""
    pattern = read_pattern(name)
    for i, ex in enumerate(pattern.examples):
        if set(ex.input) != pattern.fields():
            raise PatternError(f"pattern {name}: example {i} inputs {sorted(ex.input)} != template fields {sorted(pattern.fields())}")
        if schema is not None:
            try:
                schema.model_validate(ex.output)
            except ValidationError as exc:
                raise PatternError(f"pattern {name}: example {i} output does not validate: {exc}") from exc
        elif not isinstance(ex.output, str):
            raise PatternError(f"pattern {name}: example {i} output must be text")
    return pattern


class StepFailed(GmprepError):
    """A step's model output stayed invalid after the retry, or the backend failed."""

    def __init__(self, step: str, message: str, trace: list[TraceStep]):
        super().__init__(f"step {step} failed: {message}")
        self.step = step
        self.trace = trace


class StepCancelled(GmprepError):
    """The run was cancelled while a step was generating."""

    def __init__(self, step: str, trace: list[TraceStep], partial: str = ""):
        super().__init__(f"cancelled during {step}")
        self.step = step
        self.trace = trace
        self.partial = partial


def _trace(name: str, values: dict, completion: Completion | None, started: float, **kw) -> TraceStep:
    usage = completion.usage if completion else None
    return TraceStep(
        name=name,
        input=values,
        ms=(time.perf_counter() - started) * 1000,
        tokens_in=usage.prompt if usage else 0,
        tokens_out=usage.completion if usage else 0,
        tokens_cached=usage.cached if usage else 0,
        **kw,
    )


class Step(Generic[T]):
    """A structured step: ``await step.run(llm, values)`` -> (validated output, trace steps)."""

    def __init__(self, name: str, schema: type[T]):
        self.name = name
        self.schema = schema
        self.pattern = load_pattern(name, schema)

    async def run(
        self,
        llm: LLMBackend,
        values: dict[str, str],
        *,
        schema: type[T] | None = None,
        cancel: asyncio.Event | None = None,
        node: str | None = None,
    ) -> tuple[T, list[TraceStep]]:
        """Run the step; retry once with the validation error when the output is invalid.

        ``schema`` narrows the output model for this call (e.g. routes limited to available sources).
        Raises StepFailed (with the trace so far) or StepCancelled.
        """
        model = schema or self.schema
        messages = self.pattern.messages(values)
        trace: list[TraceStep] = []
        for attempt in (1, 2):
            started = time.perf_counter()
            try:
                out, completion = await llm.structured(
                    messages, model, max_tokens=self.pattern.max_tokens, cancel=cancel
                )
            except LLMCancelledError as exc:
                trace.append(_trace(self.name, values, exc.completion, started, status="cancelled", node=node))
                raise StepCancelled(self.name, trace) from exc
            except LLMOutputError as exc:
                trace.append(
                    _trace(self.name, values, exc.completion, started, status="failed", output=exc.raw[:2000],
                           error=str(exc), node=node)
                )
                if attempt == 2:
                    raise StepFailed(self.name, str(exc), trace) from exc
                # Retry with the error spelled out: small models usually fix a shape error when told.
                messages = [
                    *messages,
                    ChatMessage(role="assistant", content=exc.raw[:1500]),
                    ChatMessage(role="user", content=f"That reply was invalid ({exc}). Reply again with valid JSON only."),
                ]
                continue
            except LLMError as exc:
                trace.append(_trace(self.name, values, None, started, status="failed", error=str(exc), node=node))
                raise StepFailed(self.name, str(exc), trace) from exc
            trace.append(
                _trace(self.name, values, completion, started, status="ok" if attempt == 1 else "retried",
                       output=out.model_dump(), node=node)
            )
            return out, trace
        raise AssertionError("unreachable")


class TextStep:
    """A free-text step (the final answer): streams pieces to ``on_token``."""

    def __init__(self, name: str):
        self.name = name
        self.pattern = load_pattern(name)

    async def run(
        self,
        llm: LLMBackend,
        values: dict[str, str],
        *,
        on_token=None,
        cancel: asyncio.Event | None = None,
    ) -> tuple[str, list[TraceStep]]:
        """Generate the text. Raises StepFailed on a backend error, StepCancelled (with the partial text)."""
        started = time.perf_counter()
        try:
            completion = await llm.complete(
                self.pattern.messages(values), max_tokens=self.pattern.max_tokens, on_token=on_token, cancel=cancel
            )
        except LLMCancelledError as exc:
            step = _trace(self.name, values, exc.completion, started, status="cancelled", output=exc.completion.text)
            raise StepCancelled(self.name, [step], exc.completion.text) from exc
        except LLMError as exc:
            step = _trace(self.name, values, None, started, status="failed", error=str(exc))
            raise StepFailed(self.name, str(exc), [step]) from exc
        return completion.text, [_trace(self.name, values, completion, started, output=completion.text)]
