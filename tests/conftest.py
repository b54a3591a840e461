"""Shared fixtures: the bundled corpus, and one fully built store per test session.

The store is built once (``tests/session_store.py``: real SQLite, FTS5, usearch and MiniLM embeddings,
cached and keyed by the corpus and the code that builds it). Tests that modify a store copy it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gmprep.ingest.corpus import load_corpus

# llm.backend defaults to "auto", which would answer with whatever model the developer installed:
# the suite sees an empty models folder, so "auto" is extractive unless a test picks a backend and model
os.environ["GMPREP_MODELS_DIR"] = str(Path(__file__).resolve().parent / "_no_models")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
EVAL_DIR = SHARED / "eval"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long files first: those that start language servers (tests/server) or need the full store
    (marked slow). scripts/test runs the files on two workers (pytest-xdist, --dist loadfile,
    --no-loadscope-reorder, so in this order): a long file started last would keep one worker busy
    while the other has nothing left. The sort is stable: each file keeps its own tests' order."""
    long_files = {i.path for i in items if i.path.parent.name == "server" or i.get_closest_marker("slow")}
    items.sort(key=lambda i: i.path not in long_files)


@pytest.fixture(scope="session")
def corpus():
    """The bundled corpus as graph nodes and edges."""
    return load_corpus()


@pytest.fixture(scope="session")
def store_dir() -> Path:
    """A complete store (graph + BM25 + vectors) of the bundled corpus, built once per key. Read-only use."""
    from session_store import ensure_store

    return ensure_store()


@pytest.fixture()
def store_copy(store_dir: Path, tmp_path: Path) -> Path:
    """A private writable copy of the session store."""
    dst = tmp_path / "store"
    shutil.copytree(store_dir, dst, ignore=shutil.ignore_patterns("READY", "*-wal", "*-shm"))
    return dst


@pytest.fixture(scope="session")
def eval_dir() -> Path:
    """The shared labelled evaluation data (../shared/eval)."""
    if not EVAL_DIR.is_dir():
        pytest.skip("../shared/eval is not beside this checkout")
    return EVAL_DIR
