"""The full-entry files hovers link to are written after the index is ready (issue 9: the writer
process was started from the short-lived index thread, got its parent-death SIGTERM when that thread
ended, and the -15 exit was taken as normal, so no file was ever written and hovers lost the link)."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import (
    CAPS,
    PREP_NOTE,
    SERVER_CMD,
    copy_store,
    make_client,
    open_doc,
    position_of,
    wait_status,
)
from lsprotocol import types as lsp
from pygls.uris import to_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient

from gmprep.server.entries import EntryFiles
from gmprep.server.state import ServerState


@pytest.fixture()
def fresh_store(store_dir: Path, tmp_path: Path) -> Path:
    return copy_store(store_dir, tmp_path / "store")  # no entries/ folder: the server must write it


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_CMD, client_factory=make_client))
async def fresh(lsp_client: LanguageClient, fresh_store: Path, tmp_path: Path):
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=CAPS, root_uri=tmp_path.as_uri(),
            initialization_options={"storeDir": str(fresh_store), "llm": {"backend": "extractive"}},
        )
    )
    await wait_status(lsp_client, "ready")
    yield
    await lsp_client.shutdown_session()


@pytest.mark.slow
async def test_hover_links_to_a_written_full_entry_file(fresh, fresh_store: Path, tmp_path: Path):
    client = fresh
    note = tmp_path / "session.md"
    note.write_text(PREP_NOTE, encoding="utf-8")
    uri = open_doc(client, note)
    pos = position_of(PREP_NOTE, "frightened 2")
    link = None
    for _ in range(600):  # the writer renders ~5,400 entries at low priority: allow it minutes
        h = await client.text_document_hover_async(
            lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=pos)
        )
        found = re.search(r"\[Open full entry\]\((file://[^)]+)\)", h.contents.value) if h else None
        if found:
            link = found.group(1)
            break
        await asyncio.sleep(0.5)
    assert link is not None, "the hover never linked to a full-entry file"
    path = Path(to_fs_path(link))
    assert path.is_file() and path.parent == fresh_store / "entries"
    assert "Frightened" in path.read_text(encoding="utf-8")


def test_a_writer_that_dies_is_an_error_not_a_normal_exit(tmp_path: Path):
    """The writer's exit status is judged: a signal or failure is reported, a success is not."""
    state = ServerState()
    state.settings = state.settings.merged({"store_dir": str(tmp_path / "not-a-store")})
    errors: list[str] = []
    entries = EntryFiles(state, on_error=errors.append)
    assert entries.start_background()
    for _ in range(600):
        if errors:
            break
        time.sleep(0.1)
    assert errors and "writing the full-entry files failed (exit status 1)" in errors[0]
    assert "no index" in errors[0]  # the writer's own last words, on one line
