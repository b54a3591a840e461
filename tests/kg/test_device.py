"""``settings.device`` reaches every model: the searcher's embedder, the reranker and the relevance judge,
with one MiniLM per process and device. Real store, real MiniLM and reranker (CPU here; the GPU case runs
where torch sees one)."""

from __future__ import annotations

import pytest
import torch

from gmprep.common.settings import Settings
from gmprep.core.answer import AnswerContext
from gmprep.kg.embedder import pick_device, shared_embedder
from gmprep.kg.reranker import Reranker, quantize_on, shared_reranker
from gmprep.kg.search import Searcher


def _int8_layers(reranker: Reranker) -> int:
    return sum(1 for m in reranker.model.modules() if "quantized" in type(m).__module__)


def test_unset_device_and_the_device_it_picks_share_one_embedder():
    assert shared_embedder(None) is shared_embedder(pick_device(None))


def test_searcher_and_judge_share_the_embedder_on_the_configured_device(store):
    settings = Settings(device="cpu")
    searcher = Searcher.from_settings(store, settings)
    assert searcher.device == "cpu"
    embedder = searcher.embedder
    assert embedder is not None and embedder.device == "cpu"
    assert embedder is shared_embedder("cpu") is shared_embedder(None if pick_device() == "cpu" else "cpu")
    ctx = AnswerContext(searcher, settings)
    assert ctx.judge.embedder is embedder  # one MiniLM, not a second copy for the judge
    hits = searcher.search("What happens when you are frightened?", k=5, rerank=False)
    assert ctx.judge.semantic("What happens when you are frightened?", hits) > 0.3


def test_reranker_is_int8_on_the_cpu(store):
    assert quantize_on("cpu") and not quantize_on("cuda") and not quantize_on("cuda:1")
    reranker = shared_reranker(max_length=80, device="cpu")
    assert reranker.device == "cpu" and _int8_layers(reranker) > 0
    searcher = Searcher.from_settings(store, Settings(device="cpu"))
    assert searcher.reranker is reranker


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU that torch sees")
def test_models_run_on_the_gpu_when_device_is_cuda(store):
    settings = Settings(device="cuda")
    searcher = Searcher.from_settings(store, settings)
    reranker = searcher.reranker
    assert reranker is not None and reranker.device == "cuda" and _int8_layers(reranker) == 0
    assert next(reranker.model.parameters()).device.type == "cuda"
    assert searcher.embedder is not None and str(searcher.embedder.model.device).startswith("cuda")
    assert AnswerContext(searcher, settings).judge.embedder is searcher.embedder
    assert searcher.search("frightened", k=3)  # scores on the GPU end to end


def test_concurrent_first_loads_make_one_embedder():
    """The index thread and a search thread asking at once get one MiniLM (and no import race)."""
    from concurrent.futures import ThreadPoolExecutor

    from gmprep.kg import embedder as embedder_module

    embedder_module._embedder_on.cache_clear()
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: shared_embedder("cpu"), range(4)))
    assert all(e is got[0] for e in got)


def test_prepare_hf_is_offline_and_draws_no_loading_bar():
    """The CLI's answer is not interleaved with transformers' "Loading weights" bars, and nothing downloads."""
    import os

    from transformers.utils import logging as hf_logging

    from gmprep.kg.embedder import prepare_hf

    hf_logging.enable_progress_bar()
    prepare_hf()
    assert not hf_logging.is_progress_bar_enabled()
    assert os.environ["HF_HUB_OFFLINE"] == "1"
