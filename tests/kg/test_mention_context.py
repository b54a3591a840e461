"""The contextual scorer's input window: the span marked, bounded either side, never past a blank line."""

from gmprep.kg.mention_context import WINDOW_WORDS, pair, window


def test_window_marks_the_span_in_its_paragraph():
    text = "Old notes.\n\nThe guard is frightened 2 after the roar.\n\nNext paragraph."
    s = text.index("frightened")
    w = window(text, s, s + len("frightened"))
    assert w == "The guard is << frightened >> 2 after the roar."


def test_window_is_bounded_on_a_huge_line():
    text = "word " * 100_000 + "Shield " + "word " * 100_000
    s = text.index("Shield")
    w = window(text, s, s + 6)
    assert w.split().count("word") == 2 * WINDOW_WORDS
    assert pair(text, s, s + 6, "spell", "Shield")[1] == "spell: Shield"
