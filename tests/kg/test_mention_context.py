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


def test_window_squashes_table_rules():
    text = "| Level | ------------------------------ | ====== the fighter casts Shield and then"
    s = text.index("Shield")
    assert window(text, s, s + 6) == "| Level | -- | == the fighter casts << Shield >> and then"


def test_compact_storage_keeps_the_model(tmp_path):
    """The compact folder (layers int8 per row, word embeddings from the bundled reranker) reads back as
    the model it was written from: the bundled reranker itself here, whose words are trivially its own."""
    import torch

    from gmprep.kg.mention_context import (
        STACK_FILE,
        WEIGHTS,
        ContextStack,
        _load_compact,
        _load_full,
        reranker_dir,
        save_compact,
    )

    save_compact(reranker_dir(), tmp_path, {"a": 0.5, "b": 0.25, "clip": 4.0}, {"note": "test"})
    assert (tmp_path / WEIGHTS).stat().st_size < 0.3 * (reranker_dir() / "model.safetensors").stat().st_size
    model = _load_compact(tmp_path)
    full = _load_full(reranker_dir()).state_dict()
    compact = {**model.state_dict(), **dict(model.named_buffers())}  # the fp16 word table is a buffer
    assert compact["bert.embeddings.word_embeddings.weight"].dtype == torch.float16
    for name, tensor in full.items():
        if "position_ids" in name:
            continue
        scale = float(tensor.float().abs().max()) or 1.0
        assert float((compact[name].float() - tensor.float()).abs().max()) <= 0.01 * scale, name
    stack = ContextStack.load(tmp_path)
    assert (stack.a, stack.b, stack.clip, stack.band) == (0.5, 0.25, 4.0, 1.5)
    assert "note" in (tmp_path / STACK_FILE).read_text()
    # a real pair scored through the int8 model: a number, and the same one again from the cache
    pairs = [("The guard is << frightened >> 2 after the roar.", "condition: Frightened")]
    first = stack.read(pairs)
    assert len(first) == 1 and isinstance(first[0], float) and stack.read(pairs) == first
    assert torch.isfinite(torch.tensor(first)).all()


class _FakeScorer:
    """A named fake for control flow only: logits from a table, counting what it was asked."""

    def __init__(self, table):
        self.table, self.asked = table, []

    def logits(self, pairs):
        self.asked += list(pairs)
        return [self.table[p] for p in pairs]


def test_adjust_reads_only_candidates_near_a_threshold():
    from gmprep.kg.mention_context import ContextStack

    fake = _FakeScorer({("a", "x"): 10.0, ("b", "x"): -2.0})
    stack = ContextStack(fake, a=0.5, b=0.25, clip=4.0)  # band 1.5
    out = stack.adjust([0.2, 5.0, -1.0], lambda i: [("a", "x"), ("c", "x"), ("b", "x")][i], [0.0])
    assert out == [0.2 + 0.5 + 0.25 * 4.0, None, -1.0 + 0.5 - 0.5]  # clipped at 4; the far one never read
    assert fake.asked == [("a", "x"), ("b", "x")]
    stack.adjust([0.2], lambda i: ("a", "x"), [0.0])
    assert fake.asked == [("a", "x"), ("b", "x")]  # cached


def test_broken_context_model_leaves_hovers_to_the_logistic_scorer(tmp_path, monkeypatch, caplog):
    from gmprep.kg import mention_context

    (tmp_path / mention_context.WEIGHTS).write_bytes(b"not a safetensors file")
    monkeypatch.setattr(mention_context, "MODEL_DIR", tmp_path)
    monkeypatch.setattr(mention_context, "_shared", {})
    assert mention_context.shared_context() is None
    assert "context model unavailable" in caplog.text


def test_a_lone_surrogate_reaches_the_model_as_a_question_mark():
    text = "The troll \ud800 is frightened 2."
    s = text.index("frightened")
    a, b = pair(text, s, s + 10, "condition", "Frightened")
    assert a == "The troll ? is << frightened >> 2." and b == "condition: Frightened"
