"""The outline coverage rule on a tiny hand-made store and embedder (no index needed): held from entry
names, candidates from the title's words, the cosine floor, the margin to the passages, and the guard
against a passage named for part of the title."""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import numpy as np

from gmprep.core.agents.coverage import OutlineCoverage, OutlineSection, RulesOutline


def _section(sid: str, title: str) -> OutlineSection:
    return OutlineSection(id=sid, book="Pathfinder Player Core", chapter="Chapter 8: Playing the Game", title=title,
                          page="402" if sid == "map" else None, scope=f"scope of {title.lower()}")


OUTLINE = RulesOutline(sections=[_section("map", "Multiple Attack Penalty"), _section("cover", "Cover"),
                                 _section("heightened", "Heightened Spells")])


def _store(entries: list[tuple[str, str]] | list[tuple[str, str, str]]):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE nodes (name TEXT, aliases TEXT, type TEXT, kind TEXT, text TEXT)")
    db.executemany("INSERT INTO nodes VALUES (?, '[]', ?, 'entry', ?)", [(*e, "")[:3] for e in entries])
    return SimpleNamespace(db=db)


class _Embedder:
    """Every section text on its own axis; a question's vector is set by the test."""

    def __init__(self, q: np.ndarray):
        self.q = q

    def encode(self, texts):
        return np.eye(len(texts), 3, dtype=np.float32)

    def encode_query(self, text):
        return self.q


def test_held_from_entry_names_and_rule_pages():
    held = OutlineCoverage(_store([("Terrain and Cover", "rule"), ("Agile", "trait")]), None, OUTLINE).held()
    assert held == {"map": False, "cover": True, "heightened": False}
    # a book section of that title (``gmprep books add``) holds it too
    held = OutlineCoverage(_store([("Heightened Spells", "book-section")]), None, OUTLINE).held()
    assert held["heightened"]


def test_held_from_a_rules_sections_sub_heading_or_its_title_words():
    overview = "Some rules...\n\n**Multiple Attack Penalty**\n\nThe more attacks you make...\n\n**Rounding** halves"
    held = OutlineCoverage(_store([("Attack Rolls", "rule", overview)]), None, OUTLINE).held()
    assert held["map"] and not held["heightened"]  # a bold line alone is a sub-heading; bold run-in text is not
    # a rules section whose title holds the title's words, inflected as they may be
    assert OutlineCoverage(_store([("Step 4: Spell Heightening", "rule")]), None, OUTLINE).held()["heightened"]
    assert not OutlineCoverage(_store([("Spells", "rule")]), None, OUTLINE).held()["heightened"]  # one word


def test_about_needs_the_title_the_cosine_and_the_margin():
    q = np.array([0.6, 0.0, 0.0], dtype=np.float32)  # cosine 0.6 to "Multiple Attack Penalty"
    cov = OutlineCoverage(_store([]), _Embedder(q), OUTLINE)
    ask = "Does the multiple attack penalty apply to Shove?"
    match = cov.about(ask, passage_cosine=0.5)
    assert match is not None and match.section.id == "map" and match.section.where() == "Player Core p. 402"
    assert cov.about("Does it apply to Shove?", passage_cosine=0.5) is None  # the title is not named
    assert cov.about(ask, passage_cosine=0.7) is None  # a passage is closer than the margin allows
    assert cov.about(ask, passage_cosine=0.5, min_cosine=0.7) is None  # under the floor
    # a retrieved entry named for part of the title states it
    assert cov.about(ask, passage_cosine=0.5, hit_names=["Attack"]) is None
    assert cov.about(ask, passage_cosine=0.5, hit_names=["Shove"]) is not None


def test_a_rules_page_named_with_a_word_of_the_title_states_that_part():
    # "Step 1: Start Your Turn" beside Rounds and Turns: a retrieved rules page named with a word of the section's title
    # states the part asked (answerability.outline_prose_words); the same name as any other entry's does not
    q = np.array([0.6, 0.0, 0.0], dtype=np.float32)
    cov = OutlineCoverage(_store([]), _Embedder(q), OUTLINE)
    ask = "Does the multiple attack penalty apply to Shove?"
    assert cov.about(ask, passage_cosine=0.5, hit_names=["Step 2: Attack Rolls"]) is not None  # not part of the title
    assert cov.about(ask, passage_cosine=0.5, hit_names=["Step 2: Attack Rolls"],
                     prose_names=["Step 2: Attack Rolls"]) is None
    assert cov.about(ask, passage_cosine=0.5, hit_names=["Shove"], prose_names=["Shove"]) is not None  # no shared word


def test_a_rules_page_printed_inside_the_section_sets_it_aside():
    # the section Multiple Attack Penalty is printed on Player Core p. 402 in Chapter 8; a retrieved rules page of that
    # book and page under the chapter, named with a word of the title, is part of it (answerability.outline_printed_in)
    q = np.array([0.6, 0.0, 0.0], dtype=np.float32)
    cov = OutlineCoverage(_store([]), _Embedder(q), OUTLINE)
    ask = "Does the multiple attack penalty apply to Shove?"
    chapter = ["Pathfinder Player Core", "Rules", "Chapter 8: Playing the Game"]
    inside = ("Pathfinder Player Core", "402", chapter, "Penalties to Attacks")
    assert cov.about(ask, passage_cosine=0.5, prose_places=[inside]) is None
    for place in (("Pathfinder Player Core", "403", chapter, "Penalties to Attacks"),  # another page
                  ("Pathfinder GM Core", "402", chapter, "Penalties to Attacks"),  # another book
                  ("Pathfinder Player Core", "402", ["Pathfinder Player Core", "Rules"], "Penalties to Attacks"),
                  ("Pathfinder Player Core", "401-402", chapter, "Shove")):  # no word of the title
        assert cov.about(ask, passage_cosine=0.5, prose_places=[place]) is not None, place
    assert cov.about(ask, passage_cosine=0.5, prose_places=[("Pathfinder Player Core", "401-403", chapter,
                                                             "Attack Rolls")]) is None  # a page range holding it
