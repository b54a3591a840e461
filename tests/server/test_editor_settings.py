"""Settings from the editor and the workspace's gmprep.toml, through a real client (pytest-lsp) over
stdio: the editor's hover controls (as the VS Code extension sends them) add to the workspace file's;
a settings file with a bad value, or one that is not TOML, must not cost the GM their hovers: the
server says what is wrong in one line (a window message naming the key) and runs on the settings it
could use; the CLI stops with that one line. Names come from the bundled corpus, no store is needed."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_helpers import CAPS, SERVER_CMD, call, make_client, open_doc, position_of
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig

NOTE = "# Round 2\n\nThe ogre is frightened 2 after the Demoralize.\n\nVeris uses her strat on the ogre.\n"


async def _session(root: Path, options: dict):
    env = {**os.environ, "XDG_CONFIG_HOME": str(root.parent / "config")}
    client = await ClientServerConfig(server_command=[*SERVER_CMD, "--no-build"], client_factory=make_client,
                                      server_env=env).start()
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=CAPS, root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="notes")],
            initialization_options={"storeDir": str(root / ".no-store"), **options},
        )
    )
    for _ in range(600):
        if (await call(client, "gmprep/status"))["namesReady"]:
            break
        await asyncio.sleep(0.1)
    return client


async def _hover_id(client, root: Path) -> str | None:
    uri = open_doc(client, root / "note.md")
    pos = position_of(NOTE, "frightened 2")
    for _ in range(50):  # the first scan may still be running
        h = await client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=pos.line, character=pos.character + 1)))
        if h is not None:
            return "frightened" if "pf2e:condition:frightened" in h.contents.value else h.contents.value
        await asyncio.sleep(0.1)
    return None


@pytest.mark.parametrize("toml, key", [
    ('[hover]\nstrictness = "banana"\nignore_words = ["Demoralize"]\n', "hover.strictness"),
    ('[hover\nstrictness = "loose"\n', "cannot read settings"),
])
async def test_a_bad_gmprep_toml_is_said_in_one_line_and_hovers_go_on(tmp_path: Path, toml: str, key: str):
    root = tmp_path / "campaign"
    root.mkdir()
    (root / "note.md").write_text(NOTE, encoding="utf-8")
    (root / "gmprep.toml").write_text(toml, encoding="utf-8")
    client = await _session(root, {})
    try:
        assert await _hover_id(client, root) == "frightened"
        said = [m.message for m in client.messages if "gmprep settings" in m.message]
        assert len(said) == 1, client.messages
        assert key in said[0] and "\n" not in said[0] and "Traceback" not in said[0]
        assert "gmprep.toml" in said[0]
    finally:
        await client.shutdown_session()


async def test_a_bad_editor_option_is_said_and_the_workspace_settings_still_apply(tmp_path: Path):
    root = tmp_path / "campaign"
    root.mkdir()
    (root / "note.md").write_text(NOTE, encoding="utf-8")
    (root / "gmprep.toml").write_text('[hover]\nignore_words = ["frightened"]\n', encoding="utf-8")
    client = await _session(root, {"hover": {"strictness": 7}})
    try:
        said = [m.message for m in client.messages if "gmprep settings" in m.message]
        assert len(said) == 1 and "hover.strictness" in said[0] and "\n" not in said[0], client.messages
        uri = open_doc(client, root / "note.md")
        await asyncio.sleep(0.5)
        pos = position_of(NOTE, "frightened 2")
        h = await client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=pos.line, character=pos.character + 1)))
        assert h is None  # the workspace's ignore list was kept when the editor's option was dropped
    finally:
        await client.shutdown_session()


def test_the_cli_stops_on_a_bad_gmprep_toml_in_one_line(tmp_path: Path):
    (tmp_path / "gmprep.toml").write_text('[hover]\nstrictness = "banana"\n', encoding="utf-8")
    (tmp_path / "n.md").write_text(NOTE, encoding="utf-8")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    run = subprocess.run([sys.executable, "-m", "gmprep", "mentions", "n.md"], capture_output=True, text=True,
                         cwd=tmp_path, env=env)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "invalid setting hover.strictness" in run.stderr and len(run.stderr.strip().splitlines()) == 1


async def test_the_editors_hover_controls_add_to_the_workspace_file(tmp_path: Path):
    root = tmp_path / "campaign"
    root.mkdir()
    (root / "note.md").write_text(NOTE, encoding="utf-8")
    (root / "gmprep.toml").write_text('[hover]\nignore_words = ["frightened"]\n', encoding="utf-8")
    client = await _session(root, {"hover": {"ignoreWords": ["Demoralize"], "aliases": {"strat": "Devise a Stratagem"}}})
    try:
        assert not [m for m in client.messages if "gmprep settings" in m.message], client.messages
        uri = open_doc(client, root / "note.md")

        async def hover(needle: str):
            pos = position_of(NOTE, needle)
            return await client.text_document_hover_async(lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri),
                position=lsp.Position(line=pos.line, character=pos.character + 1)))

        shown = None
        for _ in range(50):  # the first scan may still be running
            shown = await hover("strat on")
            if shown is not None:
                break
            await asyncio.sleep(0.1)
        assert shown is not None and "pf2e:action:devise-a-stratagem" in shown.contents.value  # the editor's alias
        assert await hover("frightened 2") is None  # the workspace file's word, kept
        assert await hover("Demoralize") is None  # the editor's word, added
    finally:
        await client.shutdown_session()
