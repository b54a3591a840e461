"""Pick and load the answer backend named in ``LLMSettings`` (one instance per configuration)."""

from __future__ import annotations

import threading

from gmprep.common.settings import LLMSettings
from gmprep.core.llm.base import LLMBackend, LLMError

_CACHE: dict[str, LLMBackend] = {}
_LOCK = threading.Lock()


def backend_for(llm: LLMSettings, device: str | None = None) -> LLMBackend | None:
    """The backend for ``llm`` (None for ``extractive``, which needs no model). Loaded once per process.

    Raises LLMError/GmprepError with a clear message when the model is missing or unreachable.
    """
    if llm.backend == "extractive":
        return None
    key = llm.model_dump_json(exclude={"temperature", "max_tokens"}) + f"|{device}"
    with _LOCK:
        backend = _CACHE.get(key)
        if backend is None:
            backend = _build(llm, device)
            _CACHE[key] = backend
    backend.max_tokens = llm.max_tokens
    backend.temperature = llm.temperature
    return backend


def _build(llm: LLMSettings, device: str | None) -> LLMBackend:
    if llm.backend == "llamacpp":
        from gmprep.core.llm.llamacpp import LlamaCppBackend
        from gmprep.core.llm.models import resolve_model_path

        return LlamaCppBackend(
            resolve_model_path(llm.model_path),
            n_ctx=llm.n_ctx,
            n_threads=llm.n_threads,
            max_tokens=llm.max_tokens,
            temperature=llm.temperature,
        )
    if llm.backend == "transformers":
        from gmprep.core.llm.transformers_backend import TransformersBackend

        if not llm.model_path:
            raise LLMError("the transformers backend needs llm.model_path: a local Hugging Face model folder or .gguf file")
        return TransformersBackend(llm.model_path, device=device, max_tokens=llm.max_tokens, temperature=llm.temperature)
    if llm.backend == "openai":
        from gmprep.core.llm.openai_backend import OpenAIBackend

        return OpenAIBackend(
            llm.url or "",
            llm.model or "default",
            api_key=llm.api_key,
            timeout_s=llm.timeout_s,
            max_tokens=llm.max_tokens,
            temperature=llm.temperature,
        )
    raise LLMError(f"unknown LLM backend {llm.backend!r}")


def close_all() -> None:
    """Release every loaded backend (tests, server shutdown)."""
    with _LOCK:
        for backend in _CACHE.values():
            backend.close()
        _CACHE.clear()
