"""Asking inside a conversation (``gmprep.core.exchange``) on real SQLite: answers are linked to their
questions and read back in order; an old database is migrated in place; the CLI saves the question
before answering (a killed ``gmprep ask`` keeps it) and always saves the trace; a read-only
conversations database is a one-line error, and ``--no-save`` works with it."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gmprep.cli import main
from gmprep.core import exchange
from gmprep.core.conversations import ConversationStore
from gmprep.core.traces import TraceStep, TraceStore

# The conversations schema before answers named their question (gmprep 0.x databases).
OLD_SCHEMA = """
CREATE TABLE conversations(id TEXT PRIMARY KEY, path TEXT NOT NULL, title TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE messages(id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL, citations TEXT NOT NULL DEFAULT '[]', outcome TEXT,
  created_at TEXT NOT NULL);
INSERT INTO conversations VALUES ('c1', 'prep/a.md', 'Old', '2025-01-01T00:00:00', '2025-01-01T00:00:00');
INSERT INTO messages VALUES ('m1', 'c1', 1, 'user', 'What is prone?', '[]', NULL, '2025-01-01T00:00:00');
INSERT INTO messages VALUES ('m2', 'c1', 2, 'assistant', 'You lie on the ground.', '[]', 'answered', '2025-01-01T00:00:01');
"""


def _read_only_cmd() -> list[str]:
    """A prefix that runs a command without write access to files it does not own the write bit of:
    plain for a normal user; for root, without CAP_DAC_OVERRIDE (root ignores file modes otherwise)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot take away write access")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


def test_interleaved_exchanges_read_back_in_order(tmp_path: Path):
    convs = ConversationStore.in_store(tmp_path)
    conv = convs.create("prep/a.md")
    a = exchange.begin(convs, "Question A", "prep/a.md", conv.id)
    b = exchange.begin(convs, "Question B", "prep/a.md", conv.id)  # a second window, before A is answered
    assert b.history == []  # A has no answer yet: not part of what B follows on from
    traces = TraceStore(convs.db_path)
    ans_a = exchange.finish(convs, traces, a, "Answer A", [], "answered", [TraceStep(name="search")])
    exchange.finish(convs, traces, b, "Answer B", [], "answered")
    msgs = convs.messages(conv.id)
    assert [m.text for m in msgs] == ["Question A", "Answer A", "Question B", "Answer B"]
    assert msgs[1].reply_to == msgs[0].id and msgs[3].reply_to == msgs[2].id
    assert [s.name for s in traces.load(ans_a.id)] == ["search"]
    c = exchange.begin(convs, "Question C", "prep/a.md", conv.id)
    assert [t.content for t in c.history] == ["Question A", "Answer A", "Question B", "Answer B"]
    with pytest.raises(exchange.UnknownConversation):
        exchange.begin(convs, "?", "prep/a.md", "nope")


def test_an_old_database_is_migrated_in_place(tmp_path: Path):
    db = tmp_path / "conversations.db"
    with sqlite3.connect(db) as old:
        old.executescript(OLD_SCHEMA)
    convs = ConversationStore(db)
    assert [m.text for m in convs.messages("c1")] == ["What is prone?", "You lie on the ground."]
    ex = exchange.begin(convs, "And standing up?", "prep/a.md", "c1")
    assert [t.role for t in ex.history] == ["user", "assistant"]
    exchange.finish(convs, None, ex, "Stand.", [], "answered")
    assert [m.reply_to for m in convs.messages("c1")] == [None, None, None, ex.question.id]
    convs.close()
    assert ConversationStore(db).messages("c1")[-1].text == "Stand."  # opens again, migrated once


def _listener() -> socket.socket:
    """A TCP endpoint that accepts and never answers: an answer backend that hangs."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    return sock


def test_a_killed_cli_keeps_the_question(store_dir: Path, tmp_path: Path):
    store = tmp_path / "store"
    shutil.copytree(store_dir, store, ignore=shutil.ignore_patterns("READY", "*-wal", "*-shm"))
    hang = _listener()
    url = f"http://127.0.0.1:{hang.getsockname()[1]}/v1"
    proc = subprocess.Popen(
        [sys.executable, "-m", "gmprep", "--store", str(store), "ask", "What does prone do?", "--file", "a.md",
         "--backend", "openai", "--url", url, "--model", "m"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        hang.settimeout(240)
        conn, _ = hang.accept()  # the CLI is now waiting on the model
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        conn.close()
    finally:
        hang.close()
        if proc.poll() is None:
            proc.kill()
    convs = ConversationStore.in_store(store)
    [conv] = convs.list_for("a.md")
    assert [(m.role, m.text) for m in convs.messages(conv.id)] == [("user", "What does prone do?")]


def test_cli_saves_the_trace_and_links_the_answer(store_dir: Path, tmp_path: Path, capsys, monkeypatch):
    store = tmp_path / "store"
    shutil.copytree(store_dir, store, ignore=shutil.ignore_patterns("READY", "*-wal", "*-shm"))
    monkeypatch.chdir(tmp_path)
    assert main(["--store", str(store), "ask", "What does prone do?", "--backend", "extractive"]) == 0
    convs = ConversationStore.in_store(store)
    [conv] = convs.list_for("(cli)")
    question, answer = convs.messages(conv.id)
    assert answer.reply_to == question.id
    assert TraceStore.in_store(store).load(answer.id)  # the trace is saved with the answer


@pytest.mark.slow
def test_read_only_conversations_database(store_dir: Path, tmp_path: Path):
    prefix = _read_only_cmd()
    store = tmp_path / "store"
    shutil.copytree(store_dir, store, ignore=shutil.ignore_patterns("READY", "*-wal", "*-shm"))
    convs = ConversationStore.in_store(store)
    conv = convs.create("(cli)")
    ex = exchange.begin(convs, "What does prone do?", "(cli)", conv.id)
    exchange.finish(convs, None, ex, "You lie down.", [], "answered")
    convs.close()
    for p in [store, *store.iterdir()]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        base = [*prefix, sys.executable, "-m", "gmprep", "--store", str(store), "ask", "How do I stand up?",
                "--backend", "extractive"]
        saving = subprocess.run(base, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert saving.returncode == 1 and "Traceback" not in saving.stderr
        assert saving.stderr.strip().splitlines() == [
            f"gmprep: error: the conversations database {store / 'conversations.db'} is read-only: make it and "
            "its folder writable, or ask with --no-save"
        ]
        quiet = subprocess.run([*base, "--no-save", "--conversation", conv.id], cwd=tmp_path, capture_output=True,
                               text=True, timeout=300)
        assert quiet.returncode == 0, quiet.stderr
        assert "Traceback" not in quiet.stderr and "[pf2e:action:stand]" in quiet.stdout
    finally:
        for p in [store, *store.iterdir()]:
            p.chmod(0o755 if p.is_dir() else 0o644)


def test_history_skips_a_question_still_waiting(tmp_path: Path):
    convs = ConversationStore.in_store(tmp_path)
    conv = convs.create("x")
    convs.add_message(conv.id, "user", "lost when the CLI was killed")
    done = exchange.begin(convs, "asked again", "x", conv.id)
    exchange.finish(convs, None, done, "answered", [], "answered")
    assert [t.content for t in exchange.history(convs, conv.id)] == ["asked again", "answered"]
