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
