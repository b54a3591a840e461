"""Another book's kind of person brought into the scene as an NPC (issue 10, ``answerability.besides_scene_people``):
"A Hellknight patrol", "An Ulfen raider", "A Eagle Knight of Andoran" are who acts, and the held rule a sentence that
asks names (Diplomacy, the greataxe, Demoralize in the sentence it refers back to) is what is asked: answered with the
note. The asker's own build ("playing a Magus", "my summoner", "Hellknight Armiger Dedication") is not the scene's.
On the real test store and the shipped catalogue; each end-to-end case also runs with the setting off."""

from __future__ import annotations

import pytest

from gmprep.common.settings import AnswerabilitySettings, SearchSettings
from gmprep.core.agents.otherbooks import scene_person
from gmprep.core.answer import answer_question
from gmprep.kg.search import Searcher

SCENES = [
    "A Hellknight patrol stops the party at the gate. How do I run a Diplomacy check to talk past them?",
    "An Ulfen raider uses a greataxe. What is its damage die and traits?",
    "A Eagle Knight of Andoran wants to Demoralize the bandits. How many creatures can he target?",
]


@pytest.fixture(scope="module")
def ranked(searcher):
    """The product's search (cross-encoder on): which passage comes first decides "its" in the Ulfen raider's case."""
    return Searcher(searcher.store, settings=SearchSettings(), names=searcher.names)


def test_a_person_of_the_scene_is_brought_in_by_an_article_and_never_built():
    assert scene_person(SCENES[0], "Hellknight", "Archetype")
    assert scene_person(SCENES[1], "Ulfen raider", "Background")
    assert not scene_person("I've started playing a Magus. How does Spellstrike work?", "Magus", "Class")
    assert not scene_person("My summoner wants to Strike. Can she?", "summoner", "Class")
    assert not scene_person("The Hellknight Armiger Dedication gives what?", "Hellknight Armiger", "Archetype")
    assert not scene_person("A Hellknight patrol. How does the Hellknight archetype work?", "Hellknight", "Archetype")
    assert not scene_person(SCENES[0], "Hellknight", "Feat")  # a feat is no person


@pytest.mark.slow
@pytest.mark.parametrize("question", SCENES)
async def test_a_held_rule_asked_about_another_books_person_in_the_scene_is_answered(ranked, extractive, question):
    ans = await answer_question(question, history=[], searcher=ranked, settings=extractive)
    verdict = next(s for s in ans.steps if s.name == "answerability").output
    assert ans.outcome == "answered" and verdict.get("besides"), verdict
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(besides_scene_people=False)})
    ans = await answer_question(question, history=[], searcher=ranked, settings=off)
    assert ans.outcome == "not_in_corpus", ans.text


@pytest.mark.slow
async def test_the_other_books_person_asked_about_is_still_declined(ranked, extractive):
    q = "A Hellknight patrol stops the party. What armor does a Hellknight wear?"
    ans = await answer_question(q, history=[], searcher=ranked, settings=extractive)
    assert ans.outcome == "not_in_corpus", ans.text
