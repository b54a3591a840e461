"""The coverage map from the books' own outline (``core/agents/coverage.py``) on the real session store:
an unheld core-book section asked about is declined as not_in_corpus naming the section, book and page;
a rule the store holds is answered; a user's book with a section of that title makes it held."""

from __future__ import annotations

import json
import shutil

import pytest

from gmprep.common.settings import Settings
from gmprep.core.agents.coverage import OutlineCoverage, load_outline, title_stems
from gmprep.core.answer import answer_question

pytestmark = pytest.mark.slow


def _verdict(ans) -> dict:
    return next(s for s in ans.steps if s.name == "answerability").output


def test_outline_loads_typed_with_sources():
    outline = load_outline()
    assert outline.manifest["sources"]
    ids = [s.id for s in outline.sections]
    assert len(ids) == len(set(ids)) > 100
    books = {s.book for s in outline.sections}
    assert books == {"Pathfinder Player Core", "Pathfinder GM Core"}
    mapp = next(s for s in outline.sections if s.title == "Multiple Attack Penalty")
    assert mapp.page == "402" and mapp.path == ["Checks", "Attack Rolls"] and mapp.where() == "Player Core p. 402"
    assert title_stems("Heightened Spells") == title_stems("heightening a spell")


def test_held_sections_follow_the_store(searcher, searcher_without_prose):
    held = OutlineCoverage(searcher.store, None).held()
    # GM-screen rule pages and glossary entries state these
    assert held["player-core:counteracting"] and held["player-core:bulk"] and held["player-core:cover"]
    # the rules prose: a section of that name, a sub-heading of a section ("**Duplicate Effects**" in Rules
    # Overview), a section whose title holds the outline's ("Critical Specialization")
    assert held["player-core:heightened-spells"] and held["player-core:flanking"] and held["gm-core:transferring-runes"]
    assert held["player-core:duplicate-effects"] and held["player-core:critical-specialization-effects"]
    # the turn's structure is not in the bundled prose (only the key term "Round")
    assert not held["player-core:rounds-and-turns"]
    # without their sections, rules that feats, spells and items only mention are not held
    held = OutlineCoverage(searcher_without_prose.store, None).held()
    assert not held["player-core:heightened-spells"] and not held["gm-core:transferring-runes"]
    assert held["player-core:flanking"]


async def test_an_unheld_section_is_not_in_corpus_naming_section_book_and_page(searcher_without_prose, extractive):
    # (Transferring Runes was this test's example before the rules prose; in the store without its section, a
    # retrieved section named "Runes" is named for part of that title, so the outline leaves it to the model)
    q = "How does heightening a spell work: do I need a higher-rank spell slot for the heightened effect?"
    ans = await answer_question(q, history=[], searcher=searcher_without_prose, settings=extractive)
    assert ans.outcome == "not_in_corpus" and ans.declined, _verdict(ans)
    assert "Heightened Spells (Player Core, Chapter 7: Spells) is not in the rules gmprep holds" in ans.text
    assert "Add your Player Core PDF with `gmprep books add`" in ans.text
    assert _verdict(ans)["section"]["id"] == "player-core:heightened-spells"
    if ans.citations:  # the passages that mention it are still cited
        assert "Passages that mention it:" in ans.text


async def test_a_held_rule_is_answered(searcher, extractive):
    for q, gold in (("How does counteracting work when the counteract rank is lower?",
                     "pf2e:rule:gm-screen--counteracting"),
                    ("What does the frightened condition do to my checks?", "pf2e:condition:frightened"),
                    ("How does the Seek action work?", "pf2e:action:seek")):
        ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
        assert ans.outcome == "answered", (q, _verdict(ans))
        assert gold in [c.source_id for c in ans.citations]


def test_a_book_with_the_section_makes_it_held(store_without_prose, tmp_path):
    from gmprep.ingest.books.store import add_book
    from gmprep.kg.store import Store

    target = tmp_path / "store"
    shutil.copytree(store_without_prose, target)
    md = tmp_path / "player-core.md"
    md.write_text("# Pathfinder Player Core\n\n## Spells\n\n### Heightened Spells\n\n"
                  "Both prepared and spontaneous spellcasters can cast a spell at a higher rank.\n", encoding="utf-8")
    with Store.open(target, create=False) as store:
        coverage = OutlineCoverage(store, None)  # as a running server holds it
        assert not coverage.held()["player-core:heightened-spells"]
        add_book(Settings(store_dir=target), md, embed=False, progress=False)  # another process, in effect
        held = coverage.held()
    assert held["player-core:heightened-spells"]
    assert not held["gm-core:transferring-runes"]


def _entry(store, name: str, path_part: str):
    """A real entry of the test store: (book, printed page, path, name) as a retrieved passage carries them."""
    rows = store.db.execute("SELECT book, page, path FROM nodes WHERE kind = 'entry' AND name = ?", (name,)).fetchall()
    book, page, path = next(r for r in rows if path_part in r[2])
    return book, page, json.loads(path), name


def test_a_rules_page_printed_inside_the_section_is_part_of_it(searcher):
    # Rounds and Turns (Player Core p. 435, Chapter 8 / Encounter Mode) is named by no entry, but the store holds the
    # pages printed inside it: its book, its page, its chapter and parents, a heading or name sharing a title word
    rounds = next(s for s in load_outline().sections if s.id == "player-core:rounds-and-turns")
    store = searcher.store
    assert rounds.printed_in(*_entry(store, "Step 1: Start Your Turn", "Turns"))
    assert rounds.printed_in(*_entry(store, "Step 2: Play a Round", "Structure"))
    # the same page and parents, but another heading (Special Battles): not part of it
    assert not rounds.printed_in(*_entry(store, "Aquatic Combat", "Special Battles"))
    # another page of the chapter (Effects, p. 426), or the section's page in another book: not part of it
    assert not rounds.printed_in(*_entry(store, "Duration", "Effects"))
    book, page, path, name = _entry(store, "Step 1: Start Your Turn", "Turns")
    assert not rounds.printed_in("Pathfinder GM Core", page, path, name)
    # a section whose page the outline does not give is never set aside by it
    heightened = next(s for s in load_outline().sections if s.id == "player-core:heightened-spells")
    assert heightened.page is None and not heightened.printed_in(book, page, [heightened.chapter], "Heightened Spells")


async def test_an_unheld_section_whose_pages_are_retrieved_is_answered(searcher, extractive):
    # the outline's Rounds and Turns is not held by name (above), yet the passages found for a question about it are
    # printed inside it: answered from them (answerability.outline_printed_in); off, declined naming the section
    off = extractive.merged({"answerability": {"outline_printed_in": False}})
    for q in ("How do rounds and turns work in an encounter?",
              "If an effect lasts 1 round, does it run out at the start of my next turn or when the round ends?"):
        ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
        assert ans.outcome == "answered", (q, _verdict(ans))
        ans = await answer_question(q, history=[], searcher=searcher, settings=off)
        assert ans.outcome == "not_in_corpus" and _verdict(ans)["section"]["id"] == "player-core:rounds-and-turns"
