"""Torch threads per model call (kg/threads.py): one query's calls on the query threads, bulk on every core."""

from __future__ import annotations

import threading

import pytest
import torch

from gmprep.common.settings import Settings
from gmprep.kg import threads


@pytest.fixture(autouse=True)
def _restore():
    before_setting = threads.configure(None)
    before = torch.get_num_threads()
    yield
    threads.configure(before_setting)
    torch.set_num_threads(before)


def test_default_rule_is_half_the_cores_between_1_and_4(monkeypatch):
    for cores, want in [(1, 1), (2, 1), (4, 2), (8, 4), (64, 4)]:
        monkeypatch.setattr(threads, "cores", lambda c=cores: c)
        assert threads.query_threads() == want
        assert threads.bulk_threads() == cores


def test_setting_wins_and_configure_returns_the_previous_one():
    assert threads.configure(3) is None
    assert threads.query_threads() == 3
    assert threads.configure(None) == 3


def test_torch_threads_sets_the_count_for_the_body_only():
    torch.set_num_threads(2)
    with threads.torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2
    with pytest.raises(RuntimeError), threads.torch_threads(1):
        raise RuntimeError("model failed")
    assert torch.get_num_threads() == 2  # put back on error too


def test_settings_field_validates():
    assert Settings().query_threads is None
    assert Settings.model_validate({"query_threads": 2}).query_threads == 2
    with pytest.raises(ValueError):
        Settings.model_validate({"query_threads": 0})


def test_embedder_encodes_a_query_on_query_threads_and_a_batch_on_every_core(monkeypatch):
    from gmprep.kg.embedder import QUERY_BATCH, shared_embedder

    seen: list[int] = []
    emb = shared_embedder("cpu")
    real = emb.model.encode

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(emb.model, "encode", spy)
    monkeypatch.setattr(threads, "cores", lambda: 2)
    threads.configure(1)
    torch.set_num_threads(2)
    q = emb.encode_query("What does prone do?")
    bulk = emb.encode([f"text {i}" for i in range(QUERY_BATCH + 1)])
    assert seen == [1, 2]
    assert q.shape == (384,) and bulk.shape == (QUERY_BATCH + 1, 384)
    assert torch.get_num_threads() == 2


def test_concurrent_calls_leave_a_valid_count():
    torch.set_num_threads(2)
    errors: list[BaseException] = []

    def work(n):
        try:
            for _ in range(50):
                with threads.torch_threads(n):
                    assert torch.get_num_threads() >= 1
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    ts = [threading.Thread(target=work, args=(n,)) for n in (1, 2, 1, 2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert torch.get_num_threads() in (1, 2)
