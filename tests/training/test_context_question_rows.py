"""Context questions (``training.long_questions.with_context``, ``training.negatives.context_written``): a written
question told inside another entry's written questions, that entry its first hard negative; rows that hold the
question as search reads it (``rows_from_groups(query_tokens=...)``)."""

from __future__ import annotations

import random

from gmprep.kg.models import Node
from gmprep.kg.query import asking, condense, sentences
from gmprep.training.long_questions import situation_part, with_context
from gmprep.training.negatives import TrainGroup, context_written, mine_negatives
from gmprep.training.queries import TrainQuery
from gmprep.training.trainer import rows_from_groups

ASKED = "Do I need to be holding my medical kit to patch up a fallen ally mid-fight?"
SITUATED = "My rogue ducks behind a crate in the middle of the fight - can the guards still see her?"
PLAIN = "Can my character pour a healing potion down an unconscious friend's throat?"


def _node(slug: str, name: str, type_: str = "action") -> Node:
    return Node(node_id=f"pf2e:{type_}:{slug}", source_id=f"pf2e:{type_}:{slug}", kind="entry", name=name,
                type=type_, text=f"{name} text about something. " * 3)


def test_the_situation_part_is_what_a_question_tells_before_it_asks():
    assert situation_part(SITUATED) == "My rogue ducks behind a crate in the middle of the fight."
    assert situation_part("This trap needs several successes to shut down. How does a good roll count?") == \
        "This trap needs several successes to shut down."
    assert situation_part(PLAIN) is None
    # an asking clause first is no situation
    assert situation_part("How does a creature whose hits can sweep you to the ground work - does it cost more?") is None


def test_the_asked_question_is_what_search_keeps_of_a_context_post():
    texts = [with_context(ASKED, [SITUATED, PLAIN][: 1 + s % 2], random.Random(s), avoid_name="Administer First Aid")
             for s in range(200)]
    assert texts == [with_context(ASKED, [SITUATED, PLAIN][: 1 + s % 2], random.Random(s),
                                  avoid_name="Administer First Aid") for s in range(200)]
    kinds = {kind for _, kind in texts}
    assert kinds == {"situation", "settled"}
    for text, _ in texts:
        assert ASKED[1:] in text and ("rogue ducks behind a crate" in text or "crate" not in SITUATED)
        sents = sentences(text)
        first_ask = sents[asking(sents)[0]]
        assert ASKED[1:] in first_ask  # no context sentence ends in "?" before the asked one
        assert ASKED[1:] in condense(text, 28, lambda t: len(t.split()))
        assert "{" not in text
    # the other entry's question is in the text, told or quoted
    assert any(f'"{PLAIN}"' in t for t, _ in texts) and any("crate in the middle of the fight." in t for t, _ in texts)


def test_the_neighbour_with_written_questions_is_the_context_and_the_first_negative():
    asked = _node("administer-first-aid", "Administer First Aid")
    same_base = _node("administer-first-aid-x", "Administer First Aid (Variant)")
    silent = _node("recall-knowledge", "Recall Knowledge")  # a neighbour without written questions
    other = _node("take-cover", "Take Cover")
    linked = _node("dying", "Dying", "condition")
    nodes = {n.node_id: n for n in [asked, same_base, silent, other, linked]}
    written = {other.node_id: [SITUATED], same_base.node_id: ["Whatever it is?"], linked.node_id: [PLAIN]}

    def bm25(_query: str, k: int) -> list[tuple[str, float]]:
        return [(asked.node_id, 9.0), (same_base.node_id, 8.0), (silent.node_id, 7.0), (other.node_id, 6.0)][:k]

    queries = [TrainQuery(query=f"{ASKED} ({i})", positive=asked.node_id, generator="written") for i in range(60)]
    out = context_written(queries, nodes, bm25, written, share=0.5, seed=3, neighbors=lambda nid: [linked.node_id])
    told = [q for q in out if q.generator == "context"]
    assert len(told) == 30 and len(out) == 60
    for before, after in zip(queries, out, strict=True):
        assert after == before if after.generator == "written" else before.query[1:] in after.query
    assert {q.mentioned[0] for q in told} == {other.node_id, linked.node_id}  # lexical and graph neighbours
    for q in told:
        assert q.context in {f"{k}/{s}" for k in ("situation", "settled") for s in ("lexical", "graph")}
        assert ("crate" in q.query) == (q.mentioned == [other.node_id])
    groups = mine_negatives(told, nodes, bm25, None, n_negatives=2, seed=3, progress=False)
    assert all(g.negatives[0] == g.mentioned[0] and asked.node_id not in g.negatives
               and same_base.node_id not in g.negatives for g in groups)
    assert [q.query for q in context_written(queries, nodes, bm25, written, 0.5, 3)] != [q.query for q in out]
    again = context_written(queries, nodes, bm25, written, 0.5, 3, neighbors=lambda nid: [linked.node_id])
    assert [q.query for q in again] == [q.query for q in out]
    # no neighbour with written questions: the question stays short
    alone = context_written(queries[:3], nodes, bm25, {}, share=1.0, seed=3)
    assert alone == queries[:3]


def test_rows_hold_the_question_as_search_reads_it():
    asked = _node("administer-first-aid", "Administer First Aid")
    other = _node("take-cover", "Take Cover")
    nodes = {asked.node_id: asked, other.node_id: other}
    long_q = ("Background: level 5 party, a rogue, a bard and two newer players. My rogue ducks behind a crate in "
              "the middle of the fight. We had a long argument about it and nobody found the page. " + ASKED)
    groups = [TrainGroup(query=long_q, positive=asked.node_id, generator="context", negatives=[other.node_id])]
    whole = rows_from_groups(groups, nodes, negatives=1)
    read = rows_from_groups(groups, nodes, negatives=1, query_tokens=28)
    assert whole[0].query == long_q
    assert read[0].query != long_q and ASKED in read[0].query and len(read[0].query) < len(long_q)
    assert read[0].passages == whole[0].passages and read[0].ids == whole[0].ids


def test_a_context_share_out_of_range_is_one_clear_line(capsys):
    from gmprep.cli import main

    assert main(["reranker", "train", "--context-share", "-0.1", "--rows-out", "unused.jsonl.gz"]) != 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--context-share must be between 0 and 1" in err
