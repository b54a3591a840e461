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


def _smollm2_gguf():
    import pytest
    from smollm import smollm2_path

    pytest.importorskip("xllamacpp")
    return smollm2_path()


def test_eval_answers_faithfulness_with_smollm2(store_dir, tmp_path, capsys):
    """The real llama.cpp path (SmolLM2-135M) on two questions: the support check's keys per answer and in
    the totals, citation precision, the extractive baseline of the same run, the manifest, and rescoring the
    saved answers against judgements (here: the check's own labels, so agreement must be 1.0)."""
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS[:2]))
    out = tmp_path / "answers.jsonl"
    rc = main(["--store", str(store_dir), "eval", "answers", "--questions", str(qfile), "--backend", "llamacpp",
               "--model-path", str(_smollm2_gguf()), "--threads", "2", "--faithfulness", "--json", "--out", str(out)])
    assert rc == 0
    totals = json.loads(capsys.readouterr().out)
    assert totals["backend"] == "llamacpp" and totals["n"] == 2
    assert {"citation_recall_at_5", "citation_precision", "false_decline_rate"} <= set(totals["answerable"])
    base = totals["baseline"]
    assert base["backend"] == "extractive" and base["answerable"]["citation_recall_at_5"] == 1.0
    # the extractive answer quotes its passages: it has claims, and the check runs on them
    assert base["faithfulness"]["answers"] == 2 and base["faithfulness"]["claims"] > 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a-1", "a-2"]
    for r in rows:
        assert r["backend"] == "llamacpp"
        if r["outcome"] in ("answered", "partial"):
            assert r["passages"] and r["support"]["sentences"] == len(r["support"]["verdicts"])
            assert set(totals["faithfulness"]) >= {"answers", "claims", "unsupported_rate", "mean_supported_share"}
    manifest = json.loads(out.with_suffix(".manifest.json").read_text())
    assert manifest["backend"] == "llamacpp" and manifest["command"].startswith("gmprep ")
    judged = tmp_path / "judgements.jsonl"
    lines = []
    for r in rows:
        for v in (r["support"] or {}).get("verdicts", []):
            label = "not_claim" if not v["claim"] else ("supported" if v["supported"] else "unsupported")
            lines.append(json.dumps({"id": r["id"], "index": v["index"], "sentence": v["text"], "label": label,
                                     "split": "test"}))
    judged.write_text("".join(line + "\n" for line in lines))
    rc = main(["--store", str(store_dir), "eval", "answers", "--answers-in", str(out), "--faithfulness",
               "--judgements", str(judged), "--json"])
    assert rc == 0
    again = json.loads(capsys.readouterr().out)
    assert again["agreement"]["test"]["sentences"] == len(lines)
    if lines:
        assert again["agreement"]["test"]["agreement"] == 1.0
