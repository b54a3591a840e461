"""The link slot and the seed depth under filters, on the real session store (kg/search.py).

The link slot: a two-part question's second entry (Dazzled -> Concealed) is what a top hit's matching
paragraph links to; it takes the fifth place when the cross-encoder agrees. The seed lists: a filter that
keeps most candidates (the books' origin in a store of books) reads them as an unfiltered search does.
"""

from __future__ import annotations

import pytest

from gmprep.common.settings import SearchSettings
from gmprep.kg.models import SearchFilters
from gmprep.kg.search import LINK_SLOT_AT, Searcher

DAZZLED = "My fighter is dazzled by the sun. What happens when he swings at the orc?"


def _like(searcher: Searcher, **settings) -> Searcher:
    """A searcher sharing ``searcher``'s models and name index, with other search settings."""
    return Searcher(searcher.store, embedder=searcher.embedder, reranker=searcher.reranker, names=searcher.names,
                    settings=SearchSettings(**settings))


def ids(hits):
    return [h.node_id for h in hits]


def test_the_linked_condition_takes_the_fifth_place(searcher):
    hits = searcher.search(DAZZLED, k=5)
    assert "pf2e:condition:dazzled" in ids(hits)[:2]
    assert ids(hits)[LINK_SLOT_AT - 1] == "pf2e:condition:concealed", ids(hits)
    assert hits[LINK_SLOT_AT - 1].via.startswith("link slot")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # without the slot Concealed is not cited, and the four places before it are the same
    off = _like(searcher, link_slot=False).search(DAZZLED, k=5)
    assert "pf2e:condition:concealed" not in ids(off)
    assert ids(off)[: LINK_SLOT_AT - 1] == ids(hits)[: LINK_SLOT_AT - 1]


def test_the_slot_needs_the_rerankers_agreement(searcher):
    strict = _like(searcher, link_slot_floor=1.0).search(DAZZLED, k=10)
    assert ids(strict) == ids(_like(searcher, link_slot=False).search(DAZZLED, k=10))
    # and it needs the reranker: without it search is what it was
    assert ids(searcher.search(DAZZLED, k=10, rerank=False)) == ids(
        _like(searcher, link_slot=False).search(DAZZLED, k=10, rerank=False))


def test_the_slot_leaves_a_five_that_already_holds_the_link(searcher):
    # Trip's Success line links Prone, which graph expansion already ranks second: nothing moves
    query = "If I Trip an ogre and succeed, what is it left dealing with?"
    hits = searcher.search(query, k=5)
    assert {"pf2e:action:trip", "pf2e:condition:prone"} <= set(ids(hits))
    assert not any(h.via.startswith("link slot") for h in hits)
    assert ids(hits) == ids(_like(searcher, link_slot=False).search(query, k=5))


def test_fewer_results_than_the_slot_are_left_alone(searcher):
    assert ids(searcher.search(DAZZLED, k=3)) == ids(_like(searcher, link_slot=False).search(DAZZLED, k=3))


@pytest.mark.parametrize("query", [DAZZLED, "Which spell makes enemies slowed?", "What does the Grab an Edge reaction do?"])
def test_the_books_origin_filter_ranks_as_an_unfiltered_search(searcher, query):
    # the session store holds only the books: the answer's origin filter drops nothing, so it must not
    # change the seed lists (it made every answer read them 4x deeper than the retrieval eval)
    filtered = searcher.search(query, k=10, filters=SearchFilters(origins=["corpus:"]))
    assert ids(filtered) == ids(searcher.search(query, k=10))


def test_a_filter_that_drops_most_candidates_reads_deeper(searcher, monkeypatch):
    depths: list[int] = []
    bm25 = searcher.store.bm25

    def counting(query, k, **kw):
        depths.append(k)
        return bm25(query, k, **kw)

    monkeypatch.setattr(searcher.store, "bm25", counting)
    spells = searcher.search("goblin ambush in the forest", k=10, filters=SearchFilters(types=["spell"]))
    seed_k = searcher.settings.seed_k
    assert depths == [seed_k, 4 * seed_k]
    assert len(spells) == 10 and all(h.type == "spell" for h in spells)
    depths.clear()
    searcher.search("goblin ambush in the forest", k=10, filters=SearchFilters(origins=["corpus:"]))
    assert depths == [seed_k]
