"""Sense evidence from an entry's own text (kg/gloss.py) and how the note stage reads it."""

from __future__ import annotations

import copy

import pytest

from gmprep.ingest.corpus import load_corpus
from gmprep.kg.gloss import BARE_WORDS, GlossIndex, gloss_words
from gmprep.kg.mention_scorer import MentionScorer, NoteStage
from gmprep.kg.names import NameIndex
from gmprep.kg.note_scan import NoteScanner, section_means


@pytest.fixture(scope="module")
def index():
    return NameIndex.build(n for n in load_corpus().nodes if n.kind == "entry")


def _around(idx: GlossIndex, node_id: str, text: str, word: str) -> tuple[float, int]:
    s = text.index(word)
    return idx.around(node_id, text, s, s + len(word))


def test_overlap_is_the_cosine_of_distinctive_words():
    g = GlossIndex([
        ("x:ward", "You ward an area. A creature that enters without the password wakes you."),
        ("x:bell", "A bell rings in the town square."),
        ("x:town", "The town has a square, a market area and a bell."),
        ("x:pig", "The pig eats."),
    ])
    near, n = _around(g, "x:ward", "Cast ward here; anyone who enters without the password is noticed.", "ward")
    far, _ = _around(g, "x:ward", "The ward by the town square bell rang all night.", "ward")
    assert 0.0 < near <= 1.0 and n == len(gloss_words("Cast here; anyone who enters without the password is noticed."))
    assert far == 0.0  # "the" is in every entry: no weight
    # the candidate's own words are not evidence, words no entry uses count but match nothing
    assert g.overlap("x:ward", ["ward", "ward"], exclude=["ward"]) == 0.0
    assert g.overlap("x:ward", ["zzyzx"]) == 0.0
    assert g.overlap("x:nothing", ["password"]) == 0.0  # an entry without text
    assert g.overlap("x:ward", ["password"]) > g.overlap("x:ward", ["area"]) > 0  # rarer across entries weighs more
    assert gloss_words("It's a DC 15 Flat-Footed of the ox") == ["it's", "flat-footed", "the"]


def test_the_rule_sense_reads_near_the_entry_text(index):
    """The corpus's own text tells the spell from the everyday word, and the action from the escape."""
    spell, n = _around(index.gloss, "pf2e:spell:alarm",
                       "Cast alarm on the camp: any creature that enters the warded area without the password sets it off.",
                       "alarm")
    everyday, _ = _around(index.gloss, "pf2e:spell:alarm",
                          "The guards raised the alarm and the whole town ran to the square.", "alarm")
    assert spell > 10 * everyday and n >= BARE_WORDS
    action, _ = _around(index.gloss, "pf2e:action:escape",
                        "The goblin escaped from the grab and fled; it is no longer grabbed or restrained.", "escaped")
    story, _ = _around(index.gloss, "pf2e:action:escape", "The mayor escaped to the capital and became governor.",
                       "escaped")
    assert action > 10 * story
    # a name alone in a list item has nothing around it to read
    _, read = _around(index.gloss, "pf2e:class:wizard", "Wizard, Witch", "Wizard")
    assert read < BARE_WORDS


def test_note_stage_reads_the_gloss_and_bare(index):
    """The scanner gives each candidate its gloss and bare flag, and a stage with gloss weight shows the
    rule sense above the everyday one; the calibration path (candidates + section means) reads the same."""
    stage = NoteStage(1.0, 0.0, 0.0, gloss_weight=1.0, bare_weight=0.5)
    assert stage.adjust(0.5, 0.0) == 0.5
    assert stage.adjust(0.5, 0.0, 0.1) > 0.5 and stage.adjust(0.5, 0.0, 0.0, True) > 0.5
    base = MentionScorer.load()
    staged = copy.copy(base)
    staged.note_stage = stage
    rule = "Cast alarm on the camp: any creature that enters the warded area without the password sets it off.\n"
    story = "The guards raised the alarm and the whole town ran to the square.\n"
    conf = {}
    for name, text in (("rule", rule), ("story", story)):
        cands = NoteScanner(index, scorer=base).candidates(text)
        i = next(i for i, c in enumerate(cands) if c.mention.text == "alarm")
        assert not cands[i].bare
        expect = stage.adjust(cands[i].mention.confidence, section_means(cands)[i], cands[i].gloss, cands[i].bare)
        shown = NoteScanner(index, scorer=staged)
        shown.threshold = 0.0
        got = {m.text: m.confidence for m in shown.scan(text).mentions}
        assert abs(got["alarm"] - round(expect, 4)) < 1e-4
        conf[name] = got["alarm"] - cands[i].mention.confidence  # what the gloss added to the scorer's own
    assert conf["rule"] > conf["story"]
    # a class name alone in a list item: bare, and its chunk's cached decision keeps the flags when it moves
    scanner = NoteScanner(index, scorer=base)
    listed = scanner.candidates("* **Garrison**: Fighter, Monk\n")
    assert listed and all(c.bare for c in listed)
    moved = scanner.candidates("# Retraining\n\nSome words first.\n\n* **Garrison**: Fighter, Monk\n")
    assert [c.bare for c in moved if c.mention.text in ("Fighter", "Monk")] == [True, True]
