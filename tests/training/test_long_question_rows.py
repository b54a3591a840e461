"""Long training questions (``training.long_questions``, ``training.negatives.long_written``): written
questions told the way forum askers write, and the entry named in passing as their first hard negative."""

from __future__ import annotations

import random
import re

from gmprep.kg.models import Node
from gmprep.training.long_questions import ASIDES, FOLLOW_UPS, MENTIONS, PREAMBLES, lengthen
from gmprep.training.negatives import long_written, mine_negatives
from gmprep.training.queries import TrainQuery

QUESTION = "Do I need to be holding my medical kit to patch up a fallen ally mid-fight?"


def _node(slug: str, name: str, type_: str = "action", prose: bool = False) -> Node:
    fields = {"hover_name": False} if prose else {}
    return Node(node_id=f"pf2e:{type_}:{slug}", source_id=f"pf2e:{type_}:{slug}", kind="entry", name=name,
                type=type_, text=f"{name} text about something.", fields=fields)


def test_a_long_question_keeps_the_question_inside_context_and_is_reproducible():
    texts = [lengthen(QUESTION, random.Random(s)) for s in range(200)]
    assert texts == [lengthen(QUESTION, random.Random(s)) for s in range(200)]
    assert len(set(texts)) > 150  # the pieces vary
    for t in texts:
        assert QUESTION[1:] in t and not t.startswith(QUESTION)  # context always comes first
        sentences = len(re.findall(r"[.!?)](?:\s|$)", t))
        assert 3 <= sentences <= 8 and "{" not in t


def test_fillers_never_share_a_word_with_the_asked_entry():
    texts = [lengthen(QUESTION, random.Random(s), avoid_name="Fighter Dedication") for s in range(300)]
    assert not any("fighter" in t.lower() for t in texts)
    assert any("fighter" in lengthen(QUESTION, random.Random(s)).lower() for s in range(300))


def test_the_pieces_name_no_rule():
    # a piece must not point at an answer: no capitalised game term inside a sentence (names, I, edition words aside)
    allowed = {"I", "We", "D&D", "GM", "GMing", "VTT", "English", "Sunday", "Edit", "Yes"}
    for piece in PREAMBLES + ASIDES + FOLLOW_UPS + MENTIONS:
        words = re.findall(r"(?<![.!?:(]\s)(?<!^)\b[A-Z][\w&]*", piece)
        assert set(words) <= allowed, piece


def test_the_mentioned_entry_is_named_and_becomes_the_first_negative():
    asked = _node("administer-first-aid", "Administer First Aid")
    other = _node("battle-medicine", "Battle Medicine", "feat")
    prose = _node("healing-prose", "Healing", "rule", prose=True)
    filler = [_node(f"filler-{i}", f"Filler Entry {i}") for i in range(6)]
    nodes = {n.node_id: n for n in [asked, other, prose, *filler]}

    def bm25(_query: str, k: int) -> list[tuple[str, float]]:  # the asked entry and a prose section rank first
        return [(asked.node_id, 9.0), (prose.node_id, 8.0), (other.node_id, 7.0)][:k]

    queries = [TrainQuery(query=f"{QUESTION} ({i})", positive=asked.node_id, generator="written") for i in range(40)]
    out = long_written(queries, nodes, bm25, share=0.5, mention_share=1.0, seed=3)
    long = [q for q in out if q.generator == "long"]
    assert len(long) == 20 and len(out) == 40
    for before, after in zip(queries, out, strict=True):  # in place: the short ones untouched, the long ones wrap them
        assert after == before if after.generator == "written" else before.query[1:] in after.query
    # the only fair, non-prose neighbour is Battle Medicine: named in the text, mentioned, never the positive
    assert all(q.mentioned == [other.node_id] and "Battle Medicine" in q.query for q in long)
    groups = mine_negatives(long, nodes, bm25, None, n_negatives=3, seed=3, progress=False)
    assert all(g.negatives[0] == other.node_id and asked.node_id not in g.negatives for g in groups)
    # reproducible by seed, different by another
    assert [q.query for q in long_written(queries, nodes, bm25, 0.5, 1.0, seed=3)] == [q.query for q in out]
    assert [q.query for q in long_written(queries, nodes, bm25, 0.5, 1.0, seed=4)] != [q.query for q in out]


def test_no_mention_without_a_fair_neighbour():
    asked = _node("administer-first-aid", "Administer First Aid")
    nodes = {asked.node_id: asked}
    queries = [TrainQuery(query=QUESTION, positive=asked.node_id, generator="written")]
    out = long_written(queries, nodes, lambda q, k: [(asked.node_id, 1.0)], share=1.0, mention_share=1.0, seed=1)
    assert out[0].generator == "long" and out[0].mentioned == [] and QUESTION[1:] in out[0].query


def test_a_share_out_of_range_is_one_clear_line(capsys):
    from gmprep.cli import main

    assert main(["reranker", "train", "--long-share", "1.5", "--rows-out", "unused.jsonl.gz"]) != 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--long-share must be between 0 and 1" in err
