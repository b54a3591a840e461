"""Chat conversations about prep files, kept in SQLite next to the index.

``<store_dir>/conversations.db`` (stdlib sqlite3, WAL journal, ``synchronous=FULL``): a message is
committed before ``add_message`` returns, so whatever the editor was told is saved survives a
crash (kill -9) of the server. Conversations are keyed by the prep file's workspace-relative path;
renaming a file (or a folder) moves its conversations along. Several servers may share one db
file: every write is a short transaction and waits on the others (``busy_timeout``).

An answer records the question it answers (``reply_to``), so a conversation reads back as question,
its answer, next question ... even when two windows asked at once and the rows were written
question, question, answer, answer. Databases from before ``reply_to`` are migrated in place on open.
A database this process may not write opens read-only (``read_only=True``) or raises ReadOnlyError.

The agents engineer keeps answer traces in their own table of the same file, keyed by message id.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from gmprep.common.dbfiles import can_write, connect_read_only
from gmprep.common.errors import ReadOnlyError
from gmprep.kg.models import Citation

DB_NAME = "conversations.db"
DEFAULT_TITLE = "New conversation"
_TITLE_CHARS = 60
Role = Literal["user", "assistant"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations(
  id TEXT PRIMARY KEY,
  path TEXT NOT NULL,
  title TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_path ON conversations(path, updated_at);
CREATE TABLE IF NOT EXISTS messages(
  id TEXT PRIMARY KEY,
  conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL,
  text TEXT NOT NULL,
  citations TEXT NOT NULL DEFAULT '[]',
  outcome TEXT,
  created_at TEXT NOT NULL,
  reply_to TEXT,
  used TEXT
);
CREATE INDEX IF NOT EXISTS messages_conversation ON messages(conversation_id, seq);
"""
# column -> how to add it (``used``: the JSON list of source ids an answer's text cites; NULL before it)
_MIGRATIONS = {"reply_to": "ALTER TABLE messages ADD COLUMN reply_to TEXT",
               "used": "ALTER TABLE messages ADD COLUMN used TEXT"}


class ConversationSummary(BaseModel):
    """A conversation without its messages."""

    id: str
    path: str  # workspace-relative path of the prep file
    title: str
    created_at: str
    updated_at: str
    message_count: int = 0


class StoredMessage(BaseModel):
    """One saved chat message."""

    id: str
    conversation_id: str
    role: Role
    text: str
    citations: list[Citation] = Field(default_factory=list)
    outcome: str | None = None
    created_at: str
    reply_to: str | None = None  # an answer: the id of the question it answers
    used: list[str] | None = None  # an answer: the source ids its text cites (None: not recorded)


def _now() -> str:
    # microseconds keep "newest first" stable for messages saved in the same second
    return datetime.now(UTC).isoformat(timespec="microseconds")


class ConversationStore:
    """The conversations database. Safe to share between threads; one connection, one lock."""

    def __init__(self, db_path: Path | str, busy_timeout_ms: int = 15000, read_only: bool = False):
        self.db_path = Path(db_path)
        self.read_only = read_only
        self._lock = threading.RLock()
        if read_only:
            try:
                self._db = connect_read_only(self.db_path, "messages")
            except sqlite3.DatabaseError as exc:
                raise ReadOnlyError(f"the conversations database {self.db_path} cannot be read ({exc})") from None
            return
        if not can_write(self.db_path):
            raise ReadOnlyError(
                f"the conversations database {self.db_path} is read-only: make it and its folder writable"
            )
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            self.db_path, check_same_thread=False, timeout=busy_timeout_ms / 1000, isolation_level=None
        )
        self._db.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(_SCHEMA)  # idempotent; runs in its own transaction
        self._migrate()

    def _migrate(self) -> None:
        """Add the columns an older database lacks (one transaction; other servers wait on it)."""
        with self._tx() as db:
            have = {row[1] for row in db.execute("PRAGMA table_info(messages)")}
            for column, sql in _MIGRATIONS.items():
                if column not in have:
                    db.execute(sql)

    @classmethod
    def in_store(cls, store_dir: Path | str) -> ConversationStore:
        """The conversations database of an index folder."""
        return cls(Path(store_dir) / DB_NAME)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    # ---- transactions ---------------------------------------------------------------------
    def _tx(self):
        store = self

        class _Tx:
            def __enter__(self):
                store._lock.acquire()
                try:
                    # IMMEDIATE takes the write lock up front: no deadlock-prone lock upgrades
                    store._db.execute("BEGIN IMMEDIATE")
                except BaseException:
                    store._lock.release()
                    raise
                return store._db

            def __exit__(self, exc_type, exc, tb):
                try:
                    store._db.execute("ROLLBACK" if exc_type else "COMMIT")
                finally:
                    store._lock.release()
                return False

        return _Tx()

    def _query(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    # ---- conversations --------------------------------------------------------------------
    def create(self, path: str, title: str | None = None) -> ConversationSummary:
        """Start a conversation about the prep file ``path`` (workspace-relative)."""
        now = _now()
        conv = ConversationSummary(
            id=uuid.uuid4().hex, path=path, title=(title or DEFAULT_TITLE)[:200], created_at=now, updated_at=now
        )
        with self._tx() as db:
            db.execute(
                "INSERT INTO conversations(id, path, title, created_at, updated_at) VALUES (?,?,?,?,?)",
                (conv.id, conv.path, conv.title, conv.created_at, conv.updated_at),
            )
        return conv

    _SUMMARY_SQL = (
        "SELECT c.id, c.path, c.title, c.created_at, c.updated_at,"
        " (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) FROM conversations c"
    )

    @staticmethod
    def _summary(row: tuple) -> ConversationSummary:
        cid, path, title, created, updated, count = row
        return ConversationSummary(
            id=cid, path=path, title=title, created_at=created, updated_at=updated, message_count=count
        )

    def list_for(self, path: str) -> list[ConversationSummary]:
        """The conversations about ``path``, most recently updated first."""
        rows = self._query(self._SUMMARY_SQL + " WHERE c.path = ? ORDER BY c.updated_at DESC, c.rowid DESC", (path,))
        return [self._summary(r) for r in rows]

    def get(self, conv_id: str) -> ConversationSummary | None:
        """One conversation's summary, or None."""
        rows = self._query(self._SUMMARY_SQL + " WHERE c.id = ?", (conv_id,))
        return self._summary(rows[0]) if rows else None

    def delete(self, conv_id: str) -> bool:
        """Delete a conversation and its messages; False when there was none."""
        with self._tx() as db:
            db.execute("DELETE FROM messages WHERE conversation_id = ?", (conv_id,))
            return db.execute("DELETE FROM conversations WHERE id = ?", (conv_id,)).rowcount > 0

    def rename_path(self, old: str, new: str) -> int:
        """Move conversations from file ``old`` to ``new`` (a renamed folder moves every file
        under it); returns how many conversations moved."""
        old, new = old.rstrip("/"), new.rstrip("/")
        with self._tx() as db:
            n = db.execute("UPDATE conversations SET path = ? WHERE path = ?", (new, old)).rowcount
            prefix = old + "/"
            n += db.execute(
                "UPDATE conversations SET path = ? || substr(path, ?) WHERE substr(path, 1, ?) = ?",
                (new + "/", len(prefix) + 1, len(prefix), prefix),
            ).rowcount
        return n

    # ---- messages -------------------------------------------------------------------------
    def messages(self, conv_id: str) -> list[StoredMessage]:
        """A conversation's messages in reading order: each question followed by its answer(s), even
        when answers were saved after a later question (two windows asking at once)."""
        rows = self._query(
            f"SELECT id, conversation_id, role, text, citations, outcome, created_at{self._later_cols()}"
            " FROM messages WHERE conversation_id = ? ORDER BY seq",
            (conv_id,),
        )
        saved = [
            StoredMessage(
                id=mid, conversation_id=cid, role=role, text=text,
                citations=[Citation.model_validate(c) for c in json.loads(cits)], outcome=outcome,
                created_at=created, reply_to=reply_to, used=json.loads(used) if used else None,
            )
            for mid, cid, role, text, cits, outcome, created, reply_to, used in rows
        ]
        return _threaded(saved)

    def _later_cols(self) -> str:
        # a read-only database from before a migration cannot be migrated: read it without the column
        if not self.read_only:
            return "".join(f", {c}" for c in _MIGRATIONS)
        have = {row[1] for row in self._query("PRAGMA table_info(messages)")}
        return "".join(f", {c}" if c in have else ", NULL" for c in _MIGRATIONS)

    def add_message(
        self,
        conv_id: str,
        role: Role,
        text: str,
        citations=(),
        outcome: str | None = None,
        reply_to: str | None = None,
        used: Sequence[str] | None = None,
    ) -> StoredMessage:
        """Append a message; it is committed (durably) before this returns. The first user
        message titles a conversation that has no title yet. An answer names the question it
        answers in ``reply_to``. Unknown ``conv_id``: KeyError."""
        if role not in ("user", "assistant"):
            raise ValueError(f"role must be 'user' or 'assistant', not {role!r}")
        cits = [c if isinstance(c, Citation) else Citation.model_validate(c) for c in citations]
        now = _now()
        msg = StoredMessage(
            id=uuid.uuid4().hex, conversation_id=conv_id, role=role, text=text, citations=cits,
            outcome=outcome, created_at=now, reply_to=reply_to, used=list(used) if used is not None else None,
        )
        with self._tx() as db:
            row = db.execute("SELECT title FROM conversations WHERE id = ?", (conv_id,)).fetchone()
            if row is None:
                raise KeyError(f"no conversation {conv_id!r}")
            seq = db.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = ?", (conv_id,)
            ).fetchone()[0]
            db.execute(
                "INSERT INTO messages(id, conversation_id, seq, role, text, citations, outcome, created_at, reply_to,"
                " used) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (msg.id, conv_id, seq, role, text, json.dumps([c.model_dump() for c in cits]), outcome, now, reply_to,
                 json.dumps(msg.used) if msg.used is not None else None),
            )
            title = row[0]
            if role == "user" and title == DEFAULT_TITLE and text.strip():
                title = _title_from(text)
            db.execute("UPDATE conversations SET updated_at = ?, title = ? WHERE id = ?", (now, title, conv_id))
        return msg

    def message(self, message_id: str) -> StoredMessage | None:
        """One message by id, or None."""
        rows = self._query("SELECT conversation_id FROM messages WHERE id = ?", (message_id,))
        if not rows:
            return None
        return next((m for m in self.messages(rows[0][0]) if m.id == message_id), None)

    # ---- export ---------------------------------------------------------------------------
    def export_markdown(self, conv_id: str) -> str:
        """The conversation as a markdown document with each answer's sources. KeyError if unknown."""
        conv = self.get(conv_id)
        if conv is None:
            raise KeyError(f"no conversation {conv_id!r}")
        out = [f"# {conv.title}", "", f"Prep file: `{conv.path}` · started {conv.created_at[:16].replace('T', ' ')} UTC", ""]
        for msg in self.messages(conv_id):
            who = "**You**" if msg.role == "user" else "**gmprep**"
            note = f" _({msg.outcome})_" if msg.outcome and msg.outcome != "answered" else ""
            out += [f"{who}{note}:", "", msg.text.strip(), ""]
            if msg.citations:
                out.append("Sources:")
                out += [f"- {c.label()}" for c in msg.citations]
                out.append("")
        return "\n".join(out).rstrip() + "\n"


def _title_from(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= _TITLE_CHARS:
        return flat
    return flat[:_TITLE_CHARS].rsplit(" ", 1)[0] + " ..."


def _threaded(saved: list[StoredMessage]) -> list[StoredMessage]:
    """Messages in save order -> reading order: an answer right after the question it replies to
    (answers without ``reply_to``, from older databases, stay where they were saved)."""
    questions = {m.id for m in saved if m.role == "user"}
    replies: dict[str, list[StoredMessage]] = {}
    for m in saved:
        if m.role == "assistant" and m.reply_to in questions:
            replies.setdefault(m.reply_to, []).append(m)
    out: list[StoredMessage] = []
    for m in saved:
        if m.role == "assistant" and m.reply_to in questions:
            continue  # placed after its question
        out.append(m)
        out.extend(replies.get(m.id, ()))
    return out
