"""The wire protocol has one source (server/models.py): the generated TypeScript types and doc tables are
fresh, every method in the tables is served, and what a real server sends has exactly the declared keys."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from lsp_helpers import SERVER_CMD, copy_store
from lsp_rawclient import RawClient

from gmprep.server import protocol_gen
from gmprep.server.app import create_server
from gmprep.server.models import (
    COMMANDS,
    NOTIFICATIONS,
    REQUESTS,
    CitationOut,
    ConversationOut,
    HitOut,
    MessageOut,
    TraceStepOut,
    Wire,
)


def test_generated_files_are_fresh():
    assert protocol_gen.main(["--check"]) == 0, "run: python -m gmprep.server.protocol_gen"


def test_check_fails_on_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    ts = tmp_path / "protocol.ts"
    doc = tmp_path / "protocol.md"
    ts.write_text(protocol_gen.TS_PATH.read_text(encoding="utf-8").replace("namesReady", "namesOK"), encoding="utf-8")
    doc.write_text(protocol_gen.DOC_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(protocol_gen, "TS_PATH", ts)
    monkeypatch.setattr(protocol_gen, "DOC_PATH", doc)
    monkeypatch.setattr(protocol_gen, "ROOT", tmp_path)
    assert protocol_gen.main(["--check"]) == 1
    assert "protocol.ts is stale" in capsys.readouterr().err
    assert protocol_gen.main([]) == 0  # regenerates
    assert protocol_gen.main(["--check"]) == 0
    assert "namesReady" in ts.read_text(encoding="utf-8")


def test_typescript_keeps_the_server_s_types():
    ts = protocol_gen.TS_PATH.read_text(encoding="utf-8")
    # the drift this generator fixed: StatusResult lacked namesReady/percentage; page was number | string
    assert "namesReady: boolean;" in ts and "percentage: number | null;" in ts
    assert "page: string | null;" in ts and "page: number" not in ts


def test_every_method_in_the_tables_is_registered():
    server = create_server(build_index=False)
    features = set(server.protocol.fm.features)
    commands = set(server.protocol.fm.commands)
    assert {r.method for r in REQUESTS} <= features
    served = {c.command for c in COMMANDS if c.result is not None}
    assert served <= commands
    custom = {f for f in features if f.startswith("gmprep/")}
    assert custom == {r.method for r in REQUESTS}, "a gmprep/* request is served but missing from models.REQUESTS"


class RecordingClient(RawClient):
    """A raw JSON-RPC client that keeps the server's notifications."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.notifications: list[dict] = []

    def response(self, msg_id: int, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            msg = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
            if msg.get("id") == msg_id and ("result" in msg or "error" in msg):
                return msg
            if "method" in msg and "id" in msg:
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            elif "method" in msg:
                self.notifications.append(msg)


def _exact(model: type[Wire], payload: dict) -> None:
    """``payload`` validates as ``model`` and has exactly its keys, nested models included."""
    keys = {f.alias or name for name, f in model.model_fields.items()}
    assert set(payload) == keys, f"{model.__name__}: sent {sorted(payload)}, declared {sorted(keys)}"
    model.model_validate(payload)


def test_a_real_server_sends_exactly_the_declared_shapes(tmp_path: Path, store_dir: Path):
    store = copy_store(store_dir, tmp_path / "store")
    client = RecordingClient([*SERVER_CMD[:-1], "--no-build", "--stdio"], cwd=str(tmp_path))
    try:
        client.call("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
                                   "initializationOptions": {"storeDir": str(store)}})
        client.notify("initialized", {})
        results = {r.method: r.result for r in REQUESTS}
        for _ in range(600):
            status = client.call("gmprep/status", {})["result"]
            if status["state"] == "ready" and status["namesReady"]:
                break
            time.sleep(0.1)
        _exact(results["gmprep/status"], status)
        note = (tmp_path / "note.md").as_uri()
        sent = {
            "gmprep/search": {"query": "frightened", "k": 2},
            "gmprep/entry": {"id": "pf2e:condition:frightened"},
            "gmprep/ask": {"question": "What does frightened do?", "uri": note},
        }
        got = {m: client.call(m, p, timeout=180)["result"] for m, p in sent.items()}
        conv_id = got["gmprep/ask"]["conversationId"]
        answer_id = got["gmprep/ask"]["answer"]["id"]
        more = {
            "gmprep/conversations": {"uri": note},
            "gmprep/conversation": {"id": conv_id},
            "gmprep/trace": {"messageId": answer_id},
            "gmprep/conversation/export": {"id": conv_id},
            "gmprep/conversation/new": {"uri": note, "title": "second"},
            "gmprep/conversation/delete": {"id": conv_id},
        }
        got |= {m: client.call(m, p)["result"] for m, p in more.items()}
        for method, result in got.items():
            _exact(results[method], result)
        # nested shapes too
        _exact(HitOut, got["gmprep/search"]["hits"][0])
        _exact(CitationOut, got["gmprep/entry"]["citation"])
        for message in (got["gmprep/ask"]["userMessage"], got["gmprep/ask"]["answer"]):
            _exact(MessageOut, message)
        _exact(ConversationOut, got["gmprep/conversation"]["conversation"])
        for step in got["gmprep/trace"]["steps"]:
            _exact(TraceStepOut, step)
        payloads = {n.method: n.payload for n in NOTIFICATIONS}
        seen = {n["method"] for n in client.notifications if n["method"] in payloads}
        assert seen == set(payloads), f"notifications seen: {seen}"
        for n in client.notifications:
            if n["method"] in payloads:
                _exact(payloads[n["method"]], n["params"])
    finally:
        client.close()
