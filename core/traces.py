"""Answer traces: every step an answer went through (input, output, timing, tokens, retrieved ids).

Stored in ``<store_dir>/conversations.db`` next to the conversations, in this module's own table,
keyed by the assistant message id the trace explains (``gmprep/trace {messageId}``). One row per
step, in order, so a trace can be read back exactly as it ran.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

StepStatus = Literal["ok", "retried", "failed", "skipped", "cancelled"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answer_trace_steps(
  message_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  step TEXT NOT NULL,
  PRIMARY KEY (message_id, seq)
);
"""


class TraceStep(BaseModel):
    """One step of an answer run. ``input``/``output`` are JSON values (the step's typed models, dumped)."""

    name: str
    status: StepStatus = "ok"
    input: Any = None
    output: Any = None
    ms: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    retrieved: list[str] = Field(default_factory=list)
    error: str | None = None
    node: str | None = None  # plan node the step belongs to (None: whole question)

    @property
    def tokens(self) -> int:
        """Prompt + completion tokens."""
        return self.tokens_in + self.tokens_out

    def wire(self) -> dict:
        """The ``gmprep/trace`` shape: ``{name, input, output, ms, tokens, retrieved}`` plus the details."""
        data = self.model_dump()
        data["tokens"] = self.tokens
        return data


class TraceStore:
    """Traces in the conversations database (thread-safe; one short transaction per save)."""

    def __init__(self, db_path: Path | str, busy_timeout_ms: int = 15000):
        self.db_path = Path(db_path)
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.db_path, check_same_thread=False, timeout=busy_timeout_ms / 1000, isolation_level=None)
        self._db.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)

    @classmethod
    def in_store(cls, store_dir: Path | str) -> TraceStore:
        """The trace table of an index folder's conversations database."""
        return cls(Path(store_dir) / "conversations.db")

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def save(self, message_id: str, steps: list[TraceStep]) -> None:
        """Store (or replace) the trace of ``message_id``."""
        rows = [(message_id, i, json.dumps(s.model_dump(), default=str)) for i, s in enumerate(steps)]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("DELETE FROM answer_trace_steps WHERE message_id = ?", (message_id,))
                self._db.executemany("INSERT INTO answer_trace_steps(message_id, seq, step) VALUES (?,?,?)", rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def load(self, message_id: str) -> list[TraceStep]:
        """The steps of ``message_id`` in order ([] when it has no trace)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT step FROM answer_trace_steps WHERE message_id = ? ORDER BY seq", (message_id,)
            ).fetchall()
        return [TraceStep.model_validate_json(r[0]) for r in rows]

    def delete(self, message_id: str) -> None:
        """Forget the trace of ``message_id``."""
        with self._lock:
            self._db.execute("DELETE FROM answer_trace_steps WHERE message_id = ?", (message_id,))
