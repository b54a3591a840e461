"""Fixtures for end-to-end language-server tests: a private copy of the session store, a
workspace with a prep note and a notes folder, and a pytest-lsp client talking to ``gmprep lsp``
over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import CAPS, HOUSE_RULES, PREP_NOTE, SERVER_CMD, copy_store, make_client, wait_status
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient


@pytest.fixture(scope="module")
def lsp_store(store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A writable copy of the session store for one test module's server."""
    return copy_store(store_dir, tmp_path_factory.mktemp("lsp") / "store")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A prep folder: one session note and a notes/ folder of house rules."""
    root = tmp_path_factory.mktemp("workspace")
    (root / "session-04.md").write_text(PREP_NOTE, encoding="utf-8")
    (root / "notes").mkdir()
    (root / "notes" / "house-rules.md").write_text(HOUSE_RULES, encoding="utf-8")
    return root


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_CMD, client_factory=make_client), scope="module")
async def client(lsp_client: LanguageClient, lsp_store: Path, workspace: Path):
    """A running ``gmprep lsp`` on the module's store copy and workspace, index ready."""
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=CAPS,
            root_uri=workspace.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=workspace.as_uri(), name="prep")],
            initialization_options={"storeDir": str(lsp_store), "notesDir": "notes", "llm": {"backend": "extractive"}},
        )
    )
    await wait_status(lsp_client, "ready")
    yield
    await lsp_client.shutdown_session()


@pytest.fixture()
def fresh_store(store_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the session store for one test (no conversations, no entry files)."""
    return copy_store(store_dir, tmp_path / "store")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_CMD, client_factory=make_client))
async def fresh(lsp_client: LanguageClient, fresh_store: Path, tmp_path: Path):
    """A fresh ``gmprep lsp`` for one test on its own store copy, index ready."""
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=CAPS, root_uri=tmp_path.as_uri(),
            initialization_options={"storeDir": str(fresh_store), "llm": {"backend": "extractive"}},
        )
    )
    await wait_status(lsp_client, "ready")
    yield
    await lsp_client.shutdown_session()
