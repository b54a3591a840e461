"""Index pipeline on a small corpus: incremental notes, and every kind of damage repaired with a message."""

import shutil
from pathlib import Path

import pytest

from gmprep.common.settings import Settings
from gmprep.ingest.pipeline import build_index, index_note
from gmprep.kg.embedder import shared_embedder
from gmprep.kg.store import Store


def _build(store: Path, corpus: Path, notes: Path | None = None):
    return build_index(Settings(store_dir=store), notes_dir=notes, progress=False, corpus_folder=corpus)


def test_build_incremental_notes_and_removal(tmp_path, mini_corpus):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Ambush\n\nGoblins knock the PCs [[Prone]].\n")
    (notes / "b.md").write_text("# Shop\n\nA homebrew Brassbottle Bitters costs 3 gp.\n")
    store_dir = tmp_path / "store"
    r1 = _build(store_dir, mini_corpus, notes)
    assert r1.corpus_reingested and sorted(r1.notes_indexed) == ["a.md", "b.md"]
    assert any("mini.jsonl:5" in m for m in r1.messages)  # the malformed line is named
    store = Store.open(store_dir)
    assert store.entry_count() == 4 + 2 and store.has_embeddings()
    ambush = store.get("note:a.md#ambush")
    assert ("pf2e:condition:prone", "ref") in store.neighbors(ambush.node_id, {"ref"})
    store.close()

    r2 = _build(store_dir, mini_corpus, notes)  # nothing changed: nothing redone
    assert not r2.corpus_reingested and r2.notes_indexed == [] and r2.nodes_embedded == 0

    (notes / "b.md").write_text("# Shop\n\nBrassbottle Bitters now cost 4 gp.\n")
    (notes / "a.md").unlink()
    r3 = _build(store_dir, mini_corpus, notes)
    assert r3.notes_indexed == ["b.md"] and r3.notes_removed == ["a.md"]
    store = Store.open(store_dir)
    assert store.get("note:a.md#ambush") is None
    assert "4 gp" in store.get("note:b.md#shop").text
    hits = store.bm25("Brassbottle Bitters", 5)
    assert hits and hits[0][0] == "note:b.md#shop"
    store.close()

    (notes / "c.md").write_text("# Fog Rules\n\nThick fog makes everything concealed.\n")
    r4 = index_note(Settings(store_dir=store_dir), notes / "c.md", notes)
    assert r4.notes_indexed == ["c.md"] and r4.nodes_embedded == 2


def test_deleted_vector_file_is_rebuilt(tmp_path, mini_corpus):
    store_dir = tmp_path / "store"
    _build(store_dir, mini_corpus)
    (store_dir / "vectors.usearch").unlink()
    store = Store.open(store_dir)
    assert any("missing" in p for p in store.health().problems)
    store.close()
    report = _build(store_dir, mini_corpus)
    assert any("missing" in m for m in report.messages)
    store = Store.open(store_dir)
    assert store.has_embeddings()
    vec = shared_embedder().encode_query("lying on the ground")
    assert store.vector_search(vec, 1)[0][0] == "pf2e:condition:prone"
    store.close()


def test_other_embedder_is_detected_and_reembedded(tmp_path, mini_corpus):
    store_dir = tmp_path / "store"
    _build(store_dir, mini_corpus)
    store = Store.open(store_dir)
    store.set_meta(embedder="some-other-model", embedder_dim="768")
    store.close()
    report = _build(store_dir, mini_corpus)
    assert any("some-other-model" in m for m in report.messages)
    assert report.nodes_embedded == 4 + 5  # every node again (entries and their book/chapter nodes)
    store = Store.open(store_dir)
    assert store.meta["embedder"] == "all-MiniLM-L6-v2" and store.health("all-MiniLM-L6-v2", 384).ok
    store.close()


def test_corrupt_database_is_moved_aside_and_rebuilt(tmp_path, mini_corpus):
    store_dir = tmp_path / "store"
    _build(store_dir, mini_corpus)
    for p in store_dir.glob("graph.db-*"):
        p.unlink()
    (store_dir / "graph.db").write_bytes(b"this is not a database" * 100)
    report = _build(store_dir, mini_corpus)
    assert any("moved the unusable index database aside" in m for m in report.messages)
    kept = list(store_dir.glob("graph.db.broken-*"))
    assert kept and kept[0].read_bytes().startswith(b"this is not")  # nothing is thrown away
    store = Store.open(store_dir)
    assert store.entry_count() == 4 and store.has_embeddings()
    store.close()


def test_corrupt_vector_file_gives_clear_error(tmp_path, mini_corpus):
    from gmprep.common.errors import StoreError

    store_dir = tmp_path / "store"
    _build(store_dir, mini_corpus)
    (store_dir / "vectors.usearch").write_bytes(b"garbage" * 10)
    store = Store.open(store_dir)
    with pytest.raises(StoreError, match="vector file"):
        store.vector_search(shared_embedder().encode_query("x"), 1)
    assert store.health().needs_reembed
    store.close()
    _build(store_dir, mini_corpus)
    store = Store.open(store_dir)
    assert store.has_embeddings() and store.vector_search(shared_embedder().encode_query("prone"), 1)
    store.close()
    shutil.rmtree(store_dir)
