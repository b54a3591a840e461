"""SQLite database files the user may not be able to write (permissions, a read-only mount).

The store and the conversations database both open such files read-only for readers and refuse
writers with a clear ReadOnlyError; the tests for both live in tests/core and tests/ingest.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path


def can_write(db_path: Path) -> bool:
    """Whether this process may write ``db_path`` and create its WAL files beside it (``os.access``
    follows file modes, ownership and read-only mounts; root without CAP_DAC_OVERRIDE too)."""
    if db_path.exists():
        return os.access(db_path, os.W_OK) and os.access(db_path.parent, os.W_OK)
    existing = next((p for p in db_path.parents if p.exists()), None)
    return existing is not None and os.access(existing, os.W_OK)


def connect_read_only(db_path: Path, probe_table: str) -> sqlite3.Connection:
    """A read-only connection that has read ``probe_table``. A WAL database in a folder the reader
    cannot write has no shared-memory index to open: ``immutable`` then reads the file as it is
    (nobody without write access can be changing it). Raises sqlite3.DatabaseError when unreadable."""
    last: sqlite3.DatabaseError = sqlite3.DatabaseError(f"cannot open {db_path}")
    for flags in ("mode=ro", "immutable=1"):
        try:
            db = sqlite3.connect(f"{db_path.as_uri()}?{flags}", uri=True, check_same_thread=False, isolation_level=None)
            db.execute(f"SELECT count(*) FROM {probe_table}").fetchone()
            return db
        except sqlite3.DatabaseError as exc:
            last = exc
    raise last
