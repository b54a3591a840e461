"""A pre-Remaster name the legacy table renames is a held rule's, whatever book printed it first (issue 10): "Scorching
Ray" (Blazing Bolt in Player Core), which the other books' catalogue also lists as a Secrets of Magic spell, is answered
with the rename said, not declined as another book's spell. On the real test store."""

from __future__ import annotations

import pytest

from gmprep.core.answer import answer_question
from gmprep.kg.legacy import legacy_target

QUESTION = "Does Scorching Ray take the multiple attack penalty?"


def test_scorching_ray_is_renamed():
    assert legacy_target("Scorching Ray") == "pf2e:spell:blazing-bolt"


@pytest.mark.slow
async def test_a_renamed_spell_is_answered_with_its_rename(searcher, extractive):
    ans = await answer_question(QUESTION, history=[], searcher=searcher, settings=extractive)
    assert ans.outcome in ("answered", "partial"), ans.text
    assert "called Blazing Bolt" in ans.text and "Secrets of Magic" not in ans.text, ans.text
    assert "pf2e:spell:blazing-bolt" in [c.source_id for c in ans.citations]


@pytest.mark.slow
async def test_a_journal_rename_asked_is_answered_and_one_among_examples_is_not_forced(searcher, extractive):
    from gmprep.core.agents.otherbooks import names_asked
    from gmprep.kg.legacy import HAND_LEGACY_NAMES

    assert "stoneskin" not in HAND_LEGACY_NAMES and legacy_target("stoneskin") == "pf2e:spell:mountain-resilience"
    ans = await answer_question("How long does Stoneskin last?", history=[], searcher=searcher, settings=extractive)
    assert ans.outcome in ("answered", "partial"), ans.text
    assert "called Mountain Resilience" in ans.text
    assert "pf2e:spell:mountain-resilience" in [c.source_id for c in ans.citations]
    # named only among a sentence's examples it is not what is asked: nothing forces an answer
    listed = "Is a golem immune to spells like Wall of Stone or Stoneskin?"
    assert names_asked(listed, ["stoneskin"]) == ""
