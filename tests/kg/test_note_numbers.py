"""Whole-note features (``mention_scorer.NOTE_FEATURES``): the share of number tokens in a candidate's section
and in its note, read by the scanner's whole-note pass (``kg.note_scan.note_logits``) with the weights a
layer learned from notes; the real corpus, the real scanner and the shipped model file."""

from __future__ import annotations

import copy
import json
import math

import pytest

from gmprep.common.settings import HoverSettings
from gmprep.ingest.corpus import load_corpus
from gmprep.kg import mention_residual as mr
from gmprep.kg.mention_scorer import MODEL_DIR, MODEL_FILE, NOTE_FEATURES, MentionScorer, logit
from gmprep.kg.names import NameIndex
from gmprep.kg.note_scan import NoteScanner, note_logits, staged

# A combat log (numbers everywhere) and a story section (none), in one note.
LOG = ("## Round 1\n\nvaleria strike bandit 2: 19 hit for 6 p. strike again, 8 miss.\n\n"
       "## Story\n\nWe walked to the old mill and the miller told us about the strike at the docks.\n")
STORY = "We walked to the old mill and the miller told us about the strike at the docks.\n"


@pytest.fixture(scope="module")
def index():
    return NameIndex.build([n for n in load_corpus().nodes if n.kind == "entry"])


@pytest.fixture(scope="module")
def scorer():
    plain = copy.copy(MentionScorer.load())
    plain.note_stage = None
    plain.note_weights = {}
    return plain


def _strikes(cands) -> list[int]:
    return [i for i, c in enumerate(cands) if c.mention.text.lower() == "strike"]


def test_each_candidate_reads_the_number_share_of_its_section_and_note(index, scorer):
    cands = NoteScanner(index, scorer=scorer).candidates(LOG)
    first, *_, story = _strikes(cands)
    sec_log, note = cands[first].note_features
    sec_story, note2 = cands[story].note_features
    assert note == note2 and 0.0 < note < sec_log
    assert sec_story == 0.0
    assert len(cands[first].note_features) == len(NOTE_FEATURES)
    # the same paragraph alone: no number anywhere; the chunk cache does not carry the other note's values over
    scanner = NoteScanner(index, scorer=scorer)
    scanner.candidates(LOG)
    alone = scanner.candidates(STORY)
    assert alone[_strikes(alone)[0]].note_features == (0.0, 0.0)


def test_the_weights_move_the_logit_before_the_stage_and_the_scan_shows_it(index, scorer):
    cands = NoteScanner(index, scorer=scorer).candidates(LOG)
    own = [logit(c.mention.confidence) for c in cands]
    assert note_logits(cands) == own and note_logits(cands, {}) == own  # no weights: the scorer's own
    w = {"section_numbers": 2.0, "note_numbers": 5.0}
    moved = note_logits(cands, w)
    for c, z, z2 in zip(cands, own, moved, strict=True):
        assert z2 == pytest.approx(z + 2.0 * c.note_features[0] + 5.0 * c.note_features[1])
    first, *_, story = _strikes(cands)
    assert moved[first] - own[first] > moved[story] - own[story] > 0.0  # the log's "strike" rises more
    # without a note stage the moved logit is the confidence; the scanner shows the same numbers
    conf = staged(None, cands, w)
    assert conf[first] == pytest.approx(1.0 / (1.0 + math.exp(-moved[first])), abs=1e-4)
    shown = copy.copy(scorer)
    shown.note_weights = w
    scanner = NoteScanner(index, HoverSettings(context_model=False), scorer=shown)  # the stage alone
    scanner.threshold = 0.0
    assert [m.confidence for m in scanner.scan(LOG).mentions] == conf


def test_the_model_file_carries_the_weights_a_layer_learned(tmp_path):
    saved = json.loads((MODEL_DIR / MODEL_FILE).read_text(encoding="utf-8"))
    base = mr.corpus_model(saved)
    assert not set(NOTE_FEATURES) & set(base["features"])  # the corpus model never sees a note
    assert MentionScorer(base).note_weights == {}
    layer = mr.Residual(1.0, {"section_numbers": 1.5, "note_numbers": 0.0}, 0.0)
    folded = MentionScorer(mr.fold(base, layer))
    assert folded.note_weights == {"section_numbers": 1.5}  # a zero weight is no weight
    # the span's own score ignores them (its window cannot read them); only the note pass adds them
    assert folded._intercept == pytest.approx(MentionScorer(base)._intercept)


def _judged_logs(tmp_path, index):
    """Three GMs' notes judged so that the combat log's strikes are the rules: (labels, notes, texts, model, nodes)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    texts = {"gma-log": LOG, "gmb-log": LOG.replace("valeria", "ducim"), "gmc-story": STORY + STORY}
    rows = []
    for doc, text in texts.items():
        (notes / f"{doc}.md").write_text(text, encoding="utf-8")
        for c in NoteScanner(index).candidates(text):
            rule = c.mention.text.lower() == "strike" and c.section[-1:] == ("Round 1",)
            rows.append({"doc": doc, "start": c.start, "end": c.end, "text": text[c.start:c.end],
                         "label": "rule" if rule else "noise", "ids": [c.mention.node_id] if rule else []})
    labels = tmp_path / "tune.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    model = mr.corpus_model(json.loads((MODEL_DIR / MODEL_FILE).read_text(encoding="utf-8")))
    nodes = [n for n in load_corpus().nodes if n.kind == "entry"]
    return labels, notes, texts, model, nodes


def test_the_layer_learns_from_the_note_features(tmp_path, index):
    labels, notes, texts, model, nodes = _judged_logs(tmp_path, index)
    cands = mr.note_candidates(labels, notes, nodes, model, {d: d.split("-")[0] for d in texts})
    assert all(set(NOTE_FEATURES) <= set(c.features) for c in cands)
    layer = mr.fit_residual(cands, c=1.0)
    assert layer.coef["section_numbers"] > 0.0  # the log's strikes are the rules here


def test_a_layer_fitted_without_the_note_numbers_gives_them_no_weight(tmp_path, index):
    """``hover calibrate --without-note-numbers``: the held-out run rejected these features, so a refit must be
    able to leave them out; the folded model then reads a note exactly as without them."""
    labels, notes, texts, model, nodes = _judged_logs(tmp_path, index)
    cands = mr.note_candidates(labels, notes, nodes, model, {d: d.split("-")[0] for d in texts}, note_features=False)
    assert cands and not any(set(NOTE_FEATURES) & set(c.features) for c in cands)
    layer = mr.fit_residual(cands, c=1.0)
    assert not set(NOTE_FEATURES) & set(layer.coef)
    assert not MentionScorer(mr.fold(model, layer)).note_weights
