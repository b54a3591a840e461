"""Bad input never takes the server down: malformed JSON-RPC, unknown methods, bad params, huge and
binary documents, invalid positions. And acknowledged conversation writes survive kill -9."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from lsp_helpers import SERVER_CMD, copy_store
from lsp_rawclient import RawClient


@pytest.fixture()
def raw(tmp_path: Path, store_dir: Path):
    store = copy_store(store_dir, tmp_path / "store")
    client = RawClient([*SERVER_CMD[:-1], "--no-build", "--stdio"], cwd=str(tmp_path))
    init = client.call(
        "initialize",
        {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}, "initializationOptions": {"storeDir": str(store)}},
    )
    assert "capabilities" in init["result"]
    client.notify("initialized", {})
    client.store = store
    yield client
    client.close()


def _alive(client: RawClient) -> None:
    res = client.call("gmprep/status", {})
    assert res["result"]["state"] in ("empty", "building", "ready")


def _wait_names(client: RawClient) -> None:
    for _ in range(300):
        if client.call("gmprep/status", {})["result"]["namesReady"]:
            return
        time.sleep(0.1)
    raise AssertionError("names never loaded")


def test_malformed_json_rpc_and_unknown_methods(raw: RawClient):
    raw.send_body(b"{this is not json")
    raw.send_body(b"\x00\xff\xfe binary garbage \x80")
    raw.send_body(b"[1, 2, 3]")
    raw.send_body(b'"just a string"')
    raw.send_body(b'{"jsonrpc": "1.0", "id": 99, "method": "gmprep/status"}')
    raw.send_bytes(b"Content-Type: nonsense\r\n\r\n")
    raw.send_bytes(b"no headers at all\r\n\r\n")
    _alive(raw)
    unknown = raw.call("gmprep/doesNotExist", {})
    assert unknown["error"]["code"] == -32601
    unknown = raw.call("textDocument/notAThing", {"x": 1})
    assert unknown["error"]["code"] == -32601
    raw.notify("some/unknownNotification", {"x": 1})
    bad = raw.call("textDocument/hover", {"textDocument": {"uri": "file:///x.md"}})  # no position
    assert bad["error"]["code"] == -32602
    bad = raw.call("gmprep/search", {"query": 42, "k": "many"})
    assert bad["error"]["code"] == -32602
    bad = raw.call("gmprep/entry", {"id": "pf2e:nope:nothing"})
    assert "error" in bad
    bad = raw.call("gmprep/conversation", "not an object")
    assert bad["error"]["code"] == -32602
    bad = raw.call("workspace/executeCommand", {"command": "gmprep.insertRuleText", "arguments": ["x"]})
    assert "error" in bad
    _alive(raw)


def test_huge_binary_documents_and_invalid_positions(raw: RawClient, tmp_path: Path):
    _wait_names(raw)
    huge = ("The troll is frightened 2. " * 400_000)[:10_500_000]
    uri = (tmp_path / "huge.md").as_uri()
    raw.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": huge}})
    res = raw.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 15}})
    assert res.get("result") is None and "error" not in res  # too large to scan: no hover, no crash
    binary = "frightened 2\x00\x01\x02\xff" * 1000
    buri = (tmp_path / "bin.md").as_uri()
    raw.notify("textDocument/didOpen", {"textDocument": {"uri": buri, "languageId": "markdown", "version": 1, "text": binary}})
    res = raw.call("textDocument/hover", {"textDocument": {"uri": buri}, "position": {"line": 0, "character": 3}})
    assert res.get("result") is None
    ok_uri = (tmp_path / "ok.md").as_uri()
    raw.notify("textDocument/didOpen", {"textDocument": {"uri": ok_uri, "languageId": "markdown", "version": 1, "text": "He is frightened 2.\n"}})
    for pos in ({"line": 10**6, "character": 0}, {"line": 0, "character": 10**6}, {"line": -1, "character": -5}):
        res = raw.call("textDocument/hover", {"textDocument": {"uri": ok_uri}, "position": pos})
        assert res.get("result") is None or "error" in res
        res = raw.call("textDocument/completion", {"textDocument": {"uri": ok_uri}, "position": pos})
        assert "error" in res or res["result"]["items"] == []
        res = raw.call(
            "textDocument/codeAction",
            {"textDocument": {"uri": ok_uri}, "range": {"start": pos, "end": pos}, "context": {"diagnostics": []}},
        )
        assert "error" in res or res["result"] in (None, [])
    res = raw.call("textDocument/hover", {"textDocument": {"uri": "file:///does/not/exist.md"}, "position": {"line": 0, "character": 0}})
    assert "error" in res or res["result"] is None
    res = raw.call("textDocument/hover", {"textDocument": {"uri": ok_uri}, "position": {"line": 0, "character": 8}})
    assert "pf2e:condition:frightened" in res["result"]["contents"]["value"]
    _alive(raw)


def test_acknowledged_conversations_survive_kill_9(raw: RawClient, tmp_path: Path):
    """A burst of gmprep/conversation/new; kill -9 mid-burst; every acknowledged one is on disk."""
    acked: list[str] = []
    ids = [raw.request("gmprep/conversation/new", {"uri": (tmp_path / f"n{i}.md").as_uri(), "title": f"t{i}"}) for i in range(200)]
    for msg_id in ids[:60]:
        acked.append(raw.response(msg_id)["result"]["conversation"]["id"])
    os.kill(raw.proc.pid, signal.SIGKILL)
    raw.proc.wait()
    db = sqlite3.connect(raw.store / "conversations.db")
    saved = {row[0] for row in db.execute("SELECT id FROM conversations")}
    db.close()
    assert len(acked) == 60 and set(acked) <= saved
