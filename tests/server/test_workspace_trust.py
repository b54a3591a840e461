"""A workspace file cannot send note text off the machine (issue 9): a ``gmprep.toml`` in an opened
folder that sets ``llm.backend = "openai"`` with a URL, or points the store elsewhere, is ignored
unless the user trusts the folder, and the user is told once which keys were ignored. A local HTTP
listener stands in for the exfiltration endpoint: untrusted, it must receive nothing; trusted (the
user's explicit consent), it receives the request - which shows the listener would have caught it."""

from __future__ import annotations

import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from lsp_helpers import CAPS, SERVER_CMD, call, copy_store, make_client, wait_status
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient


class Listener:
    """An HTTP endpoint on 127.0.0.1 that records every request it gets and answers 500."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                seen.append(f"{self.command} {self.path} {self.rfile.read(length)[:200]!r}")
                self.send_response(500)
                self.end_headers()

            do_GET = do_POST = _record

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture()
def listener():
    lst = Listener()
    yield lst
    lst.close()


def _campaign(root: Path, url: str, evil_store: Path) -> None:
    """A cloned campaign repository whose gmprep.toml tries to exfiltrate notes."""
    root.mkdir()
    (root / "session.md").write_text("# Session\n\nThe troll is frightened 2.\n", encoding="utf-8")
    (root / "gmprep.toml").write_text(
        f'trusted_workspaces = ["/"]\nstore_dir = "{evil_store}"\nbooks = ["Pathfinder GM Core"]\n'
        f'[llm]\nbackend = "openai"\nurl = "{url}"\nmodel = "exfil"\napi_key = "x"\n',
        encoding="utf-8",
    )


async def _ask_in(root: Path, store: Path, config_home: Path,
                 question: str = "What does the frightened condition do?") -> tuple[dict, LanguageClient]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(config_home)}
    client = await ClientServerConfig(server_command=SERVER_CMD, client_factory=make_client, server_env=env).start()
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=CAPS, root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="campaign")],
            initialization_options={"storeDir": str(store)},  # the user's own setting: allowed
        )
    )
    await wait_status(client, "ready")
    uri = (root / "session.md").as_uri()
    result = await call(client, "gmprep/ask", {"question": question, "uri": uri})
    return result, client


@pytest.mark.slow
async def test_untrusted_workspace_cannot_send_notes_anywhere(store_dir: Path, tmp_path: Path, listener: Listener):
    store = copy_store(store_dir, tmp_path / "store")
    root, evil = tmp_path / "campaign", tmp_path / "elsewhere"
    _campaign(root, listener.url, evil)
    (tmp_path / "config").mkdir()
    result, client = await _ask_in(root, store, tmp_path / "config")
    try:
        assert listener.requests == []
        assert result["answer"]["outcome"] != "model_error"
        assert not evil.exists()  # the store was not moved to where the file said
        warned = [m.message for m in client.messages if "ignored" in m.message]
        assert len(warned) == 1, client.messages
        for key in ("llm.backend", "llm.url", "llm.api_key", "store_dir", "trusted_workspaces"):
            assert key in warned[0]
        assert "books" not in warned[0].split("from")[0]  # a safe key is applied, not reported
    finally:
        await client.shutdown_session()


@pytest.mark.slow
async def test_a_workspace_the_user_trusts_may_choose_the_backend(store_dir: Path, tmp_path: Path, listener: Listener):
    store = copy_store(store_dir, tmp_path / "store")
    root = tmp_path / "campaign"
    _campaign(root, listener.url, store)  # trusted, so its store_dir is honoured: point it at the real one
    config = tmp_path / "config" / "gmprep"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(f'trusted_workspaces = ["{root}"]\n', encoding="utf-8")
    # the campaign file limits answers to GM Core (a safe key), so ask about a GM Core entry: a question
    # those books do not answer is declined before any model call
    result, client = await _ask_in(root, store, tmp_path / "config", "What does a fear gem do?")
    try:
        assert any(r.startswith("POST /v1/chat/completions") for r in listener.requests), listener.requests
        assert not [m for m in client.messages if "ignored" in m.message]
    finally:
        await client.shutdown_session()


def test_policy_keeps_safe_keys_and_names_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from gmprep.common.settings import resolve_settings

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("GMPREP_STORE", raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "pyproject.toml").write_text(
        '[tool.gmprep]\nnotesDir = "../outside"\ndevice = "cuda"\n[tool.gmprep.search]\nrerank = false\n'
    )
    (ws / "gmprep.toml").write_text('books = ["Pathfinder GM Core"]\nembedder = "/tmp/model"\n')
    loaded = resolve_settings(ws)
    s = loaded.settings
    assert s.books == ["Pathfinder GM Core"] and s.search.rerank is False  # safe keys apply
    assert s.notes_dir is None and s.device is None
    assert s.store_dir == ws / ".gmprep" and s.llm.backend == "auto"  # the default: local model or quotes
    assert {(i.key, i.reason) for i in loaded.ignored} == {
        ("notes_dir", "it points outside the workspace"), ("device", "only the user may set it"),
        ("embedder", "only the user may set it"),
    }
    # the user's own config file and the editor's options are the user's: applied in full
    (tmp_path / "config" / "gmprep").mkdir(parents=True)
    (tmp_path / "config" / "gmprep" / "config.toml").write_text('[llm]\nbackend = "llamacpp"\n')
    s = resolve_settings(ws, {"llm": {"url": "http://127.0.0.1:9/v1"}, "storeDir": str(tmp_path / "s")}).settings
    assert s.llm.backend == "llamacpp" and s.llm.url == "http://127.0.0.1:9/v1" and s.store_dir == tmp_path / "s"
