"""GGUF models through ``xllamacpp`` (llama.cpp's server core, embedded in-process; prebuilt wheel).

Why this shape:
- Every call goes through ``Server.handle_chat_completions`` in streaming mode, so the GGUF's own
  chat template is applied, pieces reach ``on_token`` as they are decoded, and returning ``True``
  from the chunk callback cancels the task inside llama.cpp (the slot is released at once).
- JSON-schema constrained output: ``response_format: {"type": "json_schema", ...}`` makes llama.cpp
  compile the schema to a GBNF grammar and sample only tokens the grammar allows.
- Prompt-prefix caching: ``cache_prompt`` keeps each slot's KV cache and reuses the longest common
  prefix; with several slots a request lands on the slot whose cached prompt is most similar, and
  the host-RAM prompt cache (``cache_ram_mib``) keeps evicted prefixes. Each agent step starts with
  a fixed system prompt + few-shot examples, so after the first question those tokens are reused and
  only the variable tail (question, passages) is evaluated. ``usage.cached`` reports how many.
- One server per (model, settings) per process: loading costs seconds and ~1.9 GB for Qwen-1.5B.
"""

from __future__ import annotations

import logging
import os
import threading
from functools import lru_cache
from pathlib import Path

from gmprep.core.llm.base import (
    ChatMessage,
    Completion,
    LLMBackend,
    LLMError,
    OnToken,
    ShouldStop,
    TokenUsage,
)

log = logging.getLogger(__name__)


def _gpu_layers() -> int:
    """Offload every layer when llama.cpp sees a GPU device, none otherwise."""
    import xllamacpp

    try:
        devices = xllamacpp.get_device_info()
    except Exception:  # an old wheel without device info: CPU is always safe
        return 0
    # the type is an enum (GGML_BACKEND_DEVICE_TYPE_CPU / _GPU / _IGPU / _ACCEL): match on its name
    has_gpu = any("GPU" in str(d.get("type", "")).upper() for d in devices if isinstance(d, dict))
    return -1 if has_gpu else 0


@lru_cache(maxsize=2)
def _server(model_path: str, n_ctx: int, n_threads: int, n_parallel: int):
    try:
        import xllamacpp
    except ImportError as exc:
        raise LLMError("the llama.cpp backend needs xllamacpp: pip install xllamacpp==2026.10.11549") from exc
    p = xllamacpp.CommonParams()
    p.model.path = model_path
    p.n_parallel = n_parallel
    # One unified KV buffer shared by the slots: each slot may use the whole context when alone.
    p.kv_unified = True
    p.n_ctx = n_ctx * n_parallel if n_parallel > 1 else n_ctx
    p.cpuparams.n_threads = n_threads
    p.cpuparams_batch.n_threads = n_threads
    p.n_gpu_layers = _gpu_layers()
    p.cache_prompt = True
    p.verbosity = -1 if not log.isEnabledFor(logging.DEBUG) else 1  # llama.cpp logs are very chatty
    try:
        return xllamacpp.Server(p)
    except Exception as exc:
        raise LLMError(f"llama.cpp could not load {model_path}: {exc}") from exc


class LlamaCppBackend(LLMBackend):
    """A GGUF model served in-process by llama.cpp."""

    name = "llamacpp"

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_parallel: int = 1,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ):
        super().__init__(max_tokens=max_tokens, temperature=temperature)
        path = Path(model_path)
        if not path.is_file():
            raise LLMError(f"GGUF model not found: {path}")
        self.model_path = path
        self.model_name = path.name
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, min(8, os.cpu_count() or 1))
        self.parallel = n_parallel
        self._lock = threading.Lock()

    @property
    def server(self):
        """The loaded llama.cpp server (loaded on first use, shared per process)."""
        with self._lock:
            return _server(str(self.model_path), self.n_ctx, self.n_threads, self.parallel)

    def load(self) -> None:
        """Load the GGUF (first use per process) so the first generation does not wait for it."""
        _ = self.server

    def yes_no(self, messages: list[ChatMessage]) -> float | None:
        """log P(yes) - log P(no) of the first token of the reply (one token, greedy; the top 10 log-probabilities;
        an answer word missing from them counts as -20)."""
        request = {"messages": [m.model_dump() for m in messages], "max_tokens": 1, "temperature": 0.0,
                   "cache_prompt": True, "logprobs": True, "top_logprobs": 10}
        try:
            result = self.server.handle_chat_completions(request)
        except ValueError as exc:
            raise LLMError(f"llama.cpp rejected the request: {exc}") from exc
        if not isinstance(result, dict) or "error" in result:
            err = result.get("error") if isinstance(result, dict) else result
            raise LLMError(f"llama.cpp error: {err.get('message', err) if isinstance(err, dict) else err}")
        try:
            top = result["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        except (KeyError, IndexError, TypeError):
            return None
        best: dict[str, float] = {}
        for t in top:
            word = str(t.get("token", "")).strip().lower()
            best[word] = max(best.get(word, -99.0), float(t.get("logprob", -99.0)))
        return best.get("yes", -20.0) - best.get("no", -20.0)

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
        request: dict = {
            "messages": [m.model_dump() for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "cache_prompt": True,
            "stream": True,
            "stream_options": {"include_usage": True},
            # token counts on every chunk: a generation stopped early (cancel, the answer's sentence cap)
            # never gets the final usage chunk, and its trace must still say what it cost
            "timings_per_token": True,
        }
        if json_schema is not None:
            request["response_format"] = {"type": "json_schema", "json_schema": {"name": "output", "schema": json_schema}}
        pieces: list[str] = []
        state: dict = {"usage": None, "finish": None, "error": None, "stopped": False, "timings": None}

        def on_chunk(chunk) -> bool:
            if isinstance(chunk, dict) and "error" in chunk:
                state["error"] = chunk["error"]
                return True
            for choice in chunk.get("choices") or []:
                piece = (choice.get("delta") or {}).get("content")
                if piece:
                    pieces.append(piece)
                    if on_token:
                        on_token(piece)
                if choice.get("finish_reason"):
                    state["finish"] = choice["finish_reason"]
            if chunk.get("usage"):
                state["usage"] = chunk["usage"]
            if chunk.get("timings"):
                state["timings"] = chunk["timings"]
            if should_stop():
                state["stopped"] = True
                return True  # tells llama.cpp to cancel the task
            return False

        try:
            result = self.server.handle_chat_completions(request, on_chunk)
        except ValueError as exc:
            raise LLMError(f"llama.cpp rejected the request: {exc}") from exc
        if isinstance(result, dict) and "error" in result:
            state["error"] = result["error"]
        if state["error"] is not None:
            err = state["error"]
            raise LLMError(f"llama.cpp error: {err.get('message', err) if isinstance(err, dict) else err}")
        usage = state["usage"] or {}
        timings = state["timings"] or {}
        if not usage and timings:  # stopped before the usage chunk: llama.cpp's own counts so far
            cached = int(timings.get("cache_n", 0))
            usage = {"prompt_tokens": int(timings.get("prompt_n", 0)) + cached,
                     "completion_tokens": int(timings.get("predicted_n", len(pieces))),
                     "prompt_tokens_details": {"cached_tokens": cached}}
        return Completion(
            text="".join(pieces),
            usage=TokenUsage(
                prompt=int(usage.get("prompt_tokens", 0)),
                completion=int(usage.get("completion_tokens", len(pieces))),
                cached=int((usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)),
            ),
            finish_reason="cancelled" if state["stopped"] else state["finish"],
            cancelled=state["stopped"],
        )
