"""A phrase the books never use, said again and again where the question asks (helper gap34, issue 10):
``answerability.absent_phrases`` on the real test store, and the judge end to end with its setting on and off."""

from __future__ import annotations

import pytest

from gmprep.common.settings import AnswerabilitySettings
from gmprep.core.agents.answerability import CorpusIndex, absent_phrases
from gmprep.core.answer import answer_question

# not-in-corpus-tune6 nict6-006 (paizo.com/threads/rzs55g56): Pathfinder 1e's full attack, no held book's rule
FULL_ATTACK = ("The full attack rules say the only movement you can take during a full attack is a 5-foot step, and a "
               "full-round action can't be coupled with a standard or a move action. So, if I get an extra move action, "
               "can I move and then make a full attack?")


def _verdict(ans) -> dict:
    return next(s for s in ans.steps if s.name == "answerability").output


@pytest.mark.slow
def test_a_phrase_no_entry_uses_said_three_times_where_it_asks(searcher):
    index = CorpusIndex(searcher.store)
    assert absent_phrases(FULL_ATTACK, index, ["Step\nYou carefully move 5 feet."]) == ["full attack"]
    assert absent_phrases(FULL_ATTACK, index, ["Full Attack\nA full attack is ..."]) == []  # a passage found uses it
    assert absent_phrases(FULL_ATTACK, index, [], min_repeats=0) == []  # off
    assert absent_phrases(FULL_ATTACK, index, [], min_repeats=4) == []  # said three times
    # the books use the phrase ("multiple attack penalty"), or it holds a held rule's name ("treat wounds")
    assert absent_phrases("Multiple attack penalty: does the multiple attack penalty apply? Is the multiple attack "
                          "penalty reset?", index, []) == []
    assert absent_phrases("I successfully treat wounds. I successfully treat wounds again. Can I successfully treat "
                          "wounds a third time?", index, []) == []
    # not in a sentence that asks: the scene
    assert absent_phrases("He made a full attack. Then a full attack. Then a full attack. Can I Stride twice?",
                          index, []) == []


@pytest.mark.slow
async def test_a_rule_the_books_do_not_state_under_the_askers_term_is_not_in_corpus(searcher, extractive):
    ans = await answer_question(FULL_ATTACK, history=[], searcher=searcher, settings=extractive)
    verdict = _verdict(ans)
    assert ans.outcome == "not_in_corpus" and verdict["foreign"] == "full attack", verdict
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(absent_phrase_repeats=0)})
    ans = await answer_question(FULL_ATTACK, history=[], searcher=searcher, settings=off)
    assert _verdict(ans).get("foreign") != "full attack", _verdict(ans)
