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


def test_default_rule_is_the_cores_between_1_and_4(monkeypatch):
    for cores, want in [(1, 1), (2, 2), (4, 4), (8, 4), (64, 4)]:
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


def test_embedder_encodes_a_query_on_the_query_threads_and_a_batch_on_every_core(monkeypatch):
    from gmprep.kg.embedder import QUERY_BATCH, shared_embedder

    seen: list[int] = []
    emb = shared_embedder("cpu")
    real = emb.model.encode

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(emb.model, "encode", spy)
    monkeypatch.setattr(threads, "cores", lambda: 2)
    threads.configure(4)  # a query's text on the query threads, never more than the cores
    torch.set_num_threads(1)
    q = emb.encode_query("What does prone do?")
    threads.configure(1)
    emb.encode_query("What does prone do?")
    bulk = emb.encode([f"text {i}" for i in range(QUERY_BATCH + 1)])
    assert seen == [2, 1, 2]
    torch.set_num_threads(2)
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


def test_shards_cut_in_order_into_at_most_the_query_workers():
    threads.configure(2)
    assert threads.shards(list(range(13))) == [list(range(7)), list(range(7, 13))]
    assert threads.shards([1, 2, 3, 4, 5]) == [[1, 2, 3, 4, 5]]  # too few to split (3 a shard at least)
    threads.configure(4)
    assert [len(s) for s in threads.shards(list(range(13)))] == [4, 3, 3, 3]
    threads.configure(1)
    assert threads.shards(list(range(13))) == [list(range(13))]


def test_on_workers_runs_each_shard_on_its_own_single_threaded_worker(monkeypatch):
    monkeypatch.setattr(threads, "cores", lambda: 2)
    threads.configure(2)
    torch.set_num_threads(2)
    seen = threads.on_workers(lambda x: (x, torch.get_num_threads(), threading.current_thread().name), [1, 2])
    assert [s[0] for s in seen] == [1, 2] and all(s[1] == 1 for s in seen)
    assert all(s[2].startswith("gmprep-query") for s in seen)
    assert torch.get_num_threads() == 2  # the caller's count is its own
    # one shard runs on the calling thread, on the query threads for its duration
    torch.set_num_threads(1)
    assert threads.on_workers(lambda x: (torch.get_num_threads(), threading.current_thread().name), [0]) == [
        (2, threading.current_thread().name)]
    assert torch.get_num_threads() == 1
    torch.set_num_threads(2)


def test_reranker_ranks_the_same_in_shards_as_in_one_call():
    from gmprep.kg.reranker import shared_reranker

    rr = shared_reranker(device="cpu")
    query = "What happens when my character is grabbed, and how do they get free?"
    relevant = ("Grabbed (condition): You're held in place by another creature, giving you the off-guard and "
                "immobilized conditions. If you attempt a manipulate action while grabbed, you must succeed at a "
                "DC 5 flat check or it is lost. Escape from the grab with the Escape action.")
    others = ["Stride (move): You move up to your Speed.",
              "Fireball (spell 3): a burst of fire 20 feet, 6d6 fire damage, basic Reflex save.",
              "Longsword: a martial one-handed sword, 1d8 slashing, versatile P.",
              "Light: a cantrip that makes an object glow like a torch.",
              "Goblin Warrior (creature -1): a small goblin with a dogslicer and shortbow.",
              "Treat Wounds (exploration): you spend 10 minutes treating one injured creature.",
              "Heal (spell 1): channel vitality to restore Hit Points.",
              "Bulk: an item's weight and size together.",
              "Hide (secret): you huddle behind cover to become hidden.",
              "Shield Block (reaction): your shield prevents damage.",
              "Recall Knowledge (secret): remember a fact about a creature.",
              "Climb (move): you move up, down or across an incline."]
    passages = others[:6] + [relevant] + others[6:]
    threads.configure(1)
    one = rr.score(query, passages)
    threads.configure(2)
    sharded = rr.score(query, passages)
    assert len(sharded) == 13
    # the relevant passage leads both (top two: on these short made-up passages the model's margin over the
    # next one can be smaller than the int8 rounding below, which may swap a near-tie)
    top2 = [sorted(range(13), key=s.__getitem__, reverse=True)[:2] for s in (one, sharded)]
    assert all(6 in t for t in top2), top2
    # int8 activations are scaled per call and padded per shard, so logits move by the int8 rounding, which is of
    # the same size between one int8 call and fp32 (~1 logit at most on these passages)
    assert max(abs(a - b) for a, b in zip(one, sharded, strict=True)) < 1.0
