"""Pre-Remaster Pathfinder 2e names the Remaster dropped (helper gap39, issue 10): the names the Core Rulebook,
Advanced Player's Guide, Gamemastery Guide and Bestiary gave their creatures, creature abilities, afflictions and
rules, derived from Pf2eTools' JSON (``scripts/derive_legacy_pf2e_terms.py``), that the held store never uses. A
question that asks one by name ("How does mummy rot work?") is declined not_in_corpus, saying it is a pre-Remaster
name (``answerability.guard_legacy``); named only in a question's scene it declines nothing. On the real test store."""

from __future__ import annotations

import pytest

from gmprep.common.settings import AnswerabilitySettings
from gmprep.core.answer import answer_question
from gmprep.core.sources import OtherSystemsSource, load_legacy_terms, load_other_system_terms
from gmprep.kg.legacy import LEGACY_NAMES

# the Bestiary mummy guardian's affliction: Monster Core's mummies have no "mummy rot"
ASKED = ("How does mummy rot work? After you fail the initial save against a mummy's slam, does succeeding at the "
         "next save remove the curse and disease?")
# the same name in a question that says it is about Pathfinder 2e: still a pre-Remaster name
PF2E = "In PF2e, how does mummy rot work when the first save fails?"
# named in the scene only; the sentence that asks is about a held rule
SCENE = "Years ago my character survived mummy rot. How many actions do a Stride and a Strike take?"
GUARD = dict(asked_only=True, loose=True, derived=True, antecedent=True, possessive=True)


def test_the_vocabulary_is_derived_and_holds_no_renamed_name():
    terms = load_legacy_terms()
    assert len(terms) > 200 and all(t.legacy and t.derived for t in terms)
    names = {t.term.lower() for t in terms}
    assert "mummy rot" in names
    assert not names & {n.lower() for n in LEGACY_NAMES}  # a renamed name is answered under its Remaster name
    assert not any(t.legacy for t in load_other_system_terms(derived=True))  # only with ``legacy``


@pytest.mark.slow
def test_the_guard_declines_a_pre_remaster_name_asked(searcher):
    guard = OtherSystemsSource(searcher.store, legacy=True, **GUARD)
    asked = guard.retrieve(ASKED)
    assert asked.verdict == "not_in_books" and asked.legacy and asked.game_term == "Mummy Rot", asked
    assert "pre-Remaster" in asked.note, asked
    pf2e = guard.retrieve(PF2E)
    assert pf2e.legacy and pf2e.game_term == "Mummy Rot", pf2e
    assert guard.retrieve(SCENE).verdict == "nothing_relevant"
    off = OtherSystemsSource(searcher.store, **GUARD)
    assert off.retrieve(ASKED).verdict == "nothing_relevant"


@pytest.mark.slow
async def test_end_to_end_a_pre_remaster_name_asked_is_not_in_corpus(searcher, extractive):
    on = extractive.model_copy(update={"answerability": AnswerabilitySettings(guard_legacy=True)})
    ans = await answer_question(ASKED, history=[], searcher=searcher, settings=on)
    assert ans.outcome == "not_in_corpus", ans.text
    assert "pre-Remaster" in ans.text and "Mummy Rot" in ans.text, ans.text
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(guard_legacy=False)})
    ans_off = await answer_question(ASKED, history=[], searcher=searcher, settings=off)
    assert "pre-Remaster" not in ans_off.text, ans_off.text
    scene = await answer_question(SCENE, history=[], searcher=searcher, settings=on)
    assert "pre-Remaster" not in scene.text, scene.text
