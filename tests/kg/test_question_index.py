"""The question index on a real store (SQLite, MiniLM vectors, the bundled reranker): built from the
rules entries' inbound contexts, searched beside the entry text, fused so the plain query's best hit
stays; and the offline generation job's resume with a real llama.cpp model (SmolLM2-135M)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from smollm import smollm2_path

from gmprep.common.settings import SearchSettings
from gmprep.kg.question_index import QuestionIndex, build_question_index, inbound_contexts, question_index_for
from gmprep.kg.search import Searcher
from gmprep.kg.store import Store

QUERIES = [
    "the troll knocked my fighter to the ground, what penalties does he have",
    "Bless",
    "stunned condition",
    "my rogue wants to slip past the guards unseen",
    "how much does a player heal when the cleric patches them up after a fight",
]


@pytest.fixture(scope="module")
def qstore(store_dir, tmp_path_factory):
    import shutil

    dst = tmp_path_factory.mktemp("qindex") / "store"
    shutil.copytree(store_dir, dst, ignore=shutil.ignore_patterns("READY", "*-wal", "*-shm"))
    st = Store.open(dst, create=False)
    report = build_question_index(st, [], types=("condition",), per_entry=4)
    assert "question index:" in report and "entries" in report, report
    yield st
    st.close()


def test_inbound_contexts_are_sentences_that_name_the_entry(qstore):
    pairs = inbound_contexts(qstore, types=("condition",), per_entry=4)
    by_entry: dict[str, list[str]] = {}
    for nid, sentence in pairs:
        by_entry.setdefault(nid, []).append(sentence)
    assert "pf2e:condition:prone" in by_entry
    assert all(len(v) <= 4 for v in by_entry.values())
    assert all("prone" in s.lower() for s in by_entry["pf2e:condition:prone"])


def test_question_index_loads_and_ranks_entries_by_their_best_text(qstore):
    index = question_index_for(qstore)
    assert isinstance(index, QuestionIndex) and len(index) > 20
    searcher = Searcher(qstore, settings=SearchSettings())
    qvec = searcher.embedder.encode_query("he slipped while climbing the cliff and fell down")
    top = [nid for nid, _ in index.search(qvec, 5)]
    assert all(nid.startswith("pf2e:condition:") for nid in top)
    assert "pf2e:condition:prone" in top, top


# With a conditions-only index, "how much does a player heal when the cleric patches them up" once put
# Wounded/Dying above Treat Wounds (plain #1 -> fused #5): the question list pushed the plain candidates out
# of the rerank window. The plain lists' best candidates are now always reranked (kg/search.py), so the plain
# query's top hit stays among the five sources an answer shows ("the troll knocked my fighter to the ground":
# plain #1 Moving in Wind, fused Prone, Clumsy, Off-Guard, then Moving in Wind).
@pytest.mark.parametrize("query", QUERIES)
def test_fusion_keeps_the_plain_querys_top_hit(qstore, query):
    plain = Searcher(qstore, settings=SearchSettings(question_index=False)).search(query, k=10)
    fused = Searcher(qstore, settings=SearchSettings(question_index=True)).search(query, k=10)
    assert plain and fused
    assert plain[0].node_id in [h.node_id for h in fused[:5]], ([h.node_id for h in plain[:3]], [h.node_id for h in fused[:5]])


def test_a_store_without_the_sidecar_searches_as_before(store_copy):
    with Store.open(store_copy, create=False) as st:
        (Path(st.root) / "question_index.npz").unlink(missing_ok=True)
        assert question_index_for(st) is None
        hits = Searcher(st, settings=SearchSettings()).search("stunned condition", k=3)
        assert hits[0].node_id == "pf2e:condition:stunned"



def test_generation_resumes_and_skips_done_entries(store_dir, tmp_path):
    from gmprep.core.llm.llamacpp import LlamaCppBackend
    from gmprep.core.question_gen import (
        GenerationManifest,
        generate,
        load_manifest,
        read_done,
        select_entries,
    )

    with Store.open(store_dir, create=False) as st:
        nodes = select_entries(st.iter_nodes(kinds=("entry",)), ("condition",))[:3]
    assert len(nodes) == 3
    backend = LlamaCppBackend(smollm2_path(), n_ctx=1024, n_threads=2, n_parallel=2, max_tokens=40)
    out = tmp_path / "q.jsonl.gz"
    manifest = GenerationManifest(model="SmolLM2-135M", model_sha256="test", seed=1, temperature=0.0,
                                  max_tokens=40, types=["condition"])
    generate(backend, nodes, out, manifest, limit=2, parallel=2)
    first = read_done(out)
    assert set(first) == {n.node_id for n in nodes[:2]}
    # a second run (a resumed job) writes only the missing entry and keeps the first lines as they were
    saved = load_manifest(out)
    assert saved is not None and saved.entries_done == 2 and saved.entries_total == 3
    generate(backend, nodes, out, saved, parallel=2)
    with gzip.open(out, "rt", encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert len(lines) == 3
    done = read_done(out)
    assert set(done) == {n.node_id for n in nodes}
    assert {k: v.questions for k, v in first.items()} == {k: done[k].questions for k in first}
    final = load_manifest(out)
    assert final is not None and final.entries_done == 3 and len(final.runs) == 2
    assert final.runs[1]["entries"] == 1
