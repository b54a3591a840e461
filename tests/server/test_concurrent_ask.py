"""Two editor windows (two servers over one store) asking in the same conversation at once: every
answer is saved linked to its question and the conversation reads back question, its answer, next
question ... (issue 9: it used to read question, question, answer, answer in 6 of 6 rounds)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import CAPS, SERVER_CMD, call, copy_store, make_client, wait_status
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

QUESTIONS = [
    ("What does the frightened condition do?", "How does the prone condition affect attacks?"),
    ("What happens when I Trip a creature?", "What does off-guard mean?"),
    ("How does Demoralize work?", "What does the Balance action do?"),
]  # three rounds: the old bug showed in every round (6 of 6), so three catch it; each round costs ~10 s


async def _window(store: Path, root: Path) -> LanguageClient:
    client = await ClientServerConfig(server_command=SERVER_CMD, client_factory=make_client).start()
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=CAPS, root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="prep")],
            initialization_options={"storeDir": str(store), "llm": {"backend": "extractive"}},
        )
    )
    await wait_status(client, "ready")
    return client


@pytest.mark.slow
async def test_two_windows_asking_at_once_read_back_in_order(store_dir: Path, tmp_path: Path):
    store = copy_store(store_dir, tmp_path / "store")
    root = tmp_path / "prep"
    root.mkdir()
    (root / "session.md").write_text("# Session\n", encoding="utf-8")
    uri = (root / "session.md").as_uri()
    windows = [await _window(store, root), await _window(store, root)]
    try:
        conv = (await call(windows[0], "gmprep/conversation/new", {"uri": uri}))["conversation"]
        for pair in QUESTIONS:
            await asyncio.gather(*(
                call(w, "gmprep/ask", {"question": q, "uri": uri, "conversationId": conv["id"]})
                for w, q in zip(windows, pair, strict=True)
            ))
        for w in windows:  # both windows read the same history
            saved = (await call(w, "gmprep/conversation", {"id": conv["id"]}))["messages"]
            assert len(saved) == 4 * len(QUESTIONS)
            assert [m["role"] for m in saved] == ["user", "assistant"] * (2 * len(QUESTIONS))
            for question, answer in zip(saved[::2], saved[1::2], strict=True):
                assert answer["replyTo"] == question["id"]
            asked = [m["text"] for m in saved[::2]]
            assert sorted(asked) == sorted(q for pair in QUESTIONS for q in pair)
    finally:
        for w in windows:
            await w.shutdown_session()
