"""The residual layer learned from judged notes (kg.mention_residual): fitting, folding into the model's
weights, refusing held-out labels, and the leave-one-GM-out report. Real corpus, real scanner, real
model file; the notes are small ones written here, labelled like bench/data/real-notes."""

from __future__ import annotations

import json
import math

import pytest

from gmprep.common.errors import GmprepError
from gmprep.ingest.corpus import load_corpus
from gmprep.kg import mention_residual as mr
from gmprep.kg.mention_scorer import MODEL_DIR, MODEL_FILE, MentionScorer
from gmprep.kg.names import NameIndex
from gmprep.kg.note_scan import NoteScanner

NOTES = {
    "gma-log": "The rogue can Trip the ogre, then it is frightened 2.\n\nThey rode through the city gates at dawn.\n"
               "The guards raised the alarm when the goblin fled.\n",
    "gmb-prep": "## Encounter\n\nThe ogre uses Shove, then Grapple. Cast *fear* on it (DC 18 Will).\n\n"
                "## Town\n\nA light rain falls on the market; the mayor keeps a secret.\n",
    "gmc-log": "Aldo cast heal on the fighter and the cleric used Demoralize.\n\n"
               "The bard sang about the balance of power in the city.\n",
    "gmc-rules": "Flanking makes a target off-guard. A prone creature takes a penalty.\n\n"
                 "We keep a light touch with the rules and hidden doors are rare.\n",
}
RULES = {"Trip": "pf2e:action:trip", "frightened 2": "pf2e:condition:frightened", "Shove": "pf2e:action:shove",
         "Grapple": "pf2e:action:grapple", "fear": "pf2e:spell:fear", "heal": "pf2e:spell:heal",
         "Demoralize": "pf2e:action:demoralize", "off-guard": "pf2e:condition:off-guard",
         "prone": "pf2e:condition:prone"}


@pytest.fixture(scope="module")
def nodes():
    return [n for n in load_corpus().nodes if n.kind == "entry"]


@pytest.fixture(scope="module")
def model():
    m = json.loads((MODEL_DIR / MODEL_FILE).read_text(encoding="utf-8"))
    m.pop("note_stage", None)
    return mr.corpus_model(m)


@pytest.fixture()
def labelled(tmp_path, nodes):
    """The notes above, every candidate the scanner proposes judged: a rule when listed in RULES."""
    notes = tmp_path / "notes"
    notes.mkdir()
    scanner = NoteScanner(NameIndex.build(nodes))
    rows = []
    for doc, text in NOTES.items():
        (notes / f"{doc}.md").write_text(text, encoding="utf-8")
        for m in scanner.candidates(text):
            span = text[m.start:m.end]
            rule = RULES.get(span) == m.mention.node_id
            rows.append({"doc": doc, "start": m.start, "end": m.end, "text": span,
                         "label": "rule" if rule else "noise", "ids": [m.mention.node_id] if rule else [],
                         "reason": None if rule else "everyday"})
    labels = tmp_path / "labels" / "tune.jsonl"
    labels.parent.mkdir()
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    groups = {doc: doc.split("-")[0] for doc in NOTES}
    return labels, notes, groups


def test_the_folded_model_scores_what_the_layer_says(labelled, nodes, model):
    labels, notes, groups = labelled
    cands = mr.note_candidates(labels, notes, nodes, model, groups)
    assert {c.gm for c in cands} == {"gma", "gmb", "gmc"}
    assert any(c.label == 1 for c in cands) and any(c.label == 0 for c in cands)
    layer = mr.fit_residual(cands, c=0.1)
    folded = mr.fold(model, layer)
    scorer = MentionScorer(folded)
    base = MentionScorer(model)
    for c in cands:
        z = scorer._intercept + sum(scorer._coef.get(k, 0.0) * v for k, v in c.features.items() if v)
        assert z == pytest.approx(layer.logit(c), abs=1e-5)
        # the layer is a correction of the corpus model's logit, not a new model
        zb = base._intercept + sum(base._coef.get(k, 0.0) * v for k, v in c.features.items() if v)
        assert zb == pytest.approx(c.z, abs=1e-9)
    # learning from the judged notes moves rules up and everyday senses down, on average
    gain = [layer.logit(c) - c.z for c in cands if c.label == 1]
    loss = [layer.logit(c) - c.z for c in cands if c.label == 0]
    assert sum(gain) / len(gain) > sum(loss) / len(loss)
    # the corpus model's own weights travel with the file: a second fit starts from them, not from the first
    again = mr.corpus_model(folded)
    assert again["weights"] == model["weights"] and again["bias"] == model["bias"]
    assert math.isfinite(folded["bias"]) and len(folded["weights"]) == len(folded["features"])


def test_a_held_out_split_is_refused(labelled, nodes, model):
    labels, notes, groups = labelled
    held = labels.with_name("heldout2.jsonl")
    held.write_text(labels.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(GmprepError, match="held-out"):
        mr.note_candidates(held, notes, nodes, model, groups)


def test_leave_one_gm_out_scores_each_gm_with_models_that_never_saw_it(labelled, nodes, model):
    labels, notes, groups = labelled
    cands = mr.note_candidates(labels, notes, nodes, model, groups)
    report, spans = mr.leave_one_gm_out(cands, c=0.1)
    assert set(report) <= {"gma", "gmb", "gmc"} and report
    judged = [c for c in cands if c.label is not None]
    assert len(spans) == len(judged)
    for r in report.values():
        assert 0.0 <= r["shown"]["precision"] <= 1.0 and r["thresholds"]["normal"] >= 0.0


def test_a_candidate_is_judged_by_the_rule_span_that_names_its_entry():
    # "zombie rot" (the Plague Zombie's ability) starts where the noise "zombie" (the trait) does: the
    # rule span naming its entry judges it, as `gmprep eval hover --real` counts a hit
    from gmprep.kg.mention_scorer_train import judged_row

    rows = [{"start": 10, "end": 16, "label": "noise"},
            {"start": 10, "end": 20, "label": "rule", "ids": ["pf2e:creature:plague-zombie"]}]
    assert judged_row(rows, 10, 20, "pf2e:creature:plague-zombie")["label"] == "rule"
    assert judged_row(rows, 10, 16, "pf2e:trait:zombie")["label"] == "noise"  # the first overlapping row
    assert judged_row(rows, 30, 36, "pf2e:trait:zombie") is None


def test_the_layer_reaches_its_optimum_with_weak_regularisation(labelled, nodes, model):
    # a full Newton step from zero overshoots on separable notes; the damped steps still reach the minimum of
    # the penalised loss (its gradient vanishes) with finite logits
    import numpy as np

    labels, notes, groups = labelled
    cands = [c for c in mr.note_candidates(labels, notes, nodes, model, groups) if c.label is not None]
    names = sorted({k for x in cands for k in x.features})
    raw = np.array([[x.features.get(k, 0.0) for k in names] for x in cands])
    y = np.array([x.label for x in cands], dtype=float)
    for c in (0.1, 10.0):
        layer = mr.fit_residual(cands, c=c)
        z = np.array([layer.logit(x) for x in cands])
        assert np.isfinite(z).all() and np.abs(z).max() < 100.0
        # the gradient in the fit's own (standardised) space: data term + L2 term, intercept unpenalised
        full = np.hstack([np.array([[x.z] for x in cands]), raw])
        mu, sd = full.mean(0), full.std(0)
        sd[sd == 0] = 1.0
        theta = np.array([layer.alpha - 1.0] + [layer.coef[k] for k in names]) * sd
        p = 1.0 / (1.0 + np.exp(-z))
        grad = ((full - mu) / sd).T @ (p - y) + theta / c
        assert np.abs(grad[sd != 1.0]).max() < 1e-3
