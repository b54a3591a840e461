"""The reranker's say in a long post (``search.rerank_words``, issue 12): the cross-encoder reads a forum post as its
asking sentences only, so past ``rerank_words`` words its probability counts (rerank_words / words)^2 of itself and
the first-stage order, which read the whole post, decides more. A short question ranks as before."""

from __future__ import annotations

from gmprep.common.settings import SearchSettings
from gmprep.kg.search import Searcher, _rerank_share

ASK = "Can I Ready a spell to go off when the door opens?"
# the same ask after a story: 84 words, so the reranker keeps (40 / 84)^2 of its probability
POST = ("We were in a dungeon last night and the party had cleared two rooms already. The fighter stood by the door with "
        "his shield up while the wizard waited behind him, and the rogue was scouting ahead down the corridor. We "
        "could hear the goblins talking on the other side and we wanted to surprise them before they came through. "
        "I play the wizard and I had one action left over at the end of my turn. " + ASK)


class Agrees:
    """A stand-in cross-encoder that is sure of one entry and unsure of the rest."""

    def __init__(self, favourite: str):
        self.favourite = favourite

    def score_nodes(self, query, nodes, query_tokens=0):
        return [4.0 if n.node_id == self.favourite else -4.0 for n in nodes]


def _searcher(searcher: Searcher, favourite: str, **settings) -> Searcher:
    return Searcher(searcher.store, embedder=searcher.embedder, reranker=Agrees(favourite), names=searcher.names,
                    settings=SearchSettings(**settings))


def test_the_share_falls_past_rerank_words():
    assert _rerank_share(ASK, 40) == 1.0
    assert _rerank_share(" ".join(["word"] * 40), 40) == 1.0
    assert _rerank_share(" ".join(["word"] * 80), 40) == 0.25
    assert _rerank_share(" ".join(["word"] * 80), 0) == 1.0  # off
    assert 0.2 < _rerank_share(POST, 40) < 0.25


def test_a_long_post_keeps_the_first_stage_order_where_a_short_question_follows_the_reranker(searcher):
    for q in (ASK, POST):
        first = [h.node_id for h in searcher.search(q, k=10, rerank=False)]
        favourite = first[4]  # far enough down the first stage that only a sure reranker lifts it to the top
        # off: the reranker's certainty decides the first place, whatever the question's length
        assert _searcher(searcher, favourite, rerank_words=0).search(q, k=10)[0].node_id == favourite, q
        on = [h.node_id for h in _searcher(searcher, favourite).search(q, k=10)]
        if q == ASK:
            assert on[0] == favourite, on
        else:
            # on: the post's first stage keeps the first place; the favourite stays among the five
            assert on[0] != favourite and favourite in on[:5], (on, first)


def test_short_questions_rank_as_without_it(searcher):
    for q in ("Does Trip work on a flying creature?", "What does the frightened condition do?", ASK):
        plain = Searcher(searcher.store, embedder=searcher.embedder, reranker=searcher.reranker, names=searcher.names,
                         settings=SearchSettings(rerank_words=0))
        assert [h.node_id for h in searcher.search(q, k=10)] == [h.node_id for h in plain.search(q, k=10)], q
