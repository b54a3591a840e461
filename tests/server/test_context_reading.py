"""The context model's first reading of a big note happens off the hover's path (server/documents.py):
the scan answers at once with the scorer's confidences, then the note is rescanned with the readings and
the server told (it republishes). Real name index, scorer and context model."""

from __future__ import annotations

import threading

import pytest

from gmprep.common.settings import HoverSettings
from gmprep.ingest.corpus import load_corpus
from gmprep.kg import mention_context
from gmprep.kg.names import NameIndex
from gmprep.kg.note_scan import NoteScanner, load_scorer
from gmprep.server import documents
from gmprep.server.documents import DocumentCache

NOTE = ("# Session 4\n\nThe zombies shambled toward the party while the fighter raised her shield.\n\n"
        "Kyra cast Shield as a reaction and the ogre was frightened 2. We took a long rest in the\n"
        "ruins; the wizard used Recall Knowledge on the strange statue and found a trap.\n")


@pytest.fixture(scope="module")
def names():
    return NameIndex.build(n for n in load_corpus().nodes if n.kind == "entry")


def test_a_big_first_reading_lands_after_the_answer(names, monkeypatch):
    if not (mention_context.MODEL_DIR / mention_context.WEIGHTS).is_file():
        pytest.skip("no context model shipped")
    ctx = mention_context.shared_context()
    assert ctx is not None
    monkeypatch.setattr(ctx, "_cache", type(ctx._cache)())  # nothing read yet
    monkeypatch.setattr(documents, "CONTEXT_BUDGET", 0)
    cache = DocumentCache()
    updated = threading.Event()
    cache.on_update = lambda uri: updated.set()
    first = cache.submit("file:///n.md", 1, NOTE, names).result(timeout=60)
    assert first.context_pending  # answered without reading
    plain = NoteScanner(names, HoverSettings(context_model=False), load_scorer()).scan(NOTE).mentions
    assert [(m.start, m.confidence) for m in first.mentions] == [(m.start, m.confidence) for m in plain]
    assert updated.wait(60)
    later = cache.cached("file:///n.md", 1, NOTE)
    assert later is not None and not later.context_pending
    full = NoteScanner(names, HoverSettings(), load_scorer()).scan(NOTE).mentions  # reads everything at once
    assert [(m.start, m.confidence) for m in later.mentions] == [(m.start, m.confidence) for m in full]
    assert [m.confidence for m in later.mentions] != [m.confidence for m in first.mentions]


def test_a_newer_version_drops_the_stale_reading(names, monkeypatch):
    if not (mention_context.MODEL_DIR / mention_context.WEIGHTS).is_file():
        pytest.skip("no context model shipped")
    ctx = mention_context.shared_context()
    monkeypatch.setattr(ctx, "_cache", type(ctx._cache)())
    monkeypatch.setattr(documents, "CONTEXT_BUDGET", 0)
    cache = DocumentCache()
    calls: list[str] = []
    cache.on_update = calls.append
    cache.submit("file:///n.md", 1, NOTE, names).result(timeout=60)
    edited = NOTE.replace("Session 4", "Session 5")
    cache.submit("file:///n.md", 2, edited, names).result(timeout=60)
    for _ in range(2):  # both queues drained: readings, then the rescans they ask for
        cache._reader.submit(lambda: None).result(timeout=120)
        cache._executor.submit(lambda: None).result(timeout=120)
    doc = cache.cached("file:///n.md", 2, edited)
    assert doc is not None and not doc.context_pending  # the newer version, read in full
    assert cache.cached("file:///n.md", 1, NOTE) is None
    assert calls == ["file:///n.md"]  # told once: the stale version's reading did not replace it
