"""Other games' feats by name and what "this ability" refers to (helper gap37, issue 10): the derived vocabularies'
feats (``kind`` "feat", matched as written, capitalised; ``answerability.guard_derived_feats``), a sentence that
asks and refers back to the sentence before it (``otherbooks.refers_back``, ``names_asked(antecedent=True)``,
``answerability.guard_antecedent``), an abbreviation's full stop (``kg.query.sentences``) and the organized-play
guide's own titles without the campaign named (``answerability.campaign_own_titles``) and an acronym of a pair the
question writes out (``answerability.unstated_acronyms``). On the real test store."""

from __future__ import annotations

import gzip
import json
from importlib import resources

import pytest

from gmprep.common.settings import AnswerabilitySettings
from gmprep.core.agents.campaign import CampaignRules
from gmprep.core.agents.otherbooks import names_asked, refers_back, repeated_terms
from gmprep.core.answer import answer_question
from gmprep.core.sources import OtherSystemsSource, load_derived_terms, load_other_system_terms
from gmprep.kg.legacy import LEGACY_NAMES
from gmprep.kg.query import sentences

# Pathfinder 1e feats, named in the sentence that asks
FEATS = "Does an attack of opportunity from Crane Riposte trigger Paired Opportunist?"
# the same words in lower case: not the feat's name as an asker writes it
LOWER = "Can my monk riposte like a crane, and is a paired opportunist build any good?"
# Pathfinder 1e: the term in the scene, the sentence that asks refers back to it
BACK = ("My inquisitor's domain power is a spell-like ability and a touch attack. Does using this ability provoke a "
        "reaction from adjacent enemies?")


def test_the_shipped_file_holds_other_games_feats_and_no_pf2e_name():
    ref = resources.files("gmprep.core.agents") / "data" / "other-systems-derived.json.gz"
    data = json.loads(gzip.decompress(ref.read_bytes()).decode("utf-8"))
    feats = {r["term"] for r in data["terms"] if r.get("kind") == "feat"}
    assert "Crane Riposte" in feats and len(feats) > 1000
    assert not {f.lower() for f in feats} & {n.lower() for n in LEGACY_NAMES}
    assert not {f.lower() for f in feats} & {"power attack", "toughness", "quick draw"}  # the held books' feats too
    loaded = load_derived_terms()
    assert all(t.case_sensitive == (t.term in feats) for t in loaded)
    both = load_other_system_terms(derived=True)
    rules_only = load_other_system_terms(derived=True, feats=False)
    assert {t.term for t in both} - {t.term for t in rules_only} <= feats
    assert not any(t.case_sensitive and t.derived for t in rules_only)


def test_a_sentence_refers_back_by_it_or_a_demonstrative_before_a_noun():
    assert refers_back("Does using this ability provoke?")
    assert refers_back("Wouldn't that move interrupt his attack?")
    assert refers_back("Can I still use it while flying?")
    assert not refers_back("How do they roll to stay afloat?")  # "they": the asker's people
    assert not refers_back("Does it say so that the fighter can move?".replace("it ", "the rule "))  # "that the"
    assert not refers_back("Is a ranged Strike made with (this) bow?")  # a parenthesis is an aside


def test_names_asked_reads_the_sentence_before_one_that_refers_back():
    assert names_asked(BACK, ["spell-like ability"]) == ""
    assert names_asked(BACK, ["spell-like ability"], antecedent=True).startswith("My inquisitor's domain power")
    # the sentence before names it only as an example: still not asked
    example = "I have powers like a spell-like ability. Does using this ability provoke?"
    assert names_asked(example, ["spell-like ability"], antecedent=True) == ""
    # a sentence that asks without referring back does not bring in the one before
    plain = "My inquisitor's domain power is a spell-like ability. How far can a creature Stride?"
    assert names_asked(plain, ["spell-like ability"], antecedent=True) == ""


@pytest.mark.slow
def test_the_guard_declines_another_games_feat_and_a_term_referred_back(searcher):
    on = OtherSystemsSource(searcher.store, asked_only=True, loose=True, derived=True, antecedent=True)
    no_feats = OtherSystemsSource(searcher.store, asked_only=True, loose=True, derived=True, feats=False,
                                  antecedent=True)
    no_back = OtherSystemsSource(searcher.store, asked_only=True, loose=True, derived=True)
    result = on.retrieve(FEATS)
    assert result.verdict == "not_in_books" and result.derived and "Pathfinder 1st Edition" in result.note, result
    assert no_feats.retrieve(FEATS).verdict == "nothing_relevant"
    assert on.retrieve(LOWER).verdict == "nothing_relevant"
    back = on.retrieve(BACK)
    assert back.verdict == "not_in_books" and "Spell-Like Ability" in back.note, back
    assert no_back.retrieve(BACK).verdict == "nothing_relevant"


@pytest.mark.slow
async def test_end_to_end_the_settings_decide(searcher, extractive):
    ans = await answer_question(FEATS, history=[], searcher=searcher, settings=extractive)
    assert ans.outcome in ("not_in_books", "not_in_corpus"), ans.text
    assert ans.outcome != "not_in_books" or "Crane Riposte" in ans.text, ans.text
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(guard_derived_feats=False)})
    ans_off = await answer_question(FEATS, history=[], searcher=searcher, settings=off)
    assert "Crane Riposte” is Pathfinder" not in ans_off.text, ans_off.text
    ans = await answer_question(BACK, history=[], searcher=searcher, settings=extractive)
    assert ans.outcome in ("not_in_books", "not_in_corpus"), ans.text
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(guard_antecedent=False)})
    ans_off = await answer_question(BACK, history=[], searcher=searcher, settings=off)
    assert "Spell-Like Ability” is Pathfinder" not in ans_off.text, ans_off.text


def test_an_abbreviations_full_stop_ends_no_sentence():
    q = "He could take a 5 foot step. Wouldn't that move (even a 5 ft. step) interrupt his attack?"
    assert sentences(q) == ["He could take a 5 foot step.", "Wouldn't that move (even a 5 ft. step) interrupt his attack?"]
    assert sentences("See Player Core (p. 412). Is it right?") == ["See Player Core (p. 412).", "Is it right?"]
    assert sentences("It is 30 ft. The next one moves.") == ["It is 30 ft.", "The next one moves."]  # a capital goes on


# an organized-play scenario's scaling, the campaign not named
CHALLENGE = ("The encounter lists a creature with the number 0 next to it, and the box says to add one at a certain "
             "number of challenge points. How many creatures should be in this encounter?")


@pytest.mark.slow
def test_the_campaigns_own_title_without_the_campaign(searcher):
    rules = CampaignRules(searcher.store)
    assert rules.about(CHALLENGE) is None
    m = rules.about(CHALLENGE, own_titles=True)
    assert m is not None and (m.section.title, m.named) == ("Challenge Points", "organized play")
    # titles the core books use too, or with a function word, are not the campaign's own words
    assert rules.about("Do boons from my deity stack with a blessing?", own_titles=True) is None
    assert rules.about("What is the best way of dealing with errata at my table?", own_titles=True) is None


@pytest.mark.slow
async def test_end_to_end_the_campaigns_own_title_is_not_in_corpus(searcher, extractive):
    ans = await answer_question(CHALLENGE, history=[], searcher=searcher, settings=extractive)
    assert ans.outcome == "not_in_corpus" and ans.text.startswith("Challenge Points in organized play is a rule"), \
        ans.text
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(campaign_own_titles=False)})
    ans = await answer_question(CHALLENGE, history=[], searcher=searcher, settings=off)
    assert not ans.text.startswith("Challenge Points in organized play"), ans.text


# Starfinder's Resolve Points, written out once and then abbreviated
RESOLVE = ("When I get to 0 HP I'm dying, and at the end of my turn I lose 1 Resolve Point. If I'm dropped to 0 with "
           "2 RP, I lose 1 RP at the end of my turn, then my remaining RP next round. Is this correct?")


def test_an_acronym_of_a_pair_written_out_counts_as_its_use():
    assert repeated_terms(RESOLVE)["resolv point"][1] == 1
    assert repeated_terms(RESOLVE, acronyms=True)["resolv point"] == ("Resolve Point", 4)
    # "HP" spells no pair the question writes out in capitals: nothing added
    assert repeated_terms(RESOLVE, acronyms=True).get("hp") == repeated_terms(RESOLVE).get("hp")
    # a pair written in lower case: the capitals may be another thing
    assert repeated_terms("My focus points are low, 1 FP. Can I Refocus?", acronyms=True)["focus point"][1] == 1
