"""The test session's store: one fully built store of the bundled corpus (real SQLite, FTS5, usearch and
MiniLM embeddings), cached under ``$GMPREP_TEST_CACHE`` (default ``.pytest_cache/gmprep``) and keyed by
the corpus and by the source of the code that builds it, so a change to the pipeline rebuilds it.

``scripts/test`` runs this file before pytest (``python tests/session_store.py``), so the build (minutes
on 2 cores) is a stage of its own rather than the setup of whichever test asks first, where pytest's
per-test timeout would count it; the ``store_dir`` fixture then finds it built. pytest runs in several
worker processes (pytest-xdist): a lock file makes one of them build a missing store and the others wait
for it instead of building it again beside it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_BUILD_SOURCES = ["ingest/corpus.py", "ingest/notes.py", "ingest/pipeline.py", "ingest/health.py", "kg/store.py",
                  "common/text.py", "kg/embedder.py", "kg/question_index.py", "kg/data/questions.jsonl.gz"]


def build_key() -> str:
    from gmprep.ingest.corpus import corpus_digest, corpus_dir

    h = hashlib.sha256(corpus_digest(corpus_dir()).encode())
    for rel in _BUILD_SOURCES:
        h.update((REPO / rel).read_bytes())
    return h.hexdigest()[:12]


def ensure_store() -> Path:
    """The cached store for this checkout, built first when missing; ``LATEST`` names it."""
    from gmprep.common.settings import Settings
    from gmprep.ingest.pipeline import build_index

    cache = Path(os.environ.get("GMPREP_TEST_CACHE", REPO / ".pytest_cache" / "gmprep"))
    target = cache / f"store-{build_key()}"
    if (target / "READY").exists():  # built: the common case needs no lock
        _write_latest(cache, target)
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker building it: wait, then find it READY
        if not (target / "READY").exists():
            tmp = cache / f"building-{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            report = build_index(Settings(store_dir=tmp), progress=False)
            if report.entries < 5364:
                raise RuntimeError(f"the test store has {report.entries} entries, expected >= 5364")
            (tmp / "READY").write_text(report.model_dump_json())
            shutil.rmtree(target, ignore_errors=True)
            tmp.replace(target)
        _write_latest(cache, target)
    return target


def _write_latest(cache: Path, target: Path) -> None:
    """``LATEST`` names the store (scripts/test hands it to the editor e2e); written atomically, as
    several pytest workers write it at once."""
    tmp = cache / f"LATEST.{os.getpid()}"
    tmp.write_text(str(target))
    tmp.replace(cache / "LATEST")


if __name__ == "__main__":
    print(ensure_store())
    sys.exit(0)
