"""The other-systems guard leaves the held books' own words alone (issue 10): a derived term whose whole written form
the name index reads as a held entry ("Tengus", "Arcane Schools"), and, with ``answerability.guard_derived_inflections``,
a one-word derived term the books use in another inflection ("Befuddled": they write "befuddle"). A phrase keeps the
exact test: GM Core's conversion advice writes "spell-like abilities", Pathfinder 1e's term. On the real test store."""

from __future__ import annotations

import pytest

from gmprep.common.text import full_stem
from gmprep.core.sources import OtherSystemsSource, OtherSystemTerm, _derived_used

BEFUDDLED = "My wizard is befuddled and attacking random people. How does she snap out of it?"
MULTICLASSING = "What skills does my wizard become trained in by multiclassing rogue?"
SPELL_LIKE = "Does using a spell-like ability provoke attacks of opportunity?"


def test_full_stem_joins_one_words_inflections():
    assert full_stem("befuddled") == full_stem("befuddle") == full_stem("befuddling")
    assert full_stem("multiclassing") == full_stem("multiclass")
    assert full_stem("befuddled") != full_stem("bewildered")


def _guard(store, inflected: bool) -> OtherSystemsSource:
    return OtherSystemsSource(store, asked_only=True, loose=True, derived=True, antecedent=True, inflected=inflected)


@pytest.mark.slow
def test_a_held_entrys_name_is_no_foreign_term(searcher):
    guard = _guard(searcher.store, inflected=False)
    active = {t.term for t in guard.terms()}
    for term in ("Tengus", "Arcane Schools"):  # derived from other games' sources, held here as an entry
        assert term not in active
        assert guard.names_held_entry(term), term
    assert "Spell-Like Ability" in active and not guard.names_held_entry("Spell-Like Ability")
    assert guard.retrieve("Can Tengus glide with a cloak?").verdict != "not_in_books"


@pytest.mark.slow
def test_inflections_of_one_word_are_the_books_words(searcher):
    store = searcher.store
    terms = [OtherSystemTerm(term=t, system="Pathfinder 1st Edition", derived=True)
             for t in ("Befuddled", "Multiclassing", "Spell-Like Ability", "Crane Riposte")]
    assert _derived_used(store, terms) == set()  # no entry writes these exact words
    assert _derived_used(store, terms, inflected=True) == {"Befuddled", "Multiclassing"}
    off, on = _guard(store, False), _guard(store, True)
    for question in (BEFUDDLED, MULTICLASSING):
        assert off.retrieve(question).verdict == "not_in_books", question
        assert on.retrieve(question).verdict == "nothing_relevant", question
    # another game's phrase stays foreign with inflections on
    assert on.retrieve(SPELL_LIKE).verdict == "not_in_books"


def test_a_doer_beside_its_verb_is_no_class():
    from gmprep.core.sources import doer_of_said_verb

    assert doer_of_said_verb("summoner", "Does a summoned creature vanish if its summoner dies?")
    assert doer_of_said_verb("summoner", "Can the summoner of an elemental she summons dismiss it?")
    assert not doer_of_said_verb("summoner", "My summoner and her eidolon share hit points, right?")
    assert not doer_of_said_verb("magus", "The magus summoned a wolf.")  # no doer's ending
    assert not doer_of_said_verb("gunslinger", "He slings his gun.")


@pytest.mark.slow
def test_the_summoner_of_a_summoned_creature_is_asked_about_the_held_summon_rules(searcher):
    # issue 10: "summoner" (the guard's Secrets of Magic class) declined plain questions about summon spells
    guard = OtherSystemsSource(searcher.store, asked_only=True, loose=True, derived=True, antecedent=True)
    assert guard.match("Does a summoned creature vanish if its summoner dies?") == []
    assert guard.retrieve("What happens to a summoned creature when the summoner falls unconscious?").verdict \
        != "not_in_books"
    # the class asked about, with no form of the verb: still another book's class
    assert [t.term for t in guard.match("How many actions does my summoner get when the eidolon is manifested?")] \
        == ["summoner", "eidolon"]
