"""A table's initials in a question (issue 12, ``search.initials``): "do ogres get AoO" was declined as off-topic
(the answerability model had never seen "AoO") and "LoH" found nothing of Lay on Hands. The search reads them as the
names they stand for, and the model's features read the question spelled out. On the real test store with the
product's ranking; each case also with the setting off."""

from __future__ import annotations

import pytest

from gmprep.common.settings import SearchSettings
from gmprep.core.answer import answer_question
from gmprep.kg.search import Searcher


@pytest.mark.slow
@pytest.mark.parametrize(("question", "entry"), [("do ogres get AoO", "pf2e:action:reactive-strike"),
                                                 ("Can I use RK on a creature I just met?", "pf2e:action:recall-knowledge")])
async def test_initials_are_read_as_the_names_they_stand_for(searcher, extractive, question, entry):
    on = Searcher(searcher.store, settings=SearchSettings(), names=searcher.names)
    ans = await answer_question(question, history=[], searcher=on, settings=extractive)
    assert ans.outcome == "answered" and entry in [c.source_id for c in ans.citations[:3]], ans.text
    off = Searcher(searcher.store, settings=SearchSettings(initials=False), names=searcher.names)
    ans = await answer_question(question, history=[], searcher=off, settings=extractive)
    assert ans.outcome == "not_in_books", ans.text
