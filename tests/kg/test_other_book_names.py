"""Names of entries from books gmprep does not hold, for hovers (``hover.other_books``): which catalogue names are
offered (core.agents.otherbooks.catalogue_entries), that a held entry's words never go to another book
(kg.names.NameIndex.build), and the scan that decides them (kg.note_scan) with the shipped scorer."""

from __future__ import annotations

import pytest

from gmprep.common.settings import HoverSettings
from gmprep.core.agents.otherbooks import catalogue_entries
from gmprep.kg.names import OTHER_ID_PREFIX
from gmprep.kg.note_scan import NoteScanner, load_scorer
from gmprep.server.state import RulesBook


@pytest.fixture(scope="module")
def others():
    return {n.name.lower(): n for n in catalogue_entries()}


@pytest.fixture(scope="module")
def book():
    return RulesBook.from_corpus(other_books=True)


def test_only_other_books_names_that_are_no_plain_english(others):
    banner = others["defiant banner"]
    assert banner.node_id == f"{OTHER_ID_PREFIX}defiant-banner" and banner.book == "Battlecry!"
    assert banner.text == "" and banner.fields["category"] == "Feat" and not banner.fields["superseded"]
    assert others["tracking tag"].type == "equipment"
    assert others["thunderstone"].fields["superseded"]  # a Core Rulebook item the Remaster does not print
    # a held book lists it (the store has it), or it is one common word, or it opens with an article or is
    # only function words: never offered
    for name in ("shield block", "guardian", "support", "doll", "the vision", "to me"):
        assert name not in others


def test_a_held_name_never_goes_to_another_book(book):
    names = book.names
    assert names.lookup("Shield Block") == "pf2e:feat:shield-block"
    assert names.lookup("Defiant Banner") == f"{OTHER_ID_PREFIX}defiant-banner"
    assert f"{OTHER_ID_PREFIX}defiant-banner" in book.others
    assert not any(i.startswith(OTHER_ID_PREFIX) for i in names.candidates("Raise a Shield"))
    # an archetype in the plural is its order's members, not the archetype
    assert names.lookup("Lion Blade") == f"{OTHER_ID_PREFIX}lion-blade" and names.lookup("Lion Blades") is None
    # without the setting the index has none of them
    assert RulesBook.from_corpus(other_books=False).names.lookup("Defiant Banner") is None


def test_the_scan_decides_them_like_any_name(book):
    note = ("## Party\n\n- Sierra (Marshal): Defiant Banner, Gather to Me\n- Loot: two Tracking Tags\n\n"
            "Sierra raised her Defiant Banner; we owe it to me and the guards.\n")
    on = NoteScanner(book.names, HoverSettings(other_books=True), load_scorer()).scan(note).mentions
    got = {(m.text, m.node_id) for m in on}
    assert ("Defiant Banner", f"{OTHER_ID_PREFIX}defiant-banner") in got
    assert ("Tracking Tags", f"{OTHER_ID_PREFIX}tracking-tag") in got
    assert not any(m.text.lower() == "to me" for m in on)
    # several words of another book's name in lowercase are the English phrase; written as a name, the name
    phrase = "The envoy wants magical knowledge and a united front.\n\nShe joined the Order of the Rack.\n"
    got = {(m.text, m.node_id) for m in
           NoteScanner(book.names, HoverSettings(other_books=True), load_scorer()).scan(phrase).mentions}
    assert not any(i.startswith(OTHER_ID_PREFIX) and t.islower() for t, i in got)
    assert ("Order of the Rack", f"{OTHER_ID_PREFIX}order-of-the-rack") in got
    off = NoteScanner(book.names, HoverSettings(other_books=False), load_scorer()).scan(note).mentions
    assert not any(m.node_id.startswith(OTHER_ID_PREFIX) for m in off)


def test_the_card_names_the_book_and_shows_no_text(others):
    from gmprep.server.markdown import other_book_markdown

    held = ["GM Core", "Monster Core", "Player Core", "Player Core 2"]
    card = other_book_markdown(others["defiant banner"], held)
    assert card.startswith("### Defiant Banner") and "Battlecry!" in card and "gmprep books add" in card
    assert "GM Core, Monster Core, Player Core, Player Core 2" in card
    old = other_book_markdown(others["thunderstone"], held)
    assert "pre-Remaster" in old and "Core Rulebook" in old
    # the user added the book: its text is searchable, the card says so instead
    added = other_book_markdown(others["defiant banner"], [*held, "Battlecry!"])
    assert "which you added" in added and 'gmprep search "Defiant Banner"' in added
