"""A local Hugging Face model directory through transformers: GPU bf16 when torch sees one, else CPU fp32.

Constrained JSON uses **xgrammar** (``xgrammar==0.2.8``), chosen over lm-format-enforcer and outlines:
- it compiles the JSON schema once into a token-level automaton and masks logits with a precomputed
  bitmask per step (C++), so the per-token cost stays flat as the vocabulary grows (150k for Qwen);
  lm-format-enforcer walks a Python prefix tree per token, which is slow on CPU;
- it is the structured-output engine that vLLM, SGLang and TensorRT-LLM maintain against, and ships
  a transformers ``LogitsProcessor`` (``xgrammar.contrib.hf``), so no glue beyond the schema;
- outlines would pull a much larger stack (outlines-core + its own model wrappers) for the same job.
The compiled grammar is cached per schema. Streaming uses ``TextIteratorStreamer`` with generation
in a helper thread; cancellation is a ``StoppingCriteria`` that polls the caller's stop predicate.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

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


def _no_cudnn_attention():
    """An ``sdpa_kernel`` context that leaves out the cuDNN attention backend (flash, efficient, math stay).

    Decoding changes the key length at every token, and cuDNN builds its attention plan per shape: on the
    H100 of docs/benchmarks.md section 6 the profiler put 2 ms of CPU time in every
    ``_cudnn_attention_forward`` call (one per layer per token, 44 % of the CPU time of a SmolLM2-135M
    decode). The flags are process-wide while the context is open; nothing else here needs cuDNN attention.
    """
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


def _load_location(model_path: str | Path | None) -> tuple[str, dict]:
    """``(folder, extra from_pretrained kwargs)`` for a model folder or a single ``.gguf`` file.

    A GGUF file is read through transformers' own GGUF loader (``gguf_file=``; it needs the ``gguf``
    and ``accelerate`` packages): the weights are dequantised to the backend's dtype and the tokenizer
    and chat template come from the file's metadata, so the llama.cpp model files (e.g. SmolLM2-135M,
    Qwen2.5) also run on a GPU through transformers. Raises LLMError when the path is neither.
    """
    path = Path(model_path) if model_path is not None else None
    if path is not None and path.is_file() and path.suffix.lower() == ".gguf":
        return str(path.parent), {"gguf_file": path.name}
    if path is None or not path.is_dir():
        raise LLMError(f"transformers backend: model folder or .gguf file not found: {model_path}")
    return str(path), {}


class TransformersBackend(LLMBackend):
    """A causal LM loaded from a local folder (``config.json`` + weights + tokenizer with a chat template)
    or from one GGUF file (dequantised by transformers)."""

    name = "transformers"

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        model=None,
        tokenizer=None,
        device: str | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ):
        """Load from ``model_dir`` (a model folder or a ``.gguf`` file), or wrap an already built ``model`` +
        ``tokenizer`` (tests, notebooks)."""
        super().__init__(max_tokens=max_tokens, temperature=temperature)
        import torch

        from gmprep.kg.embedder import pick_device

        self.device = pick_device(device)
        self.model_name = Path(model_dir).name if model_dir is not None else ""
        if model is None or tokenizer is None:
            folder, extra = _load_location(model_dir)
            from transformers import AutoModelForCausalLM, AutoTokenizer

            dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
            try:
                tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, **extra)
                model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, local_files_only=True, **extra)
            except (OSError, ValueError, ImportError) as exc:
                raise LLMError(f"transformers could not load {model_dir}: {exc}") from exc
        if not getattr(tokenizer, "chat_template", None):
            raise LLMError("the tokenizer has no chat template; the transformers backend needs one")
        self.tokenizer = tokenizer
        self.model = model.to(self.device).eval()
        self._grammars: dict[str, object] = {}
        self._compiler: Any = None  # xgrammar.GrammarCompiler, built on first use
        # one generate() at a time: the model object is shared and GPU memory is the limit anyway
        self._lock = threading.Lock()

    def _grammar(self, schema: dict):
        """The xgrammar grammar for ``schema``, compiled once."""
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            try:
                import xgrammar as xgr
            except ImportError as exc:
                raise LLMError("constrained output needs xgrammar: pip install xgrammar==0.2.8") from exc
            if self._compiler is None:
                vocab = max(self.model.config.vocab_size, len(self.tokenizer))
                info = xgr.TokenizerInfo.from_huggingface(self.tokenizer, vocab_size=vocab)
                self._compiler = xgr.GrammarCompiler(info)
            # compact JSON: with free whitespace a weak model can pad forever and never close the object
            self._grammars[key] = self._compiler.compile_json_schema(key, any_whitespace=False)
        return self._grammars[key]

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
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList, TextIteratorStreamer

        class _Stop(StoppingCriteria):
            def __call__(self, input_ids, scores, **kwargs):
                return torch.full((input_ids.shape[0],), should_stop(), dtype=torch.bool, device=input_ids.device)

        enc = self.tokenizer.apply_chat_template(
            [m.model_dump() for m in messages], add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        input_ids = enc["input_ids"].to(self.device)
        attention = enc.get("attention_mask")
        kwargs: dict = {
            "input_ids": input_ids,
            "attention_mask": attention.to(self.device) if attention is not None else None,
            "max_new_tokens": max_tokens,
            "stopping_criteria": StoppingCriteriaList([_Stop()]),
            "pad_token_id": self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
        }
        if temperature > 0:
            kwargs.update(do_sample=True, temperature=temperature)
        else:
            kwargs.update(do_sample=False)
        if json_schema is not None:
            from xgrammar.contrib.hf import LogitsProcessor

            kwargs["logits_processor"] = [LogitsProcessor(self._grammar(json_schema))]
        streamer = TextIteratorStreamer(self.tokenizer, skip_prompt=True, skip_special_tokens=True)
        kwargs["streamer"] = streamer
        result: dict = {}

        def run():
            try:
                with torch.inference_mode(), _no_cudnn_attention():
                    result["out"] = self.model.generate(**kwargs)
            except Exception as exc:  # surfaced to the caller below
                result["error"] = exc
                streamer.end()

        pieces: list[str] = []
        with self._lock:
            worker = threading.Thread(target=run, name="gmprep-generate", daemon=True)
            worker.start()
            for piece in streamer:
                if piece:
                    pieces.append(piece)
                    if on_token:
                        on_token(piece)
            worker.join()
        if "error" in result:
            raise LLMError(f"transformers generation failed: {result['error']}")
        out = result["out"]
        n_new = int(out.shape[1] - input_ids.shape[1])
        stopped = should_stop()
        last = int(out[0, -1]) if n_new else None
        eos = self.model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos]) | {self.tokenizer.eos_token_id}
        finish = "cancelled" if stopped else ("stop" if last in eos_ids else "length")
        return Completion(
            text="".join(pieces),
            usage=TokenUsage(prompt=int(input_ids.shape[1]), completion=n_new),
            finish_reason=finish,
            cancelled=stopped,
        )
