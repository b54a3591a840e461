"""The learned share of a name's bonus (kg.hint_share, issue 12): which entry named in a long question is the
one it asks about, read from where and how the question names it."""

from __future__ import annotations

import numpy as np

from gmprep.common.settings import SearchSettings
from gmprep.kg.hint_share import FEATURES, features, shipped
from gmprep.kg.search import Searcher

READY, STRIDE, ESCAPE = "pf2e:action:ready", "pf2e:action:stride", "pf2e:action:escape"
POST = ("Our fighter waited at the corner the whole round, and the ogre was right behind the door. Can I Ready a "
        "Stride so that I move only when the ogre comes into view? We had already used Escape the round before, if "
        "that matters.")


def _col(name: str) -> int:
    return FEATURES.index(name)


def test_spans_point_at_the_names_in_the_rewritten_text(searcher):
    qa = searcher.analyze("The rogue was flat-footed when the ogre tripped her. Can she Stride away?")
    assert qa.spans and set(qa.spans) == set(qa.named)
    # the legacy name is rewritten to the Remaster one, and its span moves with it
    off = qa.spans["pf2e:condition:off-guard"][0]
    assert qa.text[off[0]:off[1]] == "Off-Guard"
    trip = qa.spans["pf2e:action:trip"][0]
    assert qa.named["pf2e:action:trip"] == "verb" and qa.text[trip[0]:trip[1]] == "tripped"
    stride = qa.spans[STRIDE][0]
    assert qa.text[stride[0]:stride[1]] == "Stride"


def test_features_tell_the_asking_sentence_from_the_story(searcher):
    qa = searcher.analyze(POST)
    hints = {nid: how for nid, how in qa.named.items() if how in ("hint", "verb")}
    rows = features(qa.text, qa.spans, hints)
    assert {READY, STRIDE, ESCAPE} <= set(rows)
    assert rows[READY][_col("in_ask")] == 1.0 and rows[READY][_col("after_qword")] == 1.0
    assert rows[ESCAPE][_col("in_ask")] == 0.0 and rows[ESCAPE][_col("after_qword")] == 0.0
    # a question with no "?" asks in its last sentence
    qa = searcher.analyze("We had just used Escape the round before. Tell me how Ready works")
    rows = features(qa.text, qa.spans, {n: h for n, h in qa.named.items() if h in ("hint", "verb")})
    assert rows[READY][_col("in_ask")] == 1.0 and rows[ESCAPE][_col("in_ask")] == 0.0


def test_the_shipped_model_keeps_more_for_the_name_asked_about(searcher):
    model = shipped()
    assert tuple(model.features) == FEATURES and model.manifest.get("rows", 0) > 1000
    qa = searcher.analyze(POST)
    hints = {nid: how for nid, how in qa.named.items() if how in ("hint", "verb")}
    shares = model.shares(qa.text, qa.spans, hints, keep_at=0.5)
    assert all(0.0 < s <= 1.0 for s in shares.values())
    assert shares[READY] > shares[ESCAPE], shares


def test_search_reads_the_learned_shares_only_past_hint_words(store):
    on = Searcher(store, settings=SearchSettings(hint_model=True))
    off = Searcher(store, settings=SearchSettings())
    short = "Can I Ready a Stride?"
    assert on._hint_shares(on.analyze(short)) == {}  # a short question's names keep their whole bonus
    assert [h.node_id for h in on.search(short, k=5)] == [h.node_id for h in off.search(short, k=5)]
    shares = on._hint_shares(on.analyze(POST))
    assert shares is not None and shares[READY] > shares[ESCAPE]
    assert off._hint_shares(off.analyze(POST)) is None
    ranked = [h.node_id for h in on.search(POST, k=10)]
    assert READY in ranked[:3], ranked


def test_told_rows_label_the_asked_name_and_the_one_in_passing(searcher):
    from gmprep.training.hint_share import fit, told_rows

    trip = "pf2e:action:trip"
    groups, counts = told_rows(searcher, [("How does the Trip action work on a flying creature?", {trip}, "Trip")], seed=3)
    assert len(groups) == 2 and counts["questions"] == 1
    short, long = groups
    assert [y for _, y in short].count(1) == 1  # Trip, the asked entry
    assert [y for _, y in long].count(1) == 1
    if counts["with_mention"]:
        assert [y for _, y in long].count(0) >= 1  # the entry named in passing
    x = np.stack([r for g in groups for r, _ in g])
    y = np.asarray([lab for g in groups for _, lab in g])
    if len(set(y.tolist())) == 2:
        model = fit([(x, y, 1.0)])
        assert len(model.coef) == len(FEATURES)
