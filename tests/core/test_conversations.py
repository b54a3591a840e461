"""ConversationStore on a real SQLite file: CRUD, ordering, rename, export, two writers, kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

from gmprep.core.conversations import DEFAULT_TITLE, ConversationStore
from gmprep.kg.models import Citation

FRIGHTENED = Citation(
    source_id="pf2e:condition:frightened", name="Frightened", type="condition", book="Pathfinder Player Core"
)


@pytest.fixture()
def store(tmp_path):
    s = ConversationStore.in_store(tmp_path)
    yield s
    s.close()


def test_create_add_list_get_and_title(store):
    conv = store.create("prep/session-03.md")
    assert conv.title == DEFAULT_TITLE and conv.message_count == 0
    user = store.add_message(conv.id, "user", "How long does frightened last?")
    ans = store.add_message(conv.id, "assistant", "It drops by 1 each turn.", [FRIGHTENED], outcome="answered")
    msgs = store.messages(conv.id)
    assert [m.id for m in msgs] == [user.id, ans.id]
    assert msgs[1].citations == [FRIGHTENED] and msgs[1].outcome == "answered"
    got = store.get(conv.id)
    assert got.title == "How long does frightened last?" and got.message_count == 2
    assert store.message(ans.id).text == "It drops by 1 each turn."
    other = store.create("prep/session-03.md", title="Loot")
    store.add_message(other.id, "user", "later question")
    assert [c.id for c in store.list_for("prep/session-03.md")] == [other.id, conv.id]
    assert store.get(other.id).title == "Loot"  # an explicit title is kept
    assert store.list_for("prep/other.md") == []


def test_errors_on_unknown_conversation_and_role(store):
    with pytest.raises(KeyError):
        store.add_message("nope", "user", "hi")
    conv = store.create("a.md")
    with pytest.raises(ValueError):
        store.add_message(conv.id, "system", "hi")
    with pytest.raises(KeyError):
        store.export_markdown("nope")
    assert store.get("nope") is None


def test_delete_and_rename(store):
    a = store.create("notes/a.md")
    b = store.create("notes/sub/b.md")
    store.add_message(a.id, "user", "q")
    assert store.rename_path("notes/a.md", "notes/a2.md") == 1
    assert [c.id for c in store.list_for("notes/a2.md")] == [a.id]
    assert store.rename_path("notes/sub", "archive/sub") == 1
    assert [c.id for c in store.list_for("archive/sub/b.md")] == [b.id]
    assert store.delete(a.id) is True
    assert store.delete(a.id) is False
    assert store.messages(a.id) == []


def test_export_markdown_has_messages_and_sources(store):
    conv = store.create("x.md")
    store.add_message(conv.id, "user", "Frightened?")
    store.add_message(conv.id, "assistant", "A status penalty.", [FRIGHTENED], outcome="answered")
    md = store.export_markdown(conv.id)
    assert md.startswith("# Frightened?")
    assert "A status penalty." in md
    assert "- Frightened (Pathfinder Player Core) [pf2e:condition:frightened]" in md


def test_two_connections_write_the_same_file(tmp_path):
    one, two = ConversationStore.in_store(tmp_path), ConversationStore.in_store(tmp_path)
    conv = one.create("shared.md")

    def burst(s, tag):
        for i in range(40):
            s.add_message(conv.id, "user", f"{tag}{i}")

    threads = [threading.Thread(target=burst, args=(s, t)) for s, t in ((one, "a"), (two, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    texts = [m.text for m in two.messages(conv.id)]
    assert len(texts) == 80 and len(set(texts)) == 80
    one.close()
    two.close()


WRITER = textwrap.dedent(
    """
    import sys
    from gmprep.core.conversations import ConversationStore
    s = ConversationStore.in_store(sys.argv[1])
    conv = s.create("crash.md")
    print("conv", conv.id, flush=True)
    i = 0
    while True:
        m = s.add_message(conv.id, "user" if i % 2 == 0 else "assistant", "message %d" % i)
        print("ack", m.id, flush=True)
        i += 1
    """
)


def test_acknowledged_messages_survive_kill_9(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    acked: list[str] = []
    conv_id = None
    try:
        for line in proc.stdout:
            kind, value = line.split()
            if kind == "conv":
                conv_id = value
            else:
                acked.append(value)
            if len(acked) >= 150:
                os.kill(proc.pid, signal.SIGKILL)
                break
    finally:
        proc.kill()
        proc.wait()
    assert conv_id and len(acked) >= 150
    reopened = ConversationStore.in_store(tmp_path)
    saved = {m.id for m in reopened.messages(conv_id)}
    assert set(acked) <= saved
    reopened.close()


def test_used_sources_are_kept_and_an_older_database_gains_the_column(tmp_path):
    import sqlite3

    db_path = tmp_path / "old.db"
    old = sqlite3.connect(db_path)  # a database from before ``used``
    old.executescript(
        "CREATE TABLE conversations(id TEXT PRIMARY KEY, path TEXT NOT NULL, title TEXT NOT NULL,"
        " created_at TEXT NOT NULL, updated_at TEXT NOT NULL);"
        "CREATE TABLE messages(id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL, seq INTEGER NOT NULL,"
        " role TEXT NOT NULL, text TEXT NOT NULL, citations TEXT NOT NULL DEFAULT '[]', outcome TEXT,"
        " created_at TEXT NOT NULL, reply_to TEXT);"
        "INSERT INTO conversations VALUES('c0', 'a.md', 'Old', '2026-01-01', '2026-01-01');"
        "INSERT INTO messages VALUES('m0', 'c0', 1, 'assistant', 'Old answer.', '[]', 'answered', '2026-01-01', NULL);"
    )
    old.commit()
    old.close()
    convs = ConversationStore(db_path)
    try:
        assert convs.messages("c0")[0].used is None  # not recorded then: the panel dims nothing
        q = convs.add_message("c0", "user", "What does prone do?")
        a = convs.add_message("c0", "assistant", "You lie down [2].", [], "answered", reply_to=q.id,
                              used=["pf2e:condition:prone"])
        assert a.used == ["pf2e:condition:prone"]
        again = ConversationStore(db_path)
        try:
            assert [m.used for m in again.messages("c0")] == [None, None, ["pf2e:condition:prone"]]
        finally:
            again.close()
    finally:
        convs.close()
