"""Mining and training split in two (``gmprep reranker train --rows-out`` / ``--rows-in``): rows mined from a
small real store (BM25 + MiniLM vectors), then a real CrossEncoder trained from the file alone on CPU."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gmprep.cli import main
from gmprep.common.settings import Settings
from gmprep.ingest.corpus import corpus_dir
from gmprep.ingest.pipeline import build_index
from gmprep.kg.reranker import Reranker
from gmprep.training.queries import generate_queries, quota_group
from gmprep.training.rows import FORMAT, RowsError, read_rows


def _records(name: str, keep) -> list[str]:
    with gzip.open(corpus_dir() / f"{name}.jsonl.gz", "rt") as fh:
        lines = list(fh)
    return [line for line in lines if keep(json.loads(line))]


@pytest.fixture(scope="module")
def small_store(tmp_path_factory) -> Path:
    """A real, embedded store of the conditions, a few actions, rules pages and rules-prose sections
    (about ninety entries: seconds to embed)."""
    folder = tmp_path_factory.mktemp("corpus")
    lines = _records("conditions", lambda r: True)
    lines += _records("actions", lambda r: True)[:10]
    lines += _records("rules", lambda r: r["fields"].get("hover_name") is False)[:25]
    lines += _records("rules", lambda r: r["fields"].get("hover_name") is not False)[:8]
    (folder / "small.jsonl").write_text("".join(lines))
    store = tmp_path_factory.mktemp("store") / "store"
    build_index(Settings(store_dir=store), progress=False, corpus_folder=folder)
    return store


def test_prose_sections_have_a_quota_group_of_their_own(corpus):
    nodes = [n for n in corpus.nodes if n.kind == "entry"]
    prose = [n for n in nodes if quota_group(n) == "rule-prose"]
    assert prose and all(n.type == "rule" for n in prose)
    queries = generate_queries(nodes, 2000, seed=3)
    by_id = {n.node_id: n for n in nodes}
    share = sum(quota_group(by_id[q.positive]) == "rule-prose" for q in queries) / len(queries)
    # TYPE_BOOST["rule-prose"]: about 15 % of the queries (18 % of the entries), not the 27 % "rule" would give
    assert 0.08 < share < 0.22


def test_rows_mined_from_a_store_train_a_model_without_it(small_store, tmp_path, capsys):
    rows_file = tmp_path / "rows.jsonl.gz"
    assert main(["--store", str(small_store), "reranker", "train", "--pairs", "48", "--seed", "5",
                 "--rows-out", str(rows_file), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = read_rows(rows_file)
    n = len(rows.rows)  # 12 asked; a type whose entries yield no query in its tries gives fewer
    assert summary["sha256"] == rows.sha256 and summary["header"]["rows"] == n and 8 <= n <= 12
    head = rows.header
    assert head["format"] == FORMAT and head["seed"] == 5 and head["negatives"] == 3 and head["pairs"] == 48
    assert head["store"]["prose_entries"] == 25 and head["store"]["dense_negatives"] is True
    assert sum(head["positives_by_group"].values()) == n
    for r in rows.rows:
        assert len(r.passages) == len(r.ids) == 4 and r.ids[0] not in r.ids[1:]
        assert all(p and len(p) <= 800 for p in r.passages)  # rerank_passage's window (700 chars + header)
    cols = rows.columns()
    assert list(cols) == ["query", "positive", "negative_1", "negative_2", "negative_3"]
    assert cols["positive"][0] == rows.rows[0].passages[0]

    # train from the file alone: the store given is not there, and must not be needed
    out = tmp_path / "model"
    assert main(["--store", str(tmp_path / "no-store"), "reranker", "train", "--rows-in", str(rows_file),
                 "--layers", "1", "--max-length", "64", "--batch-queries", "4", "--out", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["queries"] == n and report["pairs_per_epoch"] == 4 * n and report["device"] == "cpu"
    assert report["config"]["seed"] == 5 and report["config"]["batch_queries"] == 4  # the seed is the file's
    assert report["final_loss"] > 0
    meta = json.loads((out / "gmprep_reranker.json").read_text())
    assert meta["training"]["rows_sha256"] == rows.sha256 and meta["training"]["rows_header"] == head
    model = Reranker.load(out)
    assert model.model.config.num_hidden_layers == 1
    assert len(model.score("prone", ["Prone (condition)", "Fireball (spell)"])) == 2


def test_a_truncated_or_foreign_rows_file_is_refused(tmp_path, capsys):
    bad = tmp_path / "rows.jsonl.gz"
    with gzip.open(bad, "wt") as fh:
        fh.write(json.dumps({"format": FORMAT, "negatives": 1, "rows": 2}) + "\n")
        fh.write(json.dumps({"query": "q", "passages": ["a", "b"], "ids": ["x", "y"], "generator": "name"}) + "\n")
    with pytest.raises(RowsError, match="header says 2"):
        read_rows(bad)
    with gzip.open(bad, "wt") as fh:
        fh.write(json.dumps({"query": "q"}) + "\n")
    assert main(["reranker", "train", "--rows-in", str(bad), "--out", str(tmp_path / "m")]) == 1
    assert "not a reranker rows file" in capsys.readouterr().err


def test_written_questions_become_queries_for_their_entries(small_store, tmp_path, capsys):
    """``--questions FILE``: questions written for entries (the question index's data format) are mined as
    queries whose positive is their entry, up to ``--questions-share`` of the rows; unknown entries skipped."""
    data = tmp_path / "questions.jsonl"
    data.write_text(
        json.dumps({"node_id": "pf2e:condition:prone", "questions": [
            "The ogre knocked my fighter flat on the ground - what happens now?",
            "Can my character shoot a bow while lying on the floor?"]}) + "\n"
        + json.dumps({"node_id": "pf2e:condition:frightened", "questions": [
            "The dragon's roar terrified the party, what penalty do they take?"]}) + "\n"
        + json.dumps({"node_id": "pf2e:spell:not-in-this-store", "questions": ["Never a query"]}) + "\n",
        encoding="utf-8")
    rows_file = tmp_path / "rows.jsonl.gz"
    assert main(["--store", str(small_store), "reranker", "train", "--pairs", "48", "--seed", "5",
                 "--questions", str(data), "--questions-share", "0.5", "--rows-out", str(rows_file), "--json"]) == 0
    capsys.readouterr()
    rows = read_rows(rows_file)
    written = [r for r in rows.rows if r.generator == "written"]
    assert {r.query for r in written} == {
        "The ogre knocked my fighter flat on the ground - what happens now?",
        "Can my character shoot a bow while lying on the floor?",
        "The dragon's roar terrified the party, what penalty do they take?"}
    for r in written:
        assert r.ids[0] in {"pf2e:condition:prone", "pf2e:condition:frightened"} and r.ids[0] not in r.ids[1:]
    info = rows.header["written_questions"]
    assert info["available"] == 4 and info["used"] == 3  # read, and used (entries in the store) and info["share"] == 0.5
    assert len(rows.rows) - len(written) >= 5  # the generated queries fill the rest
    assert main(["--store", str(small_store), "reranker", "train", "--questions", str(tmp_path / "nope.jsonl"),
                 "--rows-out", str(rows_file)]) == 1
