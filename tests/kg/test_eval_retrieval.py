"""``gmprep eval retrieval`` on a handful of questions: JSON shape, metrics, and agreement with the
reference scorer (``score.py`` from the shared eval folder, when it is beside the checkout)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gmprep.cli import main
from gmprep.common.settings import Settings
from gmprep.evals.retrieval import DENSE_CACHE, KS, Question, rank_of_hit
from gmprep.ingest.corpus import corpus_dir
from gmprep.ingest.pipeline import build_index

SCORE_PY = Path(__file__).resolve().parents[3] / "shared" / "eval" / "score.py"
# Written for this test in the eval README's format (not the labelled dev questions).
QUESTIONS = [
    {"id": "t-1", "kind": "named", "question": "Bless", "history": [], "gold": ["pf2e:spell:bless"], "gold_mode": "any"},
    {"id": "t-2", "kind": "lookup", "question": "What happens to a creature lying on the ground?", "history": [],
     "gold": ["pf2e:condition:prone"], "gold_mode": "any"},
    {"id": "t-3", "kind": "multi-hop", "question": "If I Trip an ogre, what condition does it end up with?", "history": [],
     "gold": ["pf2e:action:trip", "pf2e:condition:prone"], "gold_mode": "all"},
    {"id": "t-4", "kind": "followup", "question": "And what does it do at value 2?",
     "history": [{"role": "user", "content": "What is the frightened condition?"},
                 {"role": "assistant", "content": "A status penalty to checks and DCs."}],
     "gold": ["pf2e:condition:frightened"], "gold_mode": "any"},
    {"id": "t-5", "kind": "unanswerable", "question": "How does THAC0 work?", "history": [], "gold": [], "gold_mode": "any"},
]


def test_rank_of_hit_matches_the_readme():
    assert rank_of_hit(["a"], ["x", "a"], "any", 10) == 2
    assert rank_of_hit(["a", "b"], ["a", "x", "b"], "all", 10) == 2
    assert rank_of_hit(["a", "b"], ["a", "b"], "all", 1) is None
    assert rank_of_hit(["a"], ["x"], "any", 10) is None


def test_followups_are_searched_with_their_history():
    q = Question.model_validate(QUESTIONS[3])
    assert q.search_text().startswith("What is the frightened condition?")
    assert q.search_text().endswith("And what does it do at value 2?")


def test_eval_command_prints_the_json_shape_and_agrees_with_score_py(store_dir, tmp_path, capsys):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    run_file = tmp_path / "run.jsonl"
    # Baselines are checked on a small store below: the dense one embeds every entry's plain text (minutes
    # on a CPU for the whole corpus), which a test of the command's shape does not need.
    rc = main(["--store", str(store_dir), "eval", "retrieval", "--questions", str(qfile), "--json",
               "--run-out", str(run_file), "--no-baselines"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert "baselines" not in out
    for name, block in {"system": out["system"], "no_rerank": out["no_rerank"]}.items():
        _check_block(block, name)
    assert out["system"]["by_kind"]["named"]["recall_at_1"] == 1.0
    assert out["system"]["recall_at_5"] >= 0.75
    lines = [json.loads(line) for line in run_file.read_text().splitlines()]
    assert [line["id"] for line in lines] == [q["id"] for q in QUESTIONS]
    # the reference scorer reads the same run file and must print the same overall numbers
    if not SCORE_PY.is_file():
        pytest.skip("score.py (../shared/eval) is not beside this checkout")
    score = subprocess.run([sys.executable, str(SCORE_PY), "questions", str(qfile), str(run_file)],
                           capture_output=True, text=True, check=True).stdout
    row = next(line for line in score.splitlines() if line.startswith("ALL answerable")).split()
    r1, r5, r10, mrr = (float(x) for x in row[-4:])
    sysm = out["system"]
    assert (r1, r5, r10) == pytest.approx((sysm["recall_at_1"], sysm["recall_at_5"], sysm["recall_at_10"]), abs=1e-3)
    assert mrr == pytest.approx(sysm["mrr_at_10"], abs=1e-3)


def _check_block(block: dict, name: str) -> None:
    assert block["n"] == 4, name  # the unanswerable one is not scored
    for k in KS:
        assert 0.0 <= block[f"recall_at_{k}"] <= 1.0
    assert set(block["by_kind"]) == {"named", "lookup", "multi-hop", "followup"}
    assert block["latency_ms"]["p95"] >= block["latency_ms"]["p50"] > 0


# The entries the questions ask for that are not conditions.
_SMALL_EXTRA = {"actions": "pf2e:action:trip", "spells": "pf2e:spell:bless"}


@pytest.fixture(scope="module")
def small_store(tmp_path_factory) -> Path:
    """A real, embedded store of the conditions (about forty entries) plus the questions' action and
    spell: enough for every baseline to rank, small enough to embed in seconds (the store is built
    here and the dense baseline embeds it again: each entry costs ~0.1 s of CPU)."""
    folder = tmp_path_factory.mktemp("corpus")
    lines = []
    for name in ("conditions", *_SMALL_EXTRA):
        with gzip.open(corpus_dir() / f"{name}.jsonl.gz", "rt") as fh:
            lines += [line for line in fh if name not in _SMALL_EXTRA or json.loads(line)["id"] == _SMALL_EXTRA[name]]
    (folder / "small.jsonl").write_text("".join(lines))
    store = tmp_path_factory.mktemp("store") / "store"
    build_index(Settings(store_dir=store), progress=False, corpus_folder=folder)
    return store


def test_the_baselines_rank_the_same_questions_and_the_dense_one_is_cached(small_store, tmp_path, capsys):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    cache = tmp_path / "dense-cache"
    args = ["--store", str(small_store), "eval", "retrieval", "--questions", str(qfile), "--json",
            "--dense-cache", str(cache)]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["baselines"]) == {"bm25", "dense"}
    for name, block in {"system": out["system"], "no_rerank": out["no_rerank"], **out["baselines"]}.items():
        _check_block(block, name)
    assert out["baselines"]["dense"]["by_kind"]["named"]["recall_at_10"] == 1.0  # "Bless" finds bless
    cached = cache / DENSE_CACHE
    assert cached.is_file()
    stamp = cached.stat().st_mtime_ns
    assert main(args) == 0  # the second run reads the vectors back instead of embedding again
    again = json.loads(capsys.readouterr().out)["baselines"]["dense"]
    assert {k: v for k, v in again.items() if k != "latency_ms"} == {
        k: v for k, v in out["baselines"]["dense"].items() if k != "latency_ms"}
    assert cached.stat().st_mtime_ns == stamp


def test_eval_command_limit_and_table(store_dir, tmp_path, capsys):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    assert main(["--store", str(store_dir), "eval", "retrieval", "--questions", str(qfile), "--limit", "2",
                 "--no-baselines"]) == 0
    table = capsys.readouterr().out
    assert table.startswith("system") and "no_rerank" in table and "named" in table


def test_eval_rejects_an_unknown_search_setting(store_dir, tmp_path, capsys):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps(QUESTIONS[0]) + "\n")
    rc = main(["--store", str(store_dir), "eval", "retrieval", "--questions", str(qfile), "--search", "rerank_topp=3"])
    assert rc == 1
    assert "unknown search setting 'rerank_topp'" in capsys.readouterr().err
