"""Fixtures of the agent tests: a real searcher over the session store, and a store with notes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gmprep.common.settings import LLMSettings, SearchSettings, Settings

HOUSE_RULES = """# House rules

## Hero points at our table

Every PC starts each session with 2 hero points instead of 1. A player can spend all of them to
avoid death; a bonus action is what our table calls the free Interact granted after a critical hit.
"""


def _searcher(store_dir: Path):
    from gmprep.kg.search import Searcher
    from gmprep.kg.store import Store

    store = Store.open(store_dir, create=False)
    # rerank off: the control-flow tests need real retrieval, not the best ranking
    return Searcher(store, settings=SearchSettings(rerank=False))


@pytest.fixture(scope="session")
def searcher(store_dir: Path):
    """A real Searcher over the session store (corpus only)."""
    s = _searcher(store_dir)
    yield s
    s.store.close()


@pytest.fixture(scope="session")
def settings(store_dir: Path) -> Settings:
    """Settings for the pipeline tests (backend chosen by the test)."""
    return Settings(store_dir=store_dir, llm=LLMSettings(backend="llamacpp"))


@pytest.fixture(scope="session")
def notes_store(store_dir: Path, tmp_path_factory) -> Path:
    """A copy of the session store with one house-rules note indexed (origin ``notes:``)."""
    from gmprep.ingest.pipeline import build_index

    root = tmp_path_factory.mktemp("notes-store")
    dst = root / "store"
    shutil.copytree(store_dir, dst, ignore=shutil.ignore_patterns("READY", "*-wal", "*-shm"))
    notes = root / "notes"
    notes.mkdir()
    (notes / "house-rules.md").write_text(HOUSE_RULES, encoding="utf-8")
    build_index(Settings(store_dir=dst), notes_dir=notes, progress=False)
    return dst


@pytest.fixture(scope="session")
def notes_searcher(notes_store: Path):
    """A real Searcher over the store with notes."""
    s = _searcher(notes_store)
    yield s
    s.store.close()


# The rules-prose sections that state three rules the coverage tests ask about: without them, the store
# holds those rules the way it did before the books' rules prose was bundled (only mentioned by feats,
# spells and items), which is what a user's store lacking a book looks like.
WITHOUT_PROSE = ("pf2e:rule:gm-core--transferring-runes", "pf2e:rule:player-core--multiple-attack-penalty",
                 "pf2e:rule:player-core--attack-rolls--multiple-attack-penalty", "pf2e:rule:player-core--heightened-spells",
                 "pf2e:rule:player-core--heightened-spontaneous-spells")


def copy_store_without(store_dir: Path, dst: Path, node_ids: tuple[str, ...] = WITHOUT_PROSE) -> Path:
    """A copy of ``store_dir`` with the ``node_ids`` entries removed (rows, full-text rows and vectors)."""
    from gmprep.kg.store import Store

    shutil.copytree(store_dir, dst, ignore=shutil.ignore_patterns("READY", "*-wal", "*-shm"))
    with Store.open(dst, create=False) as store:
        marks = ",".join("?" * len(node_ids))
        rowids = [r for (r,) in store.db.execute(f"SELECT rowid FROM nodes WHERE node_id IN ({marks})", node_ids)]
        assert len(rowids) == len(node_ids), "a rules-prose section these tests remove is no longer in the corpus"
        with store.db:
            store.db.executemany("DELETE FROM fts WHERE rowid=?", [(r,) for r in rowids])
            store.db.executemany("DELETE FROM nodes WHERE rowid=?", [(r,) for r in rowids])
        store.remove_vectors(rowids)
    return dst


@pytest.fixture(scope="session")
def store_without_prose(store_dir: Path, tmp_path_factory) -> Path:
    """The session store without the rules-prose sections of WITHOUT_PROSE."""
    return copy_store_without(store_dir, tmp_path_factory.mktemp("without-prose") / "store")


@pytest.fixture(scope="session")
def searcher_without_prose(store_without_prose: Path):
    s = _searcher(store_without_prose)
    yield s
    s.store.close()


@pytest.fixture(scope="session")
def extractive(store_dir: Path) -> Settings:
    """Settings with the quoting backend: the answer path without a model."""
    return Settings(store_dir=store_dir, llm=LLMSettings(backend="extractive"))
