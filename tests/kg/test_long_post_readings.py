"""A long post's graph expansion and the cross-encoder's readings of it (issue 12, docs/retrieval.md "A long post's
expansion and readings"). ``search.expand_share``: past ``rerank_words`` words what graph expansion lends shrinks
with the reranker's share, so the story's links (its conditions) do not fill the top 10. ``search.rerank_readings``:
past ``rerank_words`` words the cross-encoder also reads each sentence that does not ask and the whole post, and a
candidate keeps its best probability. A short question ranks as before with both."""

from __future__ import annotations

from gmprep.common.settings import SearchSettings
from gmprep.kg.search import Searcher

ASK = "Can I Ready a spell to go off when the door opens?"
STORY = "We could hear voices whispering on the other side of the door and we wanted to surprise them."
# the ask after a story: 84 words, far past rerank_words (40)
POST = ("We were in a dungeon last night and the party had cleared two rooms already. The fighter stood by the door with "
        "his shield up while the wizard waited behind him, and the rogue was scouting ahead down the corridor. "
        + STORY + " I play the wizard and I had one action left over at the end of my turn. " + ASK)
# a story that names actions whose text links to conditions (Take Cover, Hide, Trip -> prone, unconscious ...)
NAMED_POST = ("I'm GMing for a party whose fighter keeps his tower shield raised all fight. Last session the goblins hid "
              "behind a wall, the rogue tried to Hide behind the fighter and the wizard wanted to Take Cover behind the "
              "shield as well, and then an ogre used Trip on the fighter. So can any ally next to me Take Cover behind it?")


def _with(searcher: Searcher, reranker=None, **settings) -> Searcher:
    return Searcher(searcher.store, embedder=searcher.embedder, reranker=reranker or searcher.reranker,
                    names=searcher.names, settings=SearchSettings(**settings))


class ReadsTheStory:
    """A stand-in cross-encoder sure of one entry only when it reads the story's sentence alone (a whole post, which
    ends in its ask, is read as that ask by the real one)."""

    def __init__(self, favourite: str):
        self.favourite = favourite
        self.readings: list[str] = []

    def score_nodes(self, query, nodes, query_tokens=0, passage_query=""):
        self.readings.append(query)
        sure = "whispering" in query and not query.endswith("?")  # the story's sentence read alone
        return [4.0 if sure and n.node_id == self.favourite else -4.0 for n in nodes]


def _expanded(hits) -> int:
    return sum(1 for h in hits if h.via.startswith("expand"))


def test_a_long_posts_expansion_lends_less(searcher):
    full = _with(searcher, expand_share=False).search(NAMED_POST, k=10)
    shared = searcher.search(NAMED_POST, k=10)  # the default: expand_share on
    assert _expanded(full) > 0, [h.via for h in full]
    assert _expanded(shared) < _expanded(full), ([h.node_id for h in shared], [h.node_id for h in full])
    # what the expansion lent no longer outranks what the first stage and the reranker found
    first_expanded = min(i for i, h in enumerate(shared) if h.via.startswith("expand")) if _expanded(shared) else 10
    assert first_expanded > min(i for i, h in enumerate(full) if h.via.startswith("expand"))


def test_the_readings_lift_what_the_story_sentence_is_about(searcher):
    off = _with(searcher, ReadsTheStory(""))
    # an entry the cross-encoder reads (in its window) from the middle of the list
    favourite = [h.node_id for h in off.search(POST, k=10) if h.via == "rerank"][3]
    off = _with(searcher, ReadsTheStory(favourite))
    reads = ReadsTheStory(favourite)
    on = _with(searcher, reads, rerank_readings=True)
    off_ids = [h.node_id for h in off.search(POST, k=10)]
    on_ids = [h.node_id for h in on.search(POST, k=10)]
    # off: the asking sentence alone is read and the stand-in is sure of nothing; on: the story's sentence is one
    # reading, so the favourite keeps the sure probability (at a long post's share of it) and rises
    assert favourite in on_ids, on_ids
    assert on_ids.index(favourite) < (off_ids.index(favourite) if favourite in off_ids else 10), (on_ids, off_ids)
    # the readings: the first pass (the whole text, condensed by the cross-encoder to its ask), each sentence that
    # does not ask (the characters masked: "the someone"), and the whole post again, read without condensing
    assert STORY in reads.readings and ASK not in reads.readings
    assert sum(1 for r in reads.readings if not r.endswith("?")) == 4
    assert reads.readings.count(reads.readings[0]) >= 2


def test_short_questions_rank_as_without_them(searcher):
    for q in ("Does Trip work on a flying creature?", "What does the frightened condition do?", ASK):
        plain = _with(searcher, expand_share=False)
        both = _with(searcher, expand_share=True, rerank_readings=True)
        assert [h.node_id for h in both.search(q, k=10)] == [h.node_id for h in plain.search(q, k=10)], q


def test_the_real_reranker_reads_a_long_post_more_than_once(searcher):
    # with the shipped cross-encoder: each reading can only raise a candidate's probability, so the list stays a
    # ranking of the same first-stage window and a short question is untouched
    on = [h.node_id for h in _with(searcher, rerank_readings=True).search(POST, k=10)]
    off = [h.node_id for h in searcher.search(POST, k=10)]
    assert len(on) == len(off) == 10
    assert set(on[:5]) & set(off[:10])
