"""Helpers shared by the language-server tests: the server command, a prep note, client
capabilities, a test client that records what gmprep sends, and small request helpers."""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient
from pytest_lsp.client import make_test_lsp_client

SERVER_CMD = [sys.executable, "-m", "gmprep", "lsp", "--stdio"]

PREP_NOTE = """# Session 4 -- The Rope Bridge

Party: Tovan (fighter), Mirelle (Leshy druid), Skrit (Charhide Goblin rogue).

- 4 goblin warriors hide in the brush; one is an owlbear in disguise (homebrew).
- If Tovan uses Demoralize and crits, the troll is frightened 2.
- The log is slippery: anyone on it is flat-footed until they Balance.
- Aldo prepared *fireball* and *sanctuary*.
- A crate of Phoenix Down sits on the cart.

```
frightened 3 inside code is not a rule reference
```
"""

HOUSE_RULES = """# House rules

## Cinderglass Amulet

A homebrew trinket: once per day, gain resistance 2 to fire for 1 minute.
"""

CAPS = lsp.ClientCapabilities(
    window=lsp.WindowClientCapabilities(work_done_progress=True),
    workspace=lsp.WorkspaceClientCapabilities(configuration=True, apply_edit=True),
    text_document=lsp.TextDocumentClientCapabilities(
        hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.Markdown]),
        completion=lsp.CompletionClientCapabilities(
            completion_item=lsp.ClientCompletionItemOptions(documentation_format=[lsp.MarkupKind.Markdown])
        ),
    ),
)


def as_dict(obj):
    """Custom results arrive as namedtuples: back to plain dicts and lists."""
    if hasattr(obj, "_asdict"):
        return {k: as_dict(v) for k, v in obj._asdict().items()}
    if isinstance(obj, list | tuple):
        return [as_dict(v) for v in obj]
    return obj


async def call(client: LanguageClient, method: str, params: dict | None = None) -> dict:
    """A custom ``gmprep/*`` request, result as a dict."""
    return as_dict(await client.protocol.send_request_async(method, params or {}))


async def wait_status(client: LanguageClient, want: str = "ready", timeout: float = 120.0) -> dict:
    """Poll ``gmprep/status`` until the index is in state ``want`` and the names are loaded."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        status = await call(client, "gmprep/status")
        if status["state"] == want and status["namesReady"]:
            return status
        if loop.time() > deadline:
            raise AssertionError(f"server never reached {want}: {status}")
        await asyncio.sleep(0.1)


def make_client() -> LanguageClient:
    """The pytest-lsp test client plus handlers for what gmprep sends: edits and notifications."""
    client = make_test_lsp_client()
    client.applied_edits = []
    client.answer_deltas = []
    client.answer_sources = []
    client.answer_events = []  # (method, params, time.monotonic()) of both answer notifications, in arrival order
    client.index_states = []

    @client.feature(lsp.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        client.applied_edits.append(params.edit)
        return lsp.ApplyWorkspaceEditResult(applied=True)

    @client.feature("gmprep/answerDelta")
    def answer_delta(params) -> None:
        client.answer_deltas.append(as_dict(params))
        client.answer_events.append(("gmprep/answerDelta", as_dict(params), time.monotonic()))

    @client.feature("gmprep/answerSources")
    def answer_sources(params) -> None:
        client.answer_sources.append(as_dict(params))
        client.answer_events.append(("gmprep/answerSources", as_dict(params), time.monotonic()))

    @client.feature("gmprep/indexState")
    def index_state(params) -> None:
        client.index_states.append(as_dict(params))

    return client


def copy_store(src: Path, dst: Path) -> Path:
    """A private copy of a built store (no conversations, no rendered entries)."""
    shutil.copytree(
        src, dst, ignore=shutil.ignore_patterns("READY", "*-wal", "*-shm", "conversations.db*", "entries")
    )
    return dst


def open_doc(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    """didOpen a markdown file; returns its URI."""
    uri = path.as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=uri, language_id="markdown", version=version,
                text=path.read_text(encoding="utf-8") if text is None else text,
            )
        )
    )
    return uri


def position_of(text: str, needle: str, nth: int = 0) -> lsp.Position:
    """The LSP position of the ``nth`` occurrence of ``needle`` (ASCII text)."""
    idx = -1
    for _ in range(nth + 1):
        idx = text.index(needle, idx + 1)
    line = text.count("\n", 0, idx)
    return lsp.Position(line=line, character=idx - (text.rfind("\n", 0, idx) + 1))


