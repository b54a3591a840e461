"""The hover mention scorer: its features, the shipped model on clear cases, loading, training, calibration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gmprep.common.errors import GmprepError
from gmprep.ingest.corpus import load_corpus
from gmprep.kg.mention_scorer import WINDOW_CHARS, Candidate, MentionScorer, SpanContext, at_sentence_start
from gmprep.kg.mention_scorer_train import markdown_context
from gmprep.kg.names import NameIndex


@pytest.fixture(scope="module")
def nodes():
    return {n.node_id: n for n in load_corpus().nodes if n.kind == "entry"}


@pytest.fixture(scope="module")
def index(nodes):
    return NameIndex.build(nodes.values())


@pytest.fixture(scope="module")
def scorer():
    return MentionScorer.load()


def _span(text: str, word: str, nth: int = 0) -> tuple[int, int]:
    start = -1
    for _ in range(nth + 1):
        start = text.index(word, start + 1)
    return start, start + len(word)


def _cand(index, nodes, text, start, end, lookup: str | None = None) -> Candidate:
    ids = index.candidates(lookup or text[start:end])
    assert ids, f"no entry named {lookup or text[start:end]!r}"
    node = nodes[ids[0]]
    return Candidate(
        node_id=node.node_id, type=node.type, name=node.name, matched=text[start:end],
        exact_case=text[start:end] == node.name, plural=lookup is not None, alternatives=len(ids),
    )


def _score(scorer, index, nodes, text, word, ctx=None, lookup=None):
    start, end = _span(text, word)
    cand = _cand(index, nodes, text, start, end, lookup)
    return scorer.score(text, start, end, cand, ctx if ctx is not None else markdown_context(text, start, end))


def _features(scorer, index, nodes, text, word, ctx=None, lookup=None):
    start, end = _span(text, word)
    cand = _cand(index, nodes, text, start, end, lookup)
    return scorer.featurize(text, start, end, cand, ctx if ctx is not None else markdown_context(text, start, end))


# ---- features ----------------------------------------------------------------------------------
def test_value_after_a_condition(scorer, index, nodes):
    f = _features(scorer, index, nodes, "The claw leaves you frightened 2 until your turn ends.", "frightened")
    assert f["value_after"] == 1.0 and f["value_after_condition"] == 1.0 and f["lowercase"] == 1.0
    g = _features(scorer, index, nodes, "The claw leaves you frightened until your turn ends.", "frightened")
    assert g["value_after"] == 0.0


def test_longer_capitalised_names(scorer, index, nodes):
    f = _features(scorer, index, nodes, "We met the Hands of the Everlight at the temple.", "Everlight")
    assert f["cap_name_bridge"] == 1.0 and f["in_longer_name"] == 1.0
    g = _features(scorer, index, nodes, "Meet the Laughing Shadow in the alley.", "Shadow")
    assert g["prev_cap_glued"] == 1.0 and g["in_longer_name"] == 1.0
    # a list of rule names joined by "and" is no longer name
    h = _features(scorer, index, nodes, "You are Confused and Stupefied 3 for a round.", "Stupefied")
    assert h["in_longer_name"] == 0.0 and h["cap_mid_sentence"] == 1.0


def test_writing_features(scorer, index, nodes):
    f = _features(scorer, index, nodes, "- **Status:** Active", "Status")
    assert f["colon_after"] == 1.0 and f["bold"] == 1.0 and f["list_item"] == 1.0
    g = _features(scorer, index, nodes, "The wizard opens with *fireball* on the goblins.", "fireball")
    assert g["italic"] == 1.0 and g["italic_spell"] == 1.0 and g["type=spell"] == 1.0
    h = _features(scorer, index, nodes, "Then the rogue can Trip the guard.", "Trip")
    assert h["cap_mid_sentence"] == 1.0 and h["sentence_start"] == 0.0
    assert at_sentence_start("- Gates close at dusk", 2)
    assert at_sentence_start("It ends. Gates close", 9)
    assert not at_sentence_start("the city Gates", 9)


def test_english_frequency_and_rule_vocabulary(scorer, index, nodes):
    common = _features(scorer, index, nodes, "They rode through the city gates at dawn.", "gates", lookup="gate")
    rare = _features(scorer, index, nodes, "You are stupefied 2.", "stupefied")
    assert common["zipf_single"] > rare["zipf_single"] > 0
    ruley = _features(scorer, index, nodes, "On a failed Will save against DC 20 it is frightened 1 for a round.", "frightened")
    plain = _features(scorer, index, nodes, "My little sister was frightened by the thunder last night.", "frightened")
    assert ruley["ctx_rule_mean"] > plain["ctx_rule_mean"]


def test_window_is_bounded(scorer, index, nodes):
    """Features read a bounded window, so a scan costs the same per candidate on any line length."""
    text = "They rode through the city gates at dawn."
    start, end = _span(text, "gates")
    cand = _cand(index, nodes, text, start, end, "gate")
    pad = "word " * 5000
    long_text = pad + text + " " + pad
    ctx = SpanContext()
    near = scorer.featurize(text, start, end, cand, ctx)
    far = scorer.featurize(long_text, start + len(pad), end + len(pad), cand, ctx)
    assert far.keys() == near.keys()
    clipped = long_text[start + len(pad) - WINDOW_CHARS:end + len(pad) + WINDOW_CHARS]
    again = scorer.featurize(clipped, WINDOW_CHARS, WINDOW_CHARS + end - start, cand, ctx)
    assert far == again


# ---- the shipped model on clear cases ----------------------------------------------------------
def test_clear_rule_mentions_hover(scorer, index, nodes):
    t = scorer.threshold_for("normal")
    assert _score(scorer, index, nodes, "The claw leaves you frightened 2 until your turn ends.", "frightened") >= t
    text = "The wizard opens with *fireball* on the goblins."
    s, e = _span(text, "fireball")
    ctx = SpanContext(italic=True)
    assert scorer.score(text, s, e, _cand(index, nodes, text, s, e), ctx) >= t
    assert _score(scorer, index, nodes, "If it fails, the guard can Trip the rogue (DC 18 Reflex save).", "Trip") >= t


def test_clear_everyday_and_name_parts_do_not(scorer, index, nodes):
    t = scorer.threshold_for("normal")
    assert _score(scorer, index, nodes, "We met the Hands of the Everlight at the temple.", "Everlight") < t
    assert _score(scorer, index, nodes, "They rode through the city gates at dawn.", "gates", lookup="gate") < t
    assert _score(scorer, index, nodes, "The treaty keeps the balance of power between the houses.", "balance") < t
    assert _score(scorer, index, nodes, "Meet the Laughing Shadow in the alley.", "Shadow") < t


def test_batch_matches_single_and_scores_are_probabilities(scorer, index, nodes):
    text = "The ogre is frightened 2 and the city gates close. Cast *fireball*."
    items = []
    for word, lookup in (("frightened", None), ("gates", "gate"), ("fireball", None)):
        s, e = _span(text, word)
        items.append((s, e, _cand(index, nodes, text, s, e, lookup), markdown_context(text, s, e)))
    batch = scorer.score_batch(text, items)
    assert batch == [scorer.score(text, *item) for item in items]
    assert all(0.0 <= x <= 1.0 for x in batch)


def test_thresholds_are_ordered(scorer):
    assert 0.0 < scorer.threshold_for("loose") <= scorer.threshold_for("normal") <= scorer.threshold_for("strict") < 1.0
    assert scorer.threshold == scorer.threshold_for("normal")


# ---- loading ----------------------------------------------------------------------------------
def test_loading_errors_are_one_line(tmp_path):
    with pytest.raises(GmprepError, match="not found"):
        MentionScorer.load(tmp_path / "nothing")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "mention_scorer.json").write_text("{not json")
    with pytest.raises(GmprepError, match="unreadable"):
        MentionScorer.load(bad)
    (bad / "mention_scorer.json").write_text(json.dumps({"features": ["a"], "weights": [1.0]}))
    with pytest.raises(GmprepError, match="malformed"):
        MentionScorer.load(bad)


def test_shipped_manifest_says_how_it_was_made():
    from gmprep.kg.mention_scorer import MODEL_DIR

    manifest = json.loads((MODEL_DIR / "manifest.json").read_text())
    assert manifest["command"].startswith("gmprep hover train-scorer")
    assert manifest["positives"] > 1000 and manifest["negatives"] > 1000
    # the thresholds come from tuning notes: calibrated, or chosen on out-of-GM scores while training
    tuned = manifest.get("real_notes") or manifest.get("calibration")
    assert tuned and "heldout" not in tuned["labels"]
    if manifest.get("real_notes"):
        assert len(manifest["real_notes"]["leave_one_gm_out"]) >= 2


def test_markdown_context():
    text = "# Session 3\n\n## Fights\n\n| Foe | Note |\n|---|---|\n| ogre | is **Grabbed** |\n- see [Trip](x) and _haste_"
    s, e = _span(text, "Grabbed")
    ctx = markdown_context(text, s, e)
    assert ctx.in_table_cell and ctx.bold and ctx.headings == ("Session 3", "Fights")
    s, e = _span(text, "Trip")
    ctx = markdown_context(text, s, e)
    assert ctx.in_list_item and ctx.in_link_text and not ctx.bold
    s, e = _span(text, "haste")
    assert markdown_context(text, s, e).italic


# ---- training and calibration -----------------------------------------------------------------
def test_train_on_a_tiny_sample(tmp_path):
    pytest.importorskip("sklearn")
    pytest.importorskip("wordfreq")
    from gmprep.cli import main

    out = tmp_path / "model"
    assert main(["hover", "train-scorer", "--seed", "3", "--limit-entries", "150", "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["corpus_entries"] == 150 and manifest["seed"] == 3
    assert manifest["positives"] > 0 and manifest["negatives"] > 0
    assert set(manifest["by_kind"]) >= {"link:1", "lower-unlinked:0"}
    model = MentionScorer.load(out)
    assert model.zipf["the"] > 6 and model.rule_logodds
    text = "The ogre is frightened 2."
    s, e = _span(text, "frightened")
    cand = Candidate("pf2e:condition:frightened", "condition", "Frightened", "frightened")
    assert 0.0 <= model.score(text, s, e, cand) <= 1.0
    # retraining over a calibrated model keeps its thresholds and note stage
    saved = json.loads((out / "mention_scorer.json").read_text())
    saved["thresholds"] = {"loose": 0.3, "normal": 0.5, "strict": 0.8, "rescue": 0.2}
    saved["note_stage"] = {"self_weight": 0.4, "section_weight": 0.3, "bias": -0.4}
    (out / "mention_scorer.json").write_text(json.dumps(saved))
    assert main(["hover", "train-scorer", "--seed", "3", "--limit-entries", "150", "--out", str(out)]) == 0
    again = json.loads((out / "mention_scorer.json").read_text())
    assert again["thresholds"] == saved["thresholds"] and again["note_stage"] == saved["note_stage"]


def test_calibrate_on_labelled_notes_and_refuse_heldout(tmp_path, scorer_copy):
    from gmprep.cli import main

    model = scorer_copy
    notes = tmp_path / "notes"
    notes.mkdir()
    text = (
        "# Ambush\n\nThe ogre is frightened 2 after the roar. They rode through the city gates at dawn.\n"
        "On a failure the guard is Grabbed. The Hands of the Everlight watch. Cast *fireball* twice.\n"
    )
    (notes / "n1.md").write_text(text)
    rows = []
    for word, label, ids in (
        ("frightened", "rule", ["pf2e:condition:frightened"]), ("gates", "noise", []),
        ("Grabbed", "rule", ["pf2e:condition:grabbed"]), ("Everlight", "noise", []),
        ("fireball", "rule", ["pf2e:spell:fireball"]),
    ):
        s, e = _span(text, word)
        rows.append({"doc": "n1", "start": s, "end": e, "text": word, "label": label, "ids": ids})
    labels = tmp_path / "tune.jsonl"
    labels.write_text("\n".join(json.dumps(r) for r in rows))
    assert main(["hover", "calibrate", "--labels", str(labels), "--notes", str(notes), "--model", str(model)]) == 0
    saved = json.loads((model / "mention_scorer.json").read_text())["thresholds"]
    assert saved["loose"] <= saved["normal"] <= saved["strict"]
    heldout = tmp_path / "heldout.jsonl"
    heldout.write_text(labels.read_text())
    assert main(["hover", "calibrate", "--labels", str(heldout), "--notes", str(notes), "--model", str(model)]) == 1


def test_calibration_left_one_gm_out():
    """Thresholds chosen without a GM are applied to that GM: a GM whose scores sit where the others'
    noise sits gets that threshold's precision, not its own best."""
    from gmprep.kg.mention_scorer_train import LabelledSpan, auc, leave_one_gm_out, pooled

    def spans(doc, pairs):
        return [LabelledSpan(doc, i, i + 1, lab, "", sc) for i, (lab, sc) in enumerate(pairs)]

    a = spans("a-1", [(1, 0.9), (1, 0.8), (0, 0.3), (0, 0.2)])  # separable at 0.5
    b = spans("b-1", [(1, 0.7), (1, 0.2), (0, 0.6), (0, 0.1)])
    assert auc(a) == 1.0 and auc(b) == 0.75 and auc(a[:2]) is None
    rep = leave_one_gm_out(a + b, {"a-1": "A", "b-1": "B"})
    assert set(rep) == {"A", "B"} and rep["A"]["auc"] == 1.0
    # B's threshold comes from A alone (the lowest score that separates A: 0.5 of the grid)
    assert rep["B"]["thresholds"]["normal"] == 0.5
    assert (rep["B"]["normal"]["tp"], rep["B"]["normal"]["fp"]) == (1, 1)
    p, r = pooled(rep)
    assert 0.0 < p < 1.0 and 0.0 < r <= 1.0


def test_train_with_real_notes_leaves_one_gm_out_and_refuses_heldout(tmp_path):
    pytest.importorskip("sklearn")
    pytest.importorskip("wordfreq")
    from gmprep.cli import main

    notes = tmp_path / "notes"
    notes.mkdir()
    texts = {
        "gm1-a": "The ogre is frightened 2 after the roar. They rode through the city gates at dawn.\n",
        "gm2-a": "On a failure the guard is Grabbed. The Hands of the Everlight watch. Cast *fireball* twice.\n",
    }
    rows = []
    for doc, text in texts.items():
        (notes / f"{doc}.md").write_text(text)
    for doc, word, label, ids in (
        ("gm1-a", "frightened", "rule", ["pf2e:condition:frightened"]), ("gm1-a", "gates", "noise", []),
        ("gm2-a", "Grabbed", "rule", ["pf2e:condition:grabbed"]), ("gm2-a", "Everlight", "noise", []),
        ("gm2-a", "fireball", "rule", ["pf2e:spell:fireball"]),
    ):
        s, e = _span(texts[doc], word)
        rows.append({"doc": doc, "start": s, "end": e, "text": word, "label": label, "ids": ids})
    labels = tmp_path / "labels" / "tune.jsonl"
    labels.parent.mkdir()
    labels.write_text("\n".join(json.dumps(r) for r in rows))
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "d.md").write_text("Tovan is frightened 2 and uses Demoralize.\n")
    (dev / "d.md.json").write_text(json.dumps({"mentions": [
        {"line": 0, "character": 31, "text": "Demoralize", "gold": "pf2e:action:demoralize"}]}))
    out = tmp_path / "model"
    args = ["hover", "train-scorer", "--seed", "3", "--limit-entries", "150", "--out", str(out),
            "--real-notes", str(notes), "--dev-notes", str(dev)]
    assert main([*args, "--real-labels", str(labels)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    real = manifest["real_notes"]
    assert real["spans"] == 5 and real["rule_spans"] == 3
    assert set(real["leave_one_gm_out"]) <= {"gm1", "gm2"}  # grouped by GM (no sources.json: the doc prefix)
    t = json.loads((out / "mention_scorer.json").read_text())["thresholds"]
    assert t["loose"] <= t["normal"] <= t["strict"]
    assert t["normal"] <= real["dev_notes"]["ceiling"]  # the dev note's Demoralize keeps hovering
    heldout = labels.with_name("heldout.jsonl")
    heldout.write_text(labels.read_text())
    assert main([*args, "--real-labels", str(heldout)]) == 1


# ---- the note stage: a confidence read against its section's ---------------------------------------
def test_note_stage_reads_a_candidate_against_its_section(index):
    """The same sentence scores lower under a heading full of everyday prose than under one full of
    rules: the stage moves a confidence toward its section's, and a short section borrows the note's."""
    import copy

    from gmprep.common.settings import HoverSettings
    from gmprep.kg.mention_scorer import NoteStage, logit
    from gmprep.kg.note_scan import SECTION_PRIOR, NoteScanner, section_means

    stage = NoteStage(0.5, 0.5, 0.0)
    assert stage.adjust(0.5, 0.0) == 0.5 and stage.adjust(0.5, 2.0) > 0.5 > stage.adjust(0.5, -2.0)
    assert abs(logit(0.75) - 1.0986) < 1e-3 and logit(0.0) < -10 and logit(1.0) > 10

    base = copy.copy(MentionScorer.load())
    base.note_weights = {}  # the stage alone (the whole-note features: tests/kg/test_note_numbers.py)
    staged = copy.copy(base)
    staged.note_stage = stage
    line = "She was hidden behind the tent."
    rules = "# Ambush\n\nThe ogre is frightened 2 and grabbed; it can Trip and Shove. " + line + "\n"
    prose = "# Evening\n\nWe sang by the fire and ate bread with the farmers. " + line + "\n"
    found = {}
    for name, text in (("rules", rules), ("prose", prose)):
        cands = NoteScanner(index, scorer=base).candidates(text)
        means = section_means(cands)
        assert len(means) == len(cands)
        hidden = [i for i, c in enumerate(cands) if c.mention.text == "hidden"]
        if hidden:
            i = hidden[0]
            found[name] = stage.adjust(cands[i].mention.confidence, means[i])
            shown = NoteScanner(index, HoverSettings(context_model=False), scorer=staged)  # the stage alone
            shown.threshold = 0.0
            conf = {m.text: m.confidence for m in shown.scan(text).mentions}
            assert abs(conf["hidden"] - round(found[name], 4)) < 1e-4  # the scanner applies the same stage
    assert found["rules"] > found["prose"]
    # one section of one candidate: its own logit and the note's mean, weighted 1 : SECTION_PRIOR
    one = NoteScanner(index, scorer=base).candidates("# A\n\nThe troll is frightened 2.\n\n# B\n\nIt is prone.\n")
    zs = [logit(c.mention.confidence) for c in one]
    assert len(one) == 3  # troll, frightened, prone
    assert abs(section_means(one)[2] - (zs[2] + SECTION_PRIOR * sum(zs) / 3) / (1 + SECTION_PRIOR)) < 1e-9


def test_calibrate_fits_the_note_stage_leaving_one_gm_out(tmp_path, scorer_copy):
    from gmprep.cli import main
    from gmprep.kg.mention_scorer_train import StageSpan, fit_note_stage

    # the fit: a label that follows the section's mean more than the span's own logit weighs it more
    spans = [StageSpan("a", i, i, int(sm > 0), z, sm) for i, (z, sm) in enumerate(
        [(2.0, 1.0), (-1.0, 1.5), (1.5, -1.0), (-2.0, -1.2), (0.5, 2.0), (0.8, -2.0), (-0.3, 0.7), (1.0, -0.6)])]
    st = fit_note_stage(spans)
    assert st.section_weight > abs(st.self_weight)

    model = scorer_copy
    notes = tmp_path / "notes"
    notes.mkdir()
    texts = {
        "gma-1": "# Fight\n\nThe ogre is frightened 2 and grabbed. Cast *fireball* on it.\n\n"
                 "# Market\n\nThey rode through the city gates and the alarm rang.\n",
        "gmb-1": "# Fight\n\nThe troll is prone and off-guard. It can Trip.\n\n"
                 "# Evening\n\nShe was hidden by the tent; we heal with soup and rest.\n",
    }
    rows = []
    for doc, text in texts.items():
        (notes / f"{doc}.md").write_text(text)
        for word, label, ids in (
            ("frightened", "rule", ["pf2e:condition:frightened"]), ("grabbed", "rule", ["pf2e:condition:grabbed"]),
            ("fireball", "rule", ["pf2e:spell:fireball"]), ("gates", "noise", []), ("alarm", "noise", []),
            ("prone", "rule", ["pf2e:condition:prone"]), ("off-guard", "rule", ["pf2e:condition:off-guard"]),
            ("Trip", "rule", ["pf2e:action:trip"]), ("hidden", "noise", []), ("heal", "noise", []),
            ("rest", "noise", []),
        ):
            if word in text:
                s, e = _span(text, word)
                rows.append({"doc": doc, "start": s, "end": e, "text": word, "label": label, "ids": ids})
    labels = tmp_path / "tune.jsonl"
    labels.write_text("\n".join(json.dumps(r) for r in rows))
    args = ["hover", "calibrate", "--labels", str(labels), "--notes", str(notes), "--model", str(model)]
    assert main(args + ["--note-stage"]) == 0
    saved = json.loads((model / "mention_scorer.json").read_text())
    assert set(saved["note_stage"]) == {"self_weight", "section_weight", "bias"}
    cal = json.loads((model / "manifest.json").read_text())["calibration"]
    assert cal["command"].endswith("--note-stage") and set(cal["note_stage"]["leave_one_gm_out"]) == {"gma", "gmb"}
    assert MentionScorer.load(model).note_stage is not None
    assert main(args + ["--drop-note-stage"]) == 0
    assert "note_stage" not in json.loads((model / "mention_scorer.json").read_text())
    heldout = tmp_path / "heldout.jsonl"
    heldout.write_text(labels.read_text())
    assert main(["hover", "calibrate", "--labels", str(heldout), "--notes", str(notes), "--model", str(model),
                 "--note-stage"]) == 1


def test_rules_of_thumb_matches_get_their_own_lower_bar():
    """Matches the rules of thumb accept and ones they turn down are calibrated apart: here the accepted
    ones are right even at low scores, the others wrong up to 0.6, so "rescue" sits below "normal"."""
    from gmprep.kg.mention_scorer_train import LabelledSpan, calibrate, pr_shown

    def sp(label, score, group):
        return LabelledSpan("a-1", 0, 1, label, "", score, group)

    spans = [sp(1, 0.9, "plain"), sp(1, 0.8, "plain"), sp(0, 0.6, "plain"), sp(0, 0.5, "plain"),
             sp(0, 0.3, "plain"), sp(1, 0.35, "rescue"), sp(1, 0.3, "rescue"), sp(0, 0.1, "rescue"),
             sp(1, 0.05, "value"), sp(0, 0.02, "value")]
    t = calibrate(spans)
    assert t["normal"] == 0.8 and t["rescue"] == 0.3 and t["loose"] <= t["normal"] <= t["strict"]
    assert pr_shown(spans, t["normal"], t["rescue"])[2:] == (5, 1, 0)  # the value span shows at any score
    capped = calibrate(spans, normal_cap=0.7, rescue_cap=0.2)
    assert capped["normal"] <= 0.7 and capped["rescue"] <= 0.2
    # without groups (an old labels reader): no rescue threshold, "loose" stays the floor
    assert "rescue" not in calibrate([sp(x.label, x.score, "plain") for x in spans])


def test_scanner_floor_is_the_rescue_threshold(index):
    from gmprep.kg.note_scan import NoteScanner

    scorer = MentionScorer.load()
    sc = NoteScanner(index, scorer=scorer)
    assert sc.floor == scorer.thresholds.get("rescue", scorer.threshold_for("loose"))


def test_balanced_thresholds_serve_every_gm_not_the_gm_with_the_most_spans():
    """``balance_by_gm``: one GM's many rule-dense spans (all rules from 0.3 up) must not pull the threshold down
    to where another GM's notes are mostly noise; unweighted, the big GM decides."""
    from gmprep.kg.mention_scorer_train import LabelledSpan, balance_by_gm, calibrate

    big = [LabelledSpan("big-a", i, i + 1, 1, "", 0.3 + 0.6 * i / 200) for i in range(200)]
    small = ([LabelledSpan("small-a", i, i + 1, 1, "", 0.8) for i in range(10)]
             + [LabelledSpan("small-a", 100 + i, 101 + i, 0, "", 0.4) for i in range(10)])
    spans = big + small
    gm_of = {"big-a": "big", "small-a": "small"}
    weighted = balance_by_gm(spans, gm_of)
    assert sum(x.weight for x in weighted) == pytest.approx(len(spans))
    assert all(x.weight == pytest.approx(len(spans) / 2 / 20) for x in weighted if x.doc == "small-a")
    assert calibrate(spans, precision_target=0.9)["normal"] <= 0.4  # 200 rules outvote 10 noise spans
    assert calibrate(weighted, precision_target=0.9)["normal"] > 0.4


# ---- the local frame of a lowercase candidate (measured, docs/hover.md section 5) ---------------
def test_frame_tokens_skip_markup_and_mark_the_edges():
    from gmprep.kg.mention_scorer import frame_tokens

    assert frame_tokens("He is *", "* with the ghoul") == ("is", "with")
    assert frame_tokens("", "") == ("<start>", "<end>")
    assert frame_tokens("a [", "](x) off") == ("a", "x")
    assert frame_tokens("frightened (", " 2)") == ("frightened", "<num>")


@pytest.fixture(scope="module")
def frames():
    pytest.importorskip("wordfreq")
    from gmprep.commands.hover import corpus_text
    from gmprep.kg.mention_scorer_train import corpus_frame_table

    return corpus_frame_table(corpus_text())


def test_frame_table_learns_noun_slots_from_the_corpus_labels(frames):
    # a word followed by a determiner is a verb taking an object ("shield the ally"), one followed by
    # "off" a phrasal verb: the corpus writes its everyday senses there, its linked rules elsewhere
    assert frames and all(-4.0 <= v <= 4.0 for v in frames.values())
    assert frames["n:the"] < -0.5 and frames["n:a"] < -0.5
    assert frames["n:,"] > frames["n:the"]


def test_frame_feature_only_for_lowercase_and_only_with_a_table(scorer, index, nodes, frames):
    from gmprep.kg.mention_scorer import MODEL_DIR, MODEL_FILE

    model = json.loads((MODEL_DIR / MODEL_FILE).read_text())
    without = MentionScorer({k: v for k, v in model.items() if k != "frame_logodds"})
    with_table = MentionScorer(model | {"frame_logodds": frames})
    verb = "We ward off the ghoul with a torch."
    noun = "We raise a ward, and the ghoul waits."
    assert "frame_lower" not in _features(without, index, nodes, verb, "ward")
    f_verb = _features(with_table, index, nodes, verb, "ward")["frame_lower"]
    f_noun = _features(with_table, index, nodes, noun, "ward")["frame_lower"]
    assert f_verb < f_noun
    assert _features(with_table, index, nodes, "We raise a Ward, and wait.", "Ward")["frame_lower"] == 0.0


def test_shipped_model_has_no_frame_and_a_model_weighing_it_reads_verbs_lower(scorer, index, nodes, frames):
    # the 11-GM refit with the frame lost precision on the held-out notes (docs/hover.md section 5), so the
    # shipped model carries no table and scores as before; a model given the table and a weight for it scores
    # the same lowercase word lower, against the noun use, as a verb taking an object than the shipped model does
    assert not scorer.frame_logodds and "frame_lower" not in scorer.features
    from gmprep.kg.mention_scorer import MODEL_DIR, MODEL_FILE

    model = json.loads((MODEL_DIR / MODEL_FILE).read_text())
    weighed = MentionScorer(model | {
        "frame_logodds": frames, "features": [*model["features"], "frame_lower"],
        "weights": [*model["weights"], 1.0], "means": [*model["means"], 0.0], "scales": [*model["scales"], 1.0],
    })
    as_verb = "In the crypt we shield the priest from the ghoul."
    as_noun = "In the crypt we raise a shield, and the priest waits."
    f = _features(weighed, index, nodes, as_verb, "shield")
    g = _features(weighed, index, nodes, as_noun, "shield")
    assert f["frame_lower"] < g["frame_lower"]
    def gap(m):  # how much higher the noun use scores than the verb use
        return _score(m, index, nodes, as_noun, "shield") - _score(m, index, nodes, as_verb, "shield")

    assert gap(weighed) > gap(scorer)


def test_frame_table_needs_the_note_layer(tmp_path, capsys):
    from gmprep.cli import main

    assert main(["hover", "calibrate", "--labels", str(tmp_path / "l.jsonl"), "--notes", str(tmp_path),
                 "--frame-table", "--dry-run"]) == 1
    assert "--frame-table needs --learn-from-notes" in capsys.readouterr().err


def test_train_with_frame_features_weighs_the_frame(tmp_path):
    pytest.importorskip("sklearn")
    pytest.importorskip("wordfreq")
    from gmprep.cli import main

    out = tmp_path / "model"
    assert main(["hover", "train-scorer", "--seed", "3", "--limit-entries", "300", "--frame-features",
                 "--out", str(out)]) == 0
    saved = json.loads((out / "mention_scorer.json").read_text())
    assert saved["frame_logodds"] and "frame_lower" in saved["features"]
    assert json.loads((out / "manifest.json").read_text())["frame_tokens"] == len(saved["frame_logodds"])


# ---- the kind of thing a trait names (measured, docs/hover.md section 5) ------------------------
@pytest.fixture(scope="module")
def kinds():
    from gmprep.commands.hover import corpus_text
    from gmprep.kg.mention_scorer_train import creature_kinds

    return creature_kinds(corpus_text().nodes)


def test_creature_kinds_are_read_from_the_corpus_trait_lists(kinds):
    # a trait only creatures carry names a kind of creature; one spells and actions carry is a word of the rules
    assert kinds and all(0.0 < v <= 1.0 for v in kinds.values())
    assert kinds["pf2e:trait:zombie"] >= 0.9 and kinds["pf2e:trait:ooze"] >= 0.9
    assert kinds.get("pf2e:trait:attack", 0.0) < 0.1
    assert kinds.get("pf2e:trait:fire", 0.0) < 0.5


def test_creature_kind_features_only_with_a_table_and_weighed_when_a_layer_carries_them(scorer, index, nodes, kinds):
    # the shipped model carries no table (hov32's 11-GM refit with it was reverted after the held-out run); a model
    # given the table and the refit's two weights reads the kind of a lowercase trait, and without the table the
    # same model reads no such feature: the lowercase creature kind scores lower, the rules word alike
    assert not scorer.creature_kind
    from gmprep.kg.mention_scorer import MODEL_DIR, MODEL_FILE

    model = json.loads((MODEL_DIR / MODEL_FILE).read_text())
    without = MentionScorer(model)
    model["creature_kind"] = kinds
    # hov32's refit weights (docs/hover.md section 5); the feature's mean 0 and scale 1 keep them as read
    model["features"] = [*model["features"], "creature_kind", "creature_kind_lower"]
    model["weights"] = [*model["weights"], 0.65, 0.79]
    model["means"] = [*model["means"], 0.0, 0.0]
    model["scales"] = [*model["scales"], 1.0, 1.0]
    kinded = MentionScorer(model)
    text = "At dusk the zombies shambled out of the crypt, and their attack came fast."
    assert "creature_kind_lower" not in _features(without, index, nodes, text, "zombies", lookup="zombie")
    f = _features(kinded, index, nodes, text, "zombies", lookup="zombie")
    g = _features(kinded, index, nodes, text, "attack")
    assert f["creature_kind_lower"] >= 0.9 and g["creature_kind_lower"] == 0.0
    capital = _features(kinded, index, nodes, "The Zombie trait: mindless.", "Zombie")
    assert capital["creature_kind"] >= 0.9 and capital["creature_kind_lower"] == 0.0
    assert (_score(kinded, index, nodes, text, "zombies", lookup="zombie")
            > _score(without, index, nodes, text, "zombies", lookup="zombie") + 0.1)
    assert _score(kinded, index, nodes, text, "attack") == pytest.approx(_score(without, index, nodes, text, "attack"))


def test_creature_kinds_need_the_note_layer(tmp_path, capsys):
    from gmprep.cli import main

    assert main(["hover", "calibrate", "--labels", str(tmp_path / "l.jsonl"), "--notes", str(tmp_path),
                 "--creature-kinds", "--dry-run"]) == 1
    assert "--creature-kinds needs --learn-from-notes" in capsys.readouterr().err


def test_noun_word_reads_the_lexicon():
    from gmprep.kg.mention_scorer import noun_word

    assert noun_word("horse") and noun_word("lantern")
    # a function word, an auxiliary, a finite verb form (past, third person) are no noun slot
    assert not any(noun_word(w) for w in ("that", "which", "will", "lurched", "the", "is", "rose", "waits"))


def test_kind_noun_slot_zeroes_a_creature_kind_used_as_an_adjective(index, nodes, kinds):
    # measured, not shipped (helper hov32b): with the table and the model's flag, a singular creature-kind word
    # directly followed by a lowercase noun is an adjective ("a zombie horse"); the plural, a verb after it, a
    # function word or punctuation keep the kind; without the flag nothing changes
    from gmprep.kg.mention_scorer import MODEL_DIR, MODEL_FILE

    model = json.loads((MODEL_DIR / MODEL_FILE).read_text())
    model["creature_kind"] = kinds
    plain = MentionScorer(model)
    slotted = MentionScorer(model | {"creature_kind_noun_slot": True})
    assert not plain.kind_noun_slot and slotted.kind_noun_slot

    def lower(scorer, text):
        # the singular form, as the trait (the test helper's ``lookup`` would mark the candidate plural)
        start, end = _span(text, "zombie")
        node = nodes["pf2e:trait:zombie"]
        cand = Candidate(node_id=node.node_id, type=node.type, name=node.name, matched="zombie",
                         alternatives=len(index.candidates("zombie")))
        return scorer.featurize(text, start, end, cand, markdown_context(text, start, end))["creature_kind_lower"]

    adjective = "In the stable they found a zombie horse still in its harness."
    assert lower(plain, adjective) >= 0.9 and lower(slotted, adjective) == 0.0
    for text in ("At dusk the zombie lurched out of the crypt.", "We burned the zombie, then left.",
                 "The zombie waits behind the door.", "A zombie creature blocks the stairs.",
                 "It was a zombie that the priest had raised."):
        assert lower(slotted, text) == lower(plain, text) >= 0.9, text
    plural = "Three zombies guard the gate."
    assert _features(slotted, index, nodes, plural, "zombies", lookup="zombie")["creature_kind_lower"] >= 0.9


def test_calibrate_gms_keeps_the_named_gms_only(tmp_path):
    from gmprep.commands.hover import only_gms

    labels = Path(__file__).parents[2] / "bench/data/real-notes/labels/tune.jsonl"
    out = only_gms(labels, "Solonarv,ianFraser858/dnd-notes", tmp_path)
    docs = {json.loads(line)["doc"] for line in out.read_text().splitlines()}
    assert docs and all(d.startswith(("solonarv", "ian")) for d in docs)
    assert (tmp_path / "sources.json").exists()
    with pytest.raises(GmprepError):
        only_gms(labels, "nobody-at-all", tmp_path)
