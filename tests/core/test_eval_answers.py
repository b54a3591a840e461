"""``gmprep eval answers`` with the extractive backend: totals shape, declines, per-question output,
and the ranking helpers of the follow-up comparison."""

from __future__ import annotations

import json

from gmprep.cli import main
from gmprep.evals.answers import recall_hit, reciprocal_rank

# Written for this test in the eval README's format (not the labelled dev questions).
QUESTIONS = [
    {"id": "a-1", "kind": "lookup", "question": "What happens to a creature lying on the ground?", "history": [],
     "gold": ["pf2e:condition:prone"], "gold_mode": "any"},
    {"id": "a-2", "kind": "followup", "question": "And what does it do at value 2?",
     "history": [{"role": "user", "content": "What is the frightened condition?"},
                 {"role": "assistant", "content": "A status penalty to checks and DCs."}],
     "gold": ["pf2e:condition:frightened"], "gold_mode": "any"},
    {"id": "a-3", "kind": "unanswerable", "question": "How does THAC0 work?", "history": [], "gold": [], "gold_mode": "any"},
]


def test_recall_and_reciprocal_rank():
    assert recall_hit(["x", "a"], ["a"], "any", k=1) == 0.0 and recall_hit(["x", "a"], ["a"], "any", k=2) == 1.0
    assert reciprocal_rank(["x", "a"], ["a"], "any") == 0.5
    assert reciprocal_rank(["a", "x", "b"], ["a", "b"], "all") == 1 / 3
    assert reciprocal_rank(["x"], ["a"], "any") == 0.0


def test_eval_answers_extractive_json(store_dir, tmp_path, capsys):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    out = tmp_path / "per-question.jsonl"
    rc = main(["--store", str(store_dir), "eval", "answers", "--questions", str(qfile), "--backend", "extractive",
               "--json", "--out", str(out)])
    assert rc == 0
    totals = json.loads(capsys.readouterr().out)
    assert totals["backend"] == "extractive" and totals["n"] == 3
    assert totals["answerable"]["n"] == 2 and totals["answerable"]["citation_recall_at_5"] == 1.0
    assert totals["unanswerable"] == {"n": 1, "declined": 1.0, "not_in_corpus": 0.0}  # declined as not in the books
    assert set(totals["by_kind"]) == {"lookup", "followup", "unanswerable"}
    assert {"p50", "p95"} <= set(totals["latency_ms"])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a-1", "a-2", "a-3"]


def test_rewrite_comparison_needs_a_model(store_dir, tmp_path, capsys):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps(QUESTIONS[1]) + "\n")
    rc = main(["--store", str(store_dir), "eval", "answers", "--questions", str(qfile), "--backend", "extractive",
               "--rewrite-vs-concat"])
    assert rc == 1
    assert "needs a model backend" in capsys.readouterr().err
