"""Shared fixtures: the bundled corpus, and one fully built store per test session.

The store is built once (real SQLite, FTS5, usearch and MiniLM embeddings) and cached under
``$GMPREP_TEST_CACHE`` (default ``.pytest_cache/gmprep``), keyed by the corpus and by the source of
the code that builds it, so a change to the pipeline rebuilds it. Tests that modify a store copy it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from gmprep.common.settings import Settings
from gmprep.ingest.corpus import corpus_digest, corpus_dir, load_corpus

# llm.backend defaults to "auto", which would answer with whatever model the developer installed:
# the suite sees an empty models folder, so "auto" is extractive unless a test picks a backend and model
os.environ["GMPREP_MODELS_DIR"] = str(Path(__file__).resolve().parent / "_no_models")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
EVAL_DIR = SHARED / "eval"
_BUILD_SOURCES = ["ingest/corpus.py", "ingest/notes.py", "ingest/pipeline.py", "ingest/health.py", "kg/store.py", "common/text.py", "kg/embedder.py"]


def _build_key() -> str:
    h = hashlib.sha256(corpus_digest(corpus_dir()).encode())
    for rel in _BUILD_SOURCES:
        h.update((REPO / rel).read_bytes())
    return h.hexdigest()[:12]


@pytest.fixture(scope="session")
def corpus():
    """The bundled corpus as graph nodes and edges."""
    return load_corpus()


@pytest.fixture(scope="session")
def store_dir() -> Path:
    """A complete store (graph + BM25 + vectors) of the bundled corpus, built once per key. Read-only use."""
    from gmprep.ingest.pipeline import build_index

    cache = Path(os.environ.get("GMPREP_TEST_CACHE", REPO / ".pytest_cache" / "gmprep"))
    target = cache / f"store-{_build_key()}"
    if not (target / "READY").exists():
        tmp = cache / f"building-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        report = build_index(Settings(store_dir=tmp), progress=False)
        assert report.entries >= 5364, report
        (tmp / "READY").write_text(report.model_dump_json())
        shutil.rmtree(target, ignore_errors=True)
        tmp.replace(target)
    (cache / "LATEST").write_text(str(target))  # scripts/test hands this store to the editor e2e
    return target


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
