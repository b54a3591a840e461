"""``gmprep embedder train`` on a tiny slice of a small real store, and search's dense stage: the
fine-tuned model's sidecar used when the model and its vectors are there, the stock vectors otherwise."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from gmprep.cli import main
from gmprep.common.settings import SearchSettings, Settings
from gmprep.ingest.corpus import corpus_dir
from gmprep.ingest.pipeline import build_index
from gmprep.kg import dense_stage, embedder
from gmprep.kg.search import Searcher
from gmprep.kg.store import Store

QUESTIONS = {
    "pf2e:condition:prone": ["The ogre knocked my fighter flat on the ground - what happens now?",
                             "Can my character shoot a bow while lying on the floor?"],
    "pf2e:condition:frightened": ["The dragon's roar terrified the party, what penalty do they take?",
                                  "My wizard is scared stiff after the ghost's wail; does it wear off?"],
    "pf2e:condition:blinded": ["The bard can't see anything after the flash, can she still attack?"],
    "pf2e:condition:grabbed": ["The troll is holding my rogue in its fist; can he still move?"],
    "pf2e:spell:not-in-this-store": ["Never a training question"],
}


def _records(name: str, keep) -> list[str]:
    with gzip.open(corpus_dir() / f"{name}.jsonl.gz", "rt") as fh:
        return [line for line in fh if keep(json.loads(line))]


@pytest.fixture(scope="module")
def small_store(tmp_path_factory) -> Path:
    """A real, embedded store of the conditions and a few actions (seconds to embed), built without a
    fine-tuned model whatever the repository ships."""
    folder = tmp_path_factory.mktemp("corpus")
    (folder / "small.jsonl").write_text("".join(_records("conditions", lambda r: True)
                                                + _records("actions", lambda r: True)[:10]))
    store = tmp_path_factory.mktemp("store") / "store"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(embedder, "FINETUNED_DIR", tmp_path_factory.mktemp("no-model") / "embedder_model")
        build_index(Settings(store_dir=store), progress=False, corpus_folder=folder)
    return store


@pytest.fixture(scope="module")
def trained(small_store, tmp_path_factory) -> Path:
    """A model trained by the CLI on the six questions of entries in the store (seconds on a CPU)."""
    data = tmp_path_factory.mktemp("q") / "questions.jsonl"
    data.write_text("".join(json.dumps({"node_id": k, "questions": v}) + "\n" for k, v in QUESTIONS.items()))
    out = tmp_path_factory.mktemp("model") / "embedder_model"
    assert main(["--store", str(small_store), "embedder", "train", "--questions", str(data), "--batch", "4",
                 "--max-length", "32", "--seed", "3", "--out", str(out), "--json"]) == 0
    return out


def test_training_saves_a_loadable_fp16_model_with_its_record(trained, capsys):
    meta = json.loads((trained / "gmprep_embedder.json").read_text())
    report = meta["training"]
    assert report["rows"] == 6 and report["by_group"] == {"condition": 6}  # the unknown entry's question is skipped
    assert report["config"]["negatives"] == 1 and report["config"]["seed"] == 3 and report["final_loss"] > 0
    assert report["seconds"] > 0
    from safetensors import safe_open

    with safe_open(str(trained / "model.safetensors"), "pt") as f:
        assert all(f.get_tensor(k).dtype.is_floating_point and f.get_tensor(k).itemsize == 2 for k in f.keys())
    model = embedder.Embedder("cpu", trained)
    vecs = model.encode(["knocked flat on the ground", "Prone"])
    assert vecs.shape == (2, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-3)
    assert model.model.max_seq_length == 256  # trained short, embeds as the stock model does


def test_search_uses_the_fine_tuned_stage_when_present_and_the_stock_vectors_without(small_store, trained,
                                                                                      tmp_path, monkeypatch):
    import shutil

    store_dir = tmp_path / "store"
    shutil.copytree(small_store, store_dir)
    with Store.open(store_dir) as store:
        # no fine-tuned model shipped: no sidecar, the searcher has no dense stage
        monkeypatch.setattr(embedder, "FINETUNED_DIR", tmp_path / "missing")
        assert embedder.finetuned_dir() is None
        assert "no fine-tuned embedder" in dense_stage.build_dense_stage(store)
        assert dense_stage.dense_stage_current(store)
        stock = Searcher(store)
        assert stock.dense_stage is None
        plain = [h.node_id for h in stock.search("knocked flat on the ground", k=5, rerank=False)]
        assert plain

        # the model shipped: the sidecar is stale until built, then search reads it
        monkeypatch.setattr(embedder, "FINETUNED_DIR", trained)
        assert embedder.finetuned_dir() == trained
        assert not dense_stage.dense_stage_current(store)
        msg = dense_stage.build_dense_stage(store)
        assert "entries" in msg and dense_stage.dense_stage_current(store)
        tuned = Searcher(store)
        stage = tuned.dense_stage
        assert stage is not None and stage.embedder.model_dir == trained
        assert "pf2e:condition:prone" in stage.entry_ids
        assert stage.embedder is not embedder.shared_embedder()  # the stock one keeps serving the rest
        assert tuned.search("knocked flat on the ground", k=5, rerank=False)
        # the setting turns it off: the stock lists again
        off = Searcher(store, settings=SearchSettings(dense_model=False))
        assert off.dense_stage is None
        assert [h.node_id for h in off.search("knocked flat on the ground", k=5, rerank=False)] == plain

        # a model other than the one that wrote the sidecar: search falls back to the stock vectors
        other = tmp_path / "other"
        shutil.copytree(trained, other)
        (other / "model.safetensors").write_bytes((trained / "model.safetensors").read_bytes()[:-2] + b"\0\0")
        monkeypatch.setattr(embedder, "FINETUNED_DIR", other)
        assert not dense_stage.dense_stage_current(store)
        assert Searcher(store).dense_stage is None
