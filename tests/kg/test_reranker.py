"""The cross-encoder reranker: the bundled model ranks sensibly, bad models fail clearly, and the
training command produces a model that loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gmprep.cli import main
from gmprep.common.errors import GmprepError
from gmprep.kg.reranker import Reranker, bundled_model_dir, rerank_passage
from gmprep.training.queries import generate_queries


@pytest.fixture(scope="module")
def nodes(corpus):
    return {n.node_id: n for n in corpus.nodes}


@pytest.fixture(scope="module")
def bundled():
    if not (bundled_model_dir() / "config.json").is_file():
        pytest.fail("the bundled reranker model (kg/reranker_model) is missing")
    return Reranker.load()


# (an xfail until r4: its per-passage bias scored short entries such as Prone high for any query; r5,
# trained on 20,000 queries on a GPU, orders these pairs)
def test_bundled_reranker_orders_relevant_above_irrelevant(bundled, nodes):
    cases = [
        ("What happens to a creature lying on the ground?", "pf2e:condition:prone", "pf2e:spell:fireball"),
        ("Which spell detonates a burst of fire?", "pf2e:spell:fireball", "pf2e:condition:prone"),
        ("How many Hit Points does a goblin warrior have?", "pf2e:creature:goblin-warrior", "pf2e:equipment:caltrops"),
    ]
    for query, good, bad in cases:
        good_s, bad_s = bundled.score_nodes(query, [nodes[good], nodes[bad]])
        assert good_s > bad_s, (query, good_s, bad_s)


def test_score_keeps_input_order_and_handles_empty(bundled):
    assert bundled.score("anything", []) == []
    a, b = bundled.score("prone", ["Prone (condition)\nYou're lying on the ground.", "Fireball (spell 3)\nA blast of fire."])
    b2, a2 = bundled.score("prone", ["Fireball (spell 3)\nA blast of fire.", "Prone (condition)\nYou're lying on the ground."])
    assert a == pytest.approx(a2, abs=1e-4) and b == pytest.approx(b2, abs=1e-4)


def test_a_question_longer_than_the_window_is_scored_not_refused(nodes):
    short = Reranker.load(max_length=48)
    long_question = "My players keep asking " + "whether the fighter can trip the ogre " * 12 + "and what then?"
    passages = [rerank_passage(nodes["pf2e:action:trip"]), rerank_passage(nodes["pf2e:spell:fireball"])]
    scores = short.score(long_question, passages)
    assert len(scores) == 2 and all(isinstance(x, float) for x in scores)
    # a normal question keeps all its words and only the passage is cut
    assert len(short.score("What does Trip do?", passages)) == 2


def test_one_reranker_scores_and_counts_tokens_from_many_threads_at_once():
    """A chat's searches run in worker threads that share the loaded reranker: pairs are cut "only_second"
    and padded while a condensed question's tokens are counted whole, and the tokenizer keeps those settings in
    shared state (before the lock: "Second sequence not provided", or unpadded batches that cannot be made
    tensors)."""
    import threading

    question = ("When my character is grabbed by the ogre and tries to cast a spell with the manipulate trait, "
                "what flat check do they need, and does the spell still cost its actions if they fail? ") * 3
    # of different lengths, so that a batch needs padding
    passages = ["Grabbed (condition)\nYou're held in place by another creature, giving you the off-guard and "
                "immobilized conditions.", "Cast a Spell (action)\nYou cast a spell."]
    fresh = Reranker.load()
    errors: list[str] = []
    scores: list[list[float]] = []

    def work(k: int) -> None:
        try:
            for i in range(80):
                if k % 2:
                    assert fresh.count_tokens(f"{question} {i}") > 0
                else:
                    scores.append(fresh.score(question, passages, query_tokens=28))
        except Exception as exc:  # the race's errors are ValueError, RuntimeError or a tokenizers exception
            errors.append(f"{type(exc).__name__}: {exc}")

    workers = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    want = fresh.score(question, passages, query_tokens=28)
    assert len(scores) == 4 * 80 and all(s == pytest.approx(want, abs=1e-4) for s in scores)


def test_counting_a_long_question_prints_no_tokenizer_warning(capfd):
    # a long post is condensed by counting its sentences' tokens; transformers warned on stderr that the text is
    # longer than the window ("Token indices sequence length ..."), a line the CLI's user saw under the results
    fresh = Reranker.load()
    assert fresh.count_tokens("whether the fighter can trip the ogre " * 40) > fresh.max_length
    assert "Token indices" not in capfd.readouterr().err


def test_missing_or_corrupt_model_is_a_clear_error(tmp_path):
    with pytest.raises(GmprepError, match="no reranker model"):
        Reranker.load(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    (tmp_path / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(GmprepError, match="cannot be loaded"):
        Reranker.load(tmp_path)


def test_passage_has_fields_and_the_paragraph_the_query_asks_about(nodes):
    gnome = rerank_passage(nodes["pf2e:ancestry:gnome"], "gnome hit points")
    assert gnome.startswith("Gnome (ancestry") and "Hit Points 8" in gnome
    turtle = rerank_passage(nodes["pf2e:creature:dragon-turtle"], "how does it capsize a ship")
    assert "Capsize" in turtle and len(turtle) <= 700


def test_generated_queries_come_from_the_corpus_and_are_reproducible(corpus):
    entries = [n for n in corpus.nodes if n.kind == "entry"]
    a = generate_queries(entries, 200, seed=3)
    b = generate_queries(entries, 200, seed=3)
    assert [q.query for q in a] == [q.query for q in b]
    assert len(a) >= 150
    assert {q.generator for q in a} >= {"name", "masked", "keywords", "field"}
    ids = {n.node_id for n in entries}
    assert all(q.positive in ids for q in a)


def test_train_command_on_a_tiny_pair_set_produces_a_loadable_model(store_dir, tmp_path, capsys):
    out = tmp_path / "model"
    pairs = tmp_path / "pairs.jsonl"
    rc = main([
        "--store", str(store_dir), "reranker", "train", "--pairs", "24", "--layers", "1", "--max-length", "64",
        "--out", str(out), "--pairs-out", str(pairs), "--json",
    ])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report["queries"] == 6 and report["pairs_per_epoch"] == 24
    groups = [json.loads(line) for line in pairs.read_text().splitlines()]
    assert all(g["positive"] not in g["negatives"] and len(g["negatives"]) == 3 for g in groups)
    meta = json.loads((out / "gmprep_reranker.json").read_text())
    assert meta["max_length"] == 64
    model = Reranker.load(out)
    assert model.model.config.num_hidden_layers == 1
    scores = model.score("prone", ["Prone (condition)", "Fireball (spell)"])
    assert len(scores) == 2 and all(isinstance(s, float) for s in scores)
    # fp16 with one layer: ~28 MB (the 30522x384 word embeddings dominate); fp32 would be ~55 MB
    assert Path(out / "model.safetensors").stat().st_size < 32_000_000
