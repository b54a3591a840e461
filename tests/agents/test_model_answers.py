"""The real model path: SmolLM2-135M through llama.cpp answers through ``answer_question``.

Checks the contract, not answer quality (a 135M model): the sources arrive once before the first
token of the body, the timings are filled in order, a single-need question costs exactly one model
call (counted in the trace), citations ``[n]`` are read back into ``used``, and ``Answer.model``
names the GGUF.
"""

from __future__ import annotations

import pytest
from smollm import smollm2_path

from gmprep.common.settings import LLMSettings, Settings
from gmprep.core.answer import answer_question

pytest.importorskip("xllamacpp")
pytestmark = pytest.mark.slow



@pytest.fixture(scope="module")
def smollm2_settings(store_dir) -> Settings:
    return Settings(store_dir=store_dir, llm=LLMSettings(backend="llamacpp", model_path=str(smollm2_path()),
                                                         n_threads=2, n_ctx=2048))


async def test_single_need_answer_streams_after_its_sources_in_one_generation(searcher, smollm2_settings):
    events: list[tuple[str, object]] = []
    ans = await answer_question("What does the frightened condition do?", history=[], searcher=searcher,
                                settings=smollm2_settings,
                                on_delta=lambda d: events.append(("delta", d)),
                                on_sources=lambda s: events.append(("sources", s)))
    assert ans.backend == "llamacpp" and ans.model == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert ans.outcome in ("answered", "partial")
    kinds = [e for e, _ in events]
    assert kinds[0] == "sources" and kinds.count("sources") == 1 and "delta" in kinds
    assert events[0][1] == ans.citations and "pf2e:condition:frightened" in [c.source_id for c in ans.citations]
    model_calls = [s for s in ans.steps if s.tokens_in > 0]
    assert [s.name for s in model_calls] == ["cited_answer"]  # one generation, traced with tokens and ms
    assert model_calls[0].tokens_out > 0 and model_calls[0].ms > 0
    assert set(ans.used) <= {c.source_id for c in ans.citations}
    t = ans.timings_ms
    assert set(t) == {"sources", "first_token", "total"} and 0 < t["sources"] <= t["first_token"] <= t["total"]


async def test_decline_makes_no_model_call(searcher, smollm2_settings):
    sources: list = []
    ans = await answer_question("What is a good banana bread recipe for a rainy afternoon?", history=[],
                                searcher=searcher, settings=smollm2_settings, on_sources=sources.append)
    assert ans.outcome == "not_in_books" and len(sources) == 1
    assert not [s for s in ans.steps if s.tokens_in > 0]
