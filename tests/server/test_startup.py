"""Starting on an empty store: the index builds in the background with work-done progress while
hovers on exact names already work from the bundled corpus."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import CAPS, SERVER_CMD, call, make_client, open_doc, position_of
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient


@pytest.fixture()
def empty_store(tmp_path: Path) -> Path:
    return tmp_path / "fresh-store"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_CMD, client_factory=make_client))
async def fresh(lsp_client: LanguageClient, empty_store: Path, tmp_path: Path):
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=CAPS, root_uri=tmp_path.as_uri(), initialization_options={"storeDir": str(empty_store)}
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_missing_index_builds_in_background_and_hover_works_meanwhile(fresh, tmp_path: Path):
    client = fresh
    note = tmp_path / "prep.md"
    text = "The wolf knocks him prone; he is frightened 1.\n"
    note.write_text(text, encoding="utf-8")
    uri = open_doc(client, note)
    # progress: a work-done token is created and begun with our title
    for _ in range(600):
        begun = [
            v for reports in client.progress_reports.values() for v in reports if isinstance(v, lsp.WorkDoneProgressBegin)
        ]
        if begun:
            break
        await asyncio.sleep(0.1)
    assert begun and begun[0].title == "gmprep: building the rules index"
    status = await call(client, "gmprep/status")
    assert status["state"] == "building"
    assert any(s["state"] == "building" for s in client.index_states)
    hover = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=position_of(text, "frightened"))
    )
    assert hover is not None and "`pf2e:condition:frightened`" in hover.contents.value
    # search needs the finished index: a clear error, not a hang
    with pytest.raises(Exception, match="building"):
        await call(client, "gmprep/search", {"query": "frightened"})
