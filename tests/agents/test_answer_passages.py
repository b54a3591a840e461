"""What an answer reads: the stat line the entry's text leaves out (a spell's range and duration, an
ancestry's Hit Points and Speed) travels with the hit, into the model's numbered passages, the quoting
answer and the support check, so a claim stating it is grounded (real store, real support model)."""

from __future__ import annotations

import pytest

from gmprep.core.agents.pipeline import render_passages
from gmprep.core.agents.support import Passage, SupportChecker
from gmprep.core.llm.extractive import render_quotes
from gmprep.kg.render import passage_text
from gmprep.kg.search import to_hit
from gmprep.kg.store import Store


@pytest.fixture(scope="module")
def hits(store_dir):
    with Store.open(store_dir, create=False) as store:
        nodes = store.get_many(["pf2e:ancestry:gnome", "pf2e:spell:paralyze"])
        return [to_hit(nodes["pf2e:ancestry:gnome"], 1.0, "name"), to_hit(nodes["pf2e:spell:paralyze"], 0.5, "seed")]


def test_a_hit_carries_what_its_text_leaves_out(hits):
    gnome, paralyze = hits
    assert "8" not in gnome.text.split() and "Hit Points 8" in gnome.stats and "Speed 25" in gnome.stats
    assert "Range 30 feet" in paralyze.stats and "Defense Will" in paralyze.stats
    assert gnome.passage().startswith(gnome.stats) and gnome.passage().endswith(gnome.text)


def test_the_model_and_the_quote_read_the_stat_line_and_the_traits(hits):
    prompt = render_passages(hits, "How many Hit Points does a gnome get, and what is paralyze's range?")
    first, second = prompt.split("\n[2] ")
    assert first.startswith("[1] Gnome (ancestry; gnome, humanoid)\nHit Points 8")
    assert second.startswith("Paralyze (spell; concentrate, incapacitation, manipulate, mental)\n")
    assert "Range 30 feet" in second
    quoted = render_quotes(hits, "gnome hit points")
    assert "> Hit Points 8" in quoted and "Range 30 feet" in quoted


def test_a_claim_from_the_stat_line_is_supported_only_with_it(hits, store_dir):
    gnome = hits[0]
    checker = SupportChecker(device="cpu")
    claim = "A gnome gets 8 Hit Points from its ancestry and has a Speed of 25 feet [1]."
    with_stats = checker.check(claim, [Passage(source_id=gnome.source_id, name=gnome.name, text=gnome.passage())])
    text_only = checker.check(claim, [Passage(source_id=gnome.source_id, name=gnome.name, text=gnome.text)])
    assert with_stats.sentences[0].supported and not text_only.sentences[0].supported
    with Store.open(store_dir, create=False) as store:  # the evaluation reads the same text
        assert passage_text(store.get("pf2e:ancestry:gnome")) == gnome.passage()
