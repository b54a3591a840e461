"""Another game's rule, asked by name, is a rule gmprep does not hold (helper gap38, issue 10): the other-systems
guard's term in a sentence ending in "?" (``SourceResult.game_term``, ``names_asked(questions_only=True)``) declines
not_in_corpus naming the game (``answerability.other_game_not_in_corpus``, off by default); a scene described without a question keeps
not_in_books. And "her" / "his" / "their" before a noun as a reference back (``answerability.guard_possessive``).
On the real test store."""

from __future__ import annotations

import pytest

from gmprep.common.settings import AnswerabilitySettings
from gmprep.core.agents.otherbooks import names_asked, refers_back
from gmprep.core.answer import answer_question
from gmprep.core.sources import OtherSystemsSource

# Pathfinder 1e's Combat Reflexes (the hand list), asked in a sentence that ends in "?"
ASKED = ("The rules say Combat Reflexes lets you make more attacks of opportunity in a round. Does a character with "
         "combat reflexes get two against the same opponent who fires two arrows?")
# D&D 5e's short rest in a scene described, no question mark: the asker's word for a Pathfinder 2e rule
SCENE = "The druid spent her daily magic points and wants to regain one during a short rest."
# Pathfinder 1e's spell-like ability (derived), named by the sentence before the one that asks, referred to by "her"
POSSESSIVE = ("Let's assume a lillend tries to use her hallucinatory terrain spell-like ability, which mimics a level 4 "
              "spell. What's her concentration modifier?")


def test_names_asked_with_questions_only_needs_a_question_mark():
    assert names_asked(SCENE, ["short rest"]) == SCENE  # the last sentence asks when none ends in "?"
    assert names_asked(SCENE, ["short rest"], questions_only=True) == ""
    assert names_asked(ASKED, ["combat reflexes"], questions_only=True).startswith("Does a character")
    # a sentence saying it is the question asks without a question mark
    said = "My question is whether combat reflexes stacks with a second reaction."
    assert names_asked(said, ["combat reflexes"], questions_only=True) == said


def test_a_possessive_before_a_noun_refers_back_only_when_asked_for():
    assert not refers_back("What's her concentration modifier?")
    assert refers_back("What's her concentration modifier?", possessive=True)
    assert not refers_back("What does she roll?", possessive=True)  # no possessive before a noun
    assert not refers_back("Can the fighter Strike twice?", possessive=True)
    assert names_asked(POSSESSIVE, ["spell-like ability"], antecedent=True) == ""
    assert names_asked(POSSESSIVE, ["spell-like ability"], antecedent=True, possessive=True).startswith("Let's assume")


@pytest.mark.slow
def test_the_guard_says_which_game_a_question_asks(searcher):
    guard = OtherSystemsSource(searcher.store, asked_only=True, loose=True, derived=True, antecedent=True)
    asked = guard.retrieve(ASKED)
    assert asked.verdict == "not_in_books" and asked.game_term.lower() == "combat reflexes", asked
    assert "Pathfinder 1st Edition" in asked.game, asked
    scene = guard.retrieve(SCENE)
    assert scene.verdict == "not_in_books" and scene.game_term == "", scene
    assert guard.retrieve(POSSESSIVE).verdict == "nothing_relevant"
    possessive = OtherSystemsSource(searcher.store, asked_only=True, loose=True, derived=True, antecedent=True,
                                    possessive=True)
    back = possessive.retrieve(POSSESSIVE)
    assert back.verdict == "not_in_books" and back.derived and back.game_term == "Spell-Like Ability", back


@pytest.mark.slow
async def test_end_to_end_another_games_rule_asked_is_not_in_corpus(searcher, extractive):
    on = extractive.model_copy(update={"answerability": AnswerabilitySettings(other_game_not_in_corpus=True)})
    ans = await answer_question(ASKED, history=[], searcher=searcher, settings=on)
    assert ans.outcome == "not_in_corpus", ans.text
    assert "Pathfinder 1st Edition" in ans.text and "gmprep holds" in ans.text, ans.text
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(other_game_not_in_corpus=False)})
    ans_off = await answer_question(ASKED, history=[], searcher=searcher, settings=off)
    assert ans_off.outcome == "not_in_books", ans_off.text
    scene = await answer_question(SCENE, history=[], searcher=searcher, settings=on)
    assert scene.outcome != "not_in_corpus", scene.text
