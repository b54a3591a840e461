"""A long post's focus (``search.focus_weight``, issue 12): a forum post tells a story, then asks, often about "it".
Search also reads what it asks (its asking sentences and the ones before them) through the vectors and the question
index, fused beside the whole post's lists; a short question is searched exactly as before. Off by default since the
held-out run of 2026-11-27 (docs/retrieval.md): these tests switch it on at the weight it was built with."""

from __future__ import annotations

from gmprep.common.settings import SearchSettings
from gmprep.kg.search import Searcher

POST = ("One of my players runs a champion who wants to Feint in every fight, and it uses Deception, so the table "
        "started arguing whether that counts as lying. Where is anathema defined in the rules, and what happens when a "
        "character breaks it?")
ANATHEMA = {"pf2e:rule:player-core--edicts-and-anathema", "pf2e:rule:player-core--required-edicts-and-anathema"}
# tests/kg/test_long_questions.py's post: the names are the story, the ask names no rule
STORY_POST = ("Last session the monk used Flurry of Blows twice and then tried to Stride away from the ogre, and the ogre "
              "used Reactive Strike. Is there a penalty for attacking several times in one turn, and does it reset each "
              "turn?")
MAP = {"pf2e:rule:player-core--attack-rolls--multiple-attack-penalty", "pf2e:rule:player-core--multiple-attack-penalty"}


ON = 0.5  # the weight chosen on the tuning sets


def _ranked(store, query: str, **settings) -> list[str]:
    settings.setdefault("focus_weight", ON)
    return [h.node_id for h in Searcher(store, settings=SearchSettings(**settings)).search(query, k=10)]


def _best(ranked: list[str], gold: set[str]) -> int:
    return min((ranked.index(n) for n in gold if n in ranked), default=len(ranked))


def test_the_focus_is_what_a_long_post_asks(store):
    assert Searcher(store, settings=SearchSettings())._focus(POST) is None  # off by default
    searcher = Searcher(store, settings=SearchSettings(focus_weight=ON))
    focus = searcher._focus(POST)
    assert focus == "Where is anathema defined in the rules, and what happens when a character breaks it?"
    assert "Feint" not in focus  # the opening story is left to the whole post's lists
    assert len(focus.split()) <= SearchSettings().focus_words
    assert searcher._focus("Does Trip work on a flying creature?") is None  # short: no focus of its own
    assert Searcher(store, settings=SearchSettings(focus_weight=0))._focus(POST) is None


def test_short_questions_rank_as_without_it(store):
    for q in ("Does Trip work on a flying creature?", "What does the frightened condition do?",
              "Can I Ready a spell to go off when the door opens?"):
        assert _ranked(store, q) == _ranked(store, q, focus_weight=0), q


def test_a_long_post_s_focus_lifts_the_rule_it_asks_about(store):
    on, off = _ranked(store, POST), _ranked(store, POST, focus_weight=0)
    # the story's Feint and Deception lead the whole post's lists; the asking sentence's anathema rule rises
    assert _best(on, ANATHEMA) <= 2, on
    assert _best(on, ANATHEMA) < _best(off, ANATHEMA), (on, off)


def test_a_post_whose_names_are_the_story_keeps_its_rule_in_the_five(store):
    # the focus "Is there a penalty for attacking several times in one turn ...?" also finds Impossible Flurry: the
    # multiple attack penalty goes from 3rd to 4th place (docs/retrieval.md, "A long post's focus"), not further
    assert _best(_ranked(store, STORY_POST), MAP) <= 4
    assert _best(_ranked(store, STORY_POST, focus_weight=0), MAP) <= 2
