"""Two readers of issue 10 (helper gap35): a held rule that a sentence that asks names by a name of several words
beside another book's entry named in the scene (``answerability.besides_held_names``), and the other-systems guard's
terms with their words joined by a hyphen or by spaces alike (``answerability.guard_loose_forms``). On the real test
store and the shipped catalogue; each end-to-end test also runs with its setting off."""

from __future__ import annotations

import pytest

from gmprep.common.settings import AnswerabilitySettings
from gmprep.core.agents.otherbooks import names_any, without_asides
from gmprep.core.answer import answer_question
from gmprep.core.sources import OtherSystemsSource, OtherSystemTerm, _term_pattern

# a Battlecry! tactic in the scene (and its parenthesis), a held rule of three words in the sentence that asks
COMMANDER = ("My 8th-level commander rides his animal companion and uses the Demoralizing Charge tactic (he signals two "
             "squadmates; they Stride and then Strike as a reaction). If he picks himself and makes that reaction "
             "Strike on his own turn, does it count toward his multiple attack penalty?")
# the same tactic asked about: the sentence that asks names it
TACTIC = ("Our party's leader rides his animal companion. Can he pick himself for Demoralizing Charge and does it "
          "count toward his multiple attack penalty?")


def _verdict(ans) -> dict:
    return next(s for s in ans.steps if s.name == "answerability").output


def test_asides_and_names_in_a_sentence():
    assert without_asides("Can I (say, a summoner) use Cast a Spell like a wizard?", examples=True).split() \
        == ["Can", "I", "use", "Cast", "a", "Spell", "?"]
    assert "summoner" not in without_asides("Can I (a summoner) cast?")
    assert names_any("Does Demoralizing Charge count?", ["Demoralizing Charge"])
    assert not names_any("Does it count (unlike Demoralizing Charge)?", ["Demoralizing Charge"])


def test_a_guard_terms_words_join_with_a_hyphen_or_spaces():
    import re

    loose = re.compile(_term_pattern("5-foot step", True), re.IGNORECASE)
    assert all(loose.fullmatch(t) for t in ("5-foot step", "5 foot step", "5 - foot  step"))
    assert not re.fullmatch(_term_pattern("5-foot step", False), "5 foot step")
    # plurals are not read (a verb: "when he Wild Shapes into an animal")
    assert not re.compile(_term_pattern("wild shape", True), re.IGNORECASE).fullmatch("wild shapes")
    assert re.compile(_term_pattern("bonus action", True, plural=True)).fullmatch("bonus actions")
    assert re.compile(_term_pattern("spell-like ability", True, plural=True)).fullmatch("spell like abilities")


def test_a_terms_key_word_is_in_every_form_its_pattern_matches():
    """``OtherSystemsSource._written_in`` runs a term's pattern only on texts holding its longest word (case-folded):
    every form the loose pattern matches, in any case, holds it."""
    import re

    from gmprep.core.sources import _key_word

    cases = (("5-foot step", ["5 foot step", "5-FOOT  STEP"]), ("Bonus Action", ["bonus-action", "BONUS action"]),
             ("PF1", ["pf1"]))
    for term, forms in cases:
        rx = re.compile(_term_pattern(term, True), re.IGNORECASE)
        for form in forms:
            assert rx.fullmatch(form) and _key_word(term) in form.casefold(), (term, form)
    assert _key_word("spell-like ability") == "ability"
    assert _key_word("") == ""


@pytest.mark.slow
def test_the_guard_finds_another_games_term_written_with_spaces(searcher):
    terms = [OtherSystemTerm(term="5-foot step", system="Pathfinder 1st Edition / D&D 3.5")]
    question = "Can my fighter take a 5 foot step between two Strikes?"
    assert OtherSystemsSource(searcher.store, terms, asked_only=True).retrieve(question).verdict == "nothing_relevant"
    loose = OtherSystemsSource(searcher.store, terms, asked_only=True, loose=True)
    assert [t.term for t in loose.match(question)] == ["5-foot step"]
    assert [t.term for t in loose.match(question.upper())] == ["5-foot step"]  # the key word in any case
    assert loose.match("Can my fighter take a step between two Strikes?") == []
    assert loose.retrieve(question).verdict == "not_in_books"
    # in the setting only, not in the sentence that asks: decided with the passages (``guard_asked``)
    assert loose.retrieve("He took a 5 foot step. Does Reactive Strike trigger?").verdict == "nothing_relevant"


@pytest.mark.slow
async def test_a_held_rule_asked_beside_another_books_tactic_in_the_scene_is_answered(searcher, extractive):
    ans = await answer_question(COMMANDER, history=[], searcher=searcher, settings=extractive)
    verdict = _verdict(ans)
    assert ans.outcome == "answered" and verdict.get("besides"), verdict
    assert "multiple attack penalty" in verdict["asked"]
    assert any(term == "Demoralizing Charge" for term, _, _ in verdict["besides"]), verdict
    assert "“Demoralizing Charge” (tactic) is from Battlecry!" in ans.text
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(besides_held_names=0)})
    ans = await answer_question(COMMANDER, history=[], searcher=searcher, settings=off)
    verdict = _verdict(ans)
    assert ans.outcome == "not_in_corpus" and verdict["foreign"] == "Demoralizing Charge", verdict


@pytest.mark.slow
async def test_a_sentence_that_asks_the_other_books_entry_is_still_declined(searcher, extractive):
    ans = await answer_question(TACTIC, history=[], searcher=searcher, settings=extractive)
    verdict = _verdict(ans)
    assert ans.outcome == "not_in_corpus" and verdict["foreign"] == "Demoralizing Charge", verdict
    # the threshold counts: at four words "multiple attack penalty" is too short, and the scene's tactic is asked
    four = extractive.model_copy(update={"answerability": AnswerabilitySettings(besides_held_names=4)})
    ans = await answer_question(COMMANDER, history=[], searcher=searcher, settings=four)
    assert ans.outcome == "not_in_corpus", _verdict(ans)
