"""The transformers backend on a tiny random-weights Llama built in the test (mechanics, not quality):
chat template applied, streamed pieces add up to the text, xgrammar keeps random weights inside the
JSON schema, token counts, cancellation."""

from __future__ import annotations

import asyncio
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from gmprep.core.llm.base import ChatMessage, LLMCancelledError

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("xgrammar")

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_TEXT = (
    "The frightened condition gives a status penalty to all checks and DCs. A creature that is prone is "
    "off-guard. Strike, Stride, Step and Shove are basic actions. {\"ok\": true, \"kind\": \"rule\"} "
) * 20


def _tiny_tokenizer():
    """A real byte-level BPE tokenizer trained in memory on a few sentences, with a ChatML template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator([_TEXT], trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None
    )
    fast.chat_template = CHATML
    return fast


@pytest.fixture(scope="module")
def backend():
    from transformers import LlamaConfig, LlamaForCausalLM

    from gmprep.core.llm.transformers_backend import TransformersBackend

    tok = _tiny_tokenizer()
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
        eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=None,
    )
    model = LlamaForCausalLM(cfg)
    return TransformersBackend(model=model, tokenizer=tok, device="cpu", max_tokens=24)


class Verdict(BaseModel):
    ok: bool
    kind: Literal["rule", "spell", "creature"]
    note: str = Field(max_length=8)


MSGS = [ChatMessage(role="system", content="Answer in JSON."), ChatMessage(role="user", content="Is prone a rule?")]


async def test_streams_pieces_that_add_up_to_the_text(backend):
    pieces: list[str] = []
    done = await backend.complete(MSGS, on_token=pieces.append, max_tokens=12)
    assert "".join(pieces) == done.text
    assert done.usage.completion >= 1
    # the prompt went through the chat template: its token count covers both turns plus the markers
    rendered = backend.tokenizer.apply_chat_template([m.model_dump() for m in MSGS], add_generation_prompt=True, tokenize=False)
    assert rendered.endswith("<|im_start|>assistant\n")
    assert done.usage.prompt == len(backend.tokenizer(rendered)["input_ids"])


async def test_grammar_keeps_random_weights_inside_the_schema(backend):
    verdict, done = await backend.structured(MSGS, Verdict, max_tokens=80)
    assert isinstance(verdict, Verdict)
    assert done.finish_reason == "stop"


async def test_cancel_stops_generation(backend):
    cancel = asyncio.Event()
    seen: list[str] = []

    def on_token(piece: str) -> None:
        seen.append(piece)
        cancel.set()

    with pytest.raises(LLMCancelledError) as info:
        await backend.complete(MSGS, on_token=on_token, cancel=cancel, max_tokens=24)
    assert info.value.completion.usage.completion < 24


def test_loads_a_gguf_file_through_transformers_gguf_loader(backend, tmp_path, monkeypatch):
    """A ``.gguf`` path is loaded from its folder with ``gguf_file=`` (the llama.cpp model files run on a
    GPU through transformers); the loaders are stubbed, so no gguf package or real model is needed."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from gmprep.core.llm.transformers_backend import TransformersBackend

    gguf = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    gguf.write_bytes(b"GGUF")
    calls: list[tuple[str, str, dict]] = []

    def fake(kind, obj):
        def load(folder, **kwargs):
            calls.append((kind, folder, kwargs))
            return obj
        return load

    monkeypatch.setattr(AutoTokenizer, "from_pretrained", fake("tokenizer", backend.tokenizer))
    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", fake("model", backend.model))
    loaded = TransformersBackend(str(gguf), device="cpu")
    assert [c[0] for c in calls] == ["tokenizer", "model"]
    assert all(c[1] == str(tmp_path) and c[2]["gguf_file"] == gguf.name for c in calls)
    assert calls[1][2]["dtype"] == torch.float32
    assert loaded.tokenizer is backend.tokenizer


def test_missing_model_path_is_a_clear_error(tmp_path):
    from gmprep.core.llm.base import LLMError
    from gmprep.core.llm.transformers_backend import TransformersBackend

    with pytest.raises(LLMError, match="model folder or .gguf file not found"):
        TransformersBackend(str(tmp_path / "nope.gguf"), device="cpu")


async def test_generation_runs_without_cudnn_attention(backend, monkeypatch):
    """cuDNN attention re-plans for every new key length (2 ms CPU per layer per decoded token on an H100):
    generate() runs with it switched off, and the flag is restored afterwards."""
    seen: list[bool] = []
    real = backend.model.generate

    def spy(**kwargs):
        seen.append(torch.backends.cuda.cudnn_sdp_enabled())
        return real(**kwargs)

    monkeypatch.setattr(backend.model, "generate", spy)
    before = torch.backends.cuda.cudnn_sdp_enabled()
    await backend.complete(MSGS, max_tokens=4)
    assert seen == [False]
    assert torch.backends.cuda.cudnn_sdp_enabled() == before
