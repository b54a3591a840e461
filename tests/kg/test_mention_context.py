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


def test_training_refuses_a_heldout_split(tmp_path):
    import pytest

    from gmprep.common.errors import GmprepError
    from gmprep.kg.mention_context_train import tune_spans

    with pytest.raises(GmprepError, match="held-out"):
        tune_spans(tmp_path / "heldout.jsonl", tmp_path, [])


def test_sampling_weighs_positive_and_negative_kinds_equally():
    from gmprep.kg.mention_context_train import sample_examples
    from gmprep.kg.mention_scorer import Candidate, SpanContext
    from gmprep.kg.mention_scorer_train import Example

    def ex(i, kind, label):
        return Example("x", 0, 1, Candidate(f"n{i}", "spell", "X", "x"), SpanContext(), label, kind, f"e{i}")

    pool = [ex(i, "link", 1) for i in range(100)] + [ex(i, "lower-unlinked", 0) for i in range(100)] \
        + [ex(i, "proper-name", 0) for i in range(100)]
    kept = sample_examples(pool, per_kind=10, seed=7)
    assert sum(e.label for e in kept) == 20 and len(kept) == 40
