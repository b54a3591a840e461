"""What the rest of a note says about a candidate's entry ("one sense per discourse"): the evidence itself,
the note stage reading it through the scanner, the model file, and calibrate learning its weights."""

from __future__ import annotations

import copy
import json

import pytest

from gmprep.common.errors import GmprepError
from gmprep.common.settings import HoverSettings
from gmprep.ingest.corpus import load_corpus
from gmprep.kg.mention_scorer import MentionScorer, NoteStage
from gmprep.kg.names import NameIndex
from gmprep.kg.note_evidence import CLIP, EVIDENCE, note_evidence
from gmprep.kg.note_scan import NoteScanner, staged

# A GM's encounter prep: the creature's trait named outright, then the narration's lowercase plural.
ENCOUNTER = ("## Encounter\n\n- 3 zombies (creature 1), weak to fire\n\nThe zombie trait: mindless undead.\n\n"
             "The zombies shambled toward us from the crypt and we ran back to town.\n")
# Everyday prose: every "contract" is the English word.
EVERYDAY = "The guild asked us to sign a contract. The contract was long and we argued about the contract for hours.\n"
NARRATION = "We walked to the crypt. The zombies shambled toward us from the crypt and we ran back to town.\n"


@pytest.fixture(scope="module")
def index():
    return NameIndex.build([n for n in load_corpus().nodes if n.kind == "entry"])


@pytest.fixture(scope="module")
def scorer():
    base = MentionScorer.load()
    plain = copy.copy(base)
    plain.note_stage = None  # the scorer's own confidences: the evidence is read from them
    plain.note_weights = {}  # nor the whole-note features (tests/kg/test_note_numbers.py)
    return plain


def test_evidence_reads_the_other_candidates_of_the_entry_and_its_type():
    entries = ["a", "a", "a", "b", "c"]
    types = ["creature", "creature", "creature", "creature", "spell"]
    zs = [3.0, -1.0, -2.0, 1.0, 20.0]
    ev = note_evidence(EVIDENCE, entries, types, zs)
    gap, tmean = EVIDENCE.index("entry_gap"), EVIDENCE.index("type_mean")
    assert [e[gap] for e in ev] == [-1.0 - 3.0, 3.0 + 1.0, 3.0 + 2.0, 0.0, 0.0]  # itself excluded; alone: 0
    assert [e[tmean] for e in ev][:4] == [1.0, 1.0, 1.0, (3.0 - 1.0 - 2.0) / 3]  # same type, other entries only
    assert ev[4][tmean] == 0.0  # no other spell
    assert note_evidence(("type_mean",), ["x", "y"], ["t", "t"], [100.0, 0.0])[1] == (CLIP,)  # clipped
    assert note_evidence((), entries, types, zs) == [()] * 5
    with pytest.raises(ValueError):
        note_evidence(("sense",), entries, types, zs)


def test_a_confident_mention_of_the_entry_lifts_its_lowercase_narration(index, scorer):
    """One stage with a weight on the entry evidence: the narration's "zombies" rises where the note names the
    zombie trait outright, not where the narration stands alone; everyday "contract" stays everyday."""
    stage = NoteStage(1.0, 0.0, 0.0, ("entry_gap",), (0.4,))
    plain = NoteStage(1.0, 0.0, 0.0)

    def narrated(text: str, word: str) -> tuple[float, float, float]:
        cands = NoteScanner(index, scorer=scorer).candidates(text)
        i = max(i for i, c in enumerate(cands) if c.mention.text == word)
        return cands[i].mention.confidence, staged(plain, cands)[i], staged(stage, cands)[i]

    raw, without, with_ev = narrated(ENCOUNTER, "zombies")
    assert abs(without - raw) < 1e-3  # the identity stage changes nothing
    assert with_ev > raw + 0.2
    raw_alone, _, alone = narrated(NARRATION, "zombies")
    assert abs(alone - raw_alone) < 1e-3  # the entry occurs once: no evidence either way
    for k in range(3):
        cands = NoteScanner(index, scorer=scorer).candidates(EVERYDAY)
        contracts = [i for i, c in enumerate(cands) if c.mention.text == "contract"]
        assert len(contracts) == 3
        i = contracts[k]
        assert staged(stage, cands)[i] < 0.2 and abs(staged(stage, cands)[i] - cands[i].mention.confidence) < 0.05


def test_the_scanner_shows_what_the_stage_with_evidence_decides(index, scorer):
    shown = copy.copy(scorer)
    shown.note_stage = NoteStage(1.0, 0.0, 0.0, ("entry_gap", "type_mean"), (0.4, 0.1))
    scanner = NoteScanner(index, HoverSettings(context_model=False), scorer=shown)  # the stage alone
    scanner.threshold = 0.0
    cands = scanner.candidates(ENCOUNTER)
    expect = staged(shown.note_stage, cands)
    got = [m.confidence for m in scanner.scan(ENCOUNTER).mentions]
    assert got == expect


def test_the_model_file_keeps_the_evidence_and_refuses_unknown_names(tmp_path):
    stage = NoteStage(0.8, 0.3, -0.1, ("entry_gap",), (0.25,))
    again = NoteStage.from_json(json.loads(json.dumps(stage.to_json())))
    assert again == stage
    assert NoteStage.from_json({"self_weight": 1, "section_weight": 0, "bias": 0}).evidence == ()
    assert "evidence" not in NoteStage(1.0, 0.0, 0.0).to_json()  # a model without it reads as before
    assert stage.adjust(0.5, 1.0, (2.0,)) > stage.adjust(0.5, 1.0) + 0.05
    from gmprep.kg.mention_scorer import MODEL_DIR, MODEL_FILE, _load

    saved = json.loads((MODEL_DIR / MODEL_FILE).read_text())
    saved["note_stage"] = {"self_weight": 1, "section_weight": 0, "bias": 0,
                           "evidence": {"features": ["gossip"], "weights": [1.0]}}
    (tmp_path / MODEL_FILE).write_text(json.dumps(saved))
    _load.cache_clear()
    with pytest.raises(GmprepError, match="malformed"):
        MentionScorer.load(tmp_path)
    _load.cache_clear()


def test_calibrate_learns_the_evidence_weights_leaving_one_gm_out(tmp_path, scorer_copy):
    from gmprep.cli import main

    model = scorer_copy
    notes = tmp_path / "notes"
    notes.mkdir()
    texts = {"gma-1": ENCOUNTER + "\n" + EVERYDAY, "gmb-1": NARRATION + "\nThe ogre is frightened 2 and prone.\n" + EVERYDAY}
    rows = []
    for doc, text in texts.items():
        (notes / f"{doc}.md").write_text(text)
        for cand in NoteScanner(NameIndex.build([n for n in load_corpus().nodes if n.kind == "entry"]),
                                scorer=None).candidates(text):
            m = cand.mention
            rule = text[cand.start:cand.end].lower() not in ("contract", "fire")
            rows.append({"doc": doc, "start": cand.start, "end": cand.end, "text": text[cand.start:cand.end],
                         "label": "rule" if rule else "noise", "ids": [m.node_id] if rule else []})
    labels = tmp_path / "tune.jsonl"
    labels.write_text("\n".join(json.dumps(r) for r in rows))
    args = ["hover", "calibrate", "--labels", str(labels), "--notes", str(notes), "--model", str(model)]
    assert main(args + ["--note-evidence", "entry_gap"]) == 1  # needs the note stage
    assert main(args + ["--note-stage", "--note-evidence", "gossip"]) == 1
    assert main(args + ["--note-stage", "--note-evidence", "entry_gap,type_mean"]) == 0
    saved = json.loads((model / "mention_scorer.json").read_text())
    assert saved["note_stage"]["evidence"]["features"] == ["entry_gap", "type_mean"]
    assert len(saved["note_stage"]["evidence"]["weights"]) == 2
    cal = json.loads((model / "manifest.json").read_text())["calibration"]
    assert cal["command"].endswith("--note-evidence entry_gap,type_mean")
    assert MentionScorer.load(model).note_stage.evidence == ("entry_gap", "type_mean")
    assert main(args + ["--note-stage"]) == 0  # calibrating again without it: off
    assert "evidence" not in json.loads((model / "mention_scorer.json").read_text())["note_stage"]
