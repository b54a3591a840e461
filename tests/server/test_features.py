"""End to end over stdio (pytest-lsp): hover, completion, code actions, legacy hints, definition,
commands and the entry/status requests, against a real store."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from lsp_helpers import PREP_NOTE, call, open_doc, position_of
from lsprotocol import types as lsp
from pygls.uris import to_fs_path
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def note(client: LanguageClient, workspace: Path) -> str:
    return open_doc(client, workspace / "session-04.md")


def _ident(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


async def _hover(client, uri, needle, nth=0, text=PREP_NOTE, shift=0):
    pos = position_of(text, needle, nth)
    pos = lsp.Position(line=pos.line, character=pos.character + shift)
    return await client.text_document_hover_async(lsp.HoverParams(text_document=_ident(uri), position=pos))


async def test_hover_shows_the_rule_with_book_value_and_range(client, note):
    h = await _hover(client, note, "frightened 2", shift=4)
    assert h is not None
    md = h.contents.value
    assert "### Frightened" in md
    assert "Pathfinder Player Core" in md and "`pf2e:condition:frightened`" in md
    assert "**Value:** 2" in md
    assert "status penalty" in md
    start = position_of(PREP_NOTE, "frightened 2")
    assert (h.range.start.line, h.range.start.character) == (start.line, start.character)
    assert h.range.end.character == start.character + len("frightened 2")


async def test_hover_resolves_plural_italic_spell_and_heritage(client, note):
    warriors = await _hover(client, note, "goblin warriors")
    assert "`pf2e:creature:goblin-warrior`" in warriors.contents.value
    fireball = await _hover(client, note, "fireball")
    assert "`pf2e:spell:fireball`" in fireball.contents.value
    assert "**Traits**" in fireball.contents.value
    heritage = await _hover(client, note, "Charhide Goblin")
    assert "`pf2e:heritage:charhide-goblin`" in heritage.contents.value


async def test_hover_links_related_rules(client, note):
    # Demoralize references the frightened condition: the card links it (entry files are written
    # in the background once the index is ready, so wait for them)
    for _ in range(100):
        h = await _hover(client, note, "Demoralize")
        if "**Related:**" in h.contents.value and "](file://" in h.contents.value:
            break
        await asyncio.sleep(0.2)
    md = h.contents.value
    assert "**Related:**" in md and "Frightened" in md.split("**Related:**")[1]
    assert "](file://" in md


async def test_no_hover_on_unknown_names_plain_words_and_code(client, note):
    assert await _hover(client, note, "owlbear") is None
    assert await _hover(client, note, "Phoenix Down") is None
    assert await _hover(client, note, "slippery") is None
    assert await _hover(client, note, "frightened 3") is None  # inside a code block


async def test_legacy_name_hint_and_quick_fix(client, note):
    for _ in range(50):
        diags = client.diagnostics.get(note)
        if diags:
            break
        await asyncio.sleep(0.1)
    (diag,) = diags
    assert diag.severity == lsp.DiagnosticSeverity.Hint and diag.code == "legacy-name"
    assert "Off-Guard" in diag.message
    h = await _hover(client, note, "flat-footed")
    assert "`pf2e:condition:off-guard`" in h.contents.value and "pre-Remaster" in h.contents.value
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=_ident(note), range=diag.range, context=lsp.CodeActionContext(diagnostics=[diag])
        )
    )
    fix = next(a for a in actions if getattr(a, "kind", None) == lsp.CodeActionKind.QuickFix)
    assert fix.title == 'Replace legacy name "flat-footed" with "off-guard"'
    (edit,) = fix.edit.changes[note]
    assert edit.new_text == "off-guard" and edit.range == diag.range


async def test_insert_rule_text_action_and_command(client, note):
    pos = position_of(PREP_NOTE, "frightened 2")
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=_ident(note), range=lsp.Range(start=pos, end=pos), context=lsp.CodeActionContext(diagnostics=[])
        )
    )
    titles = [a.title for a in actions]
    assert "Insert rule text: Frightened" in titles and "Ask gmprep about this" in titles
    insert = next(a for a in actions if a.title.startswith("Insert rule text"))
    (edit,) = insert.edit.changes[note]
    assert edit.range.start == lsp.Position(line=pos.line + 1, character=0)
    assert "> **Frightened** (condition) — Pathfinder Player Core, p. 444 [pf2e:condition:frightened]" in edit.new_text  # the page the corpus now carries
    assert "> You're gripped by fear" in edit.new_text
    ask = next(a for a in actions if a.title == "Ask gmprep about this")
    assert isinstance(ask, lsp.Command)
    assert ask.command == "gmprep.askAboutSelection" and list(ask.arguments) == ["frightened 2", note]
    # the same through workspace/executeCommand: the server asks the client to apply it
    result = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="gmprep.insertRuleText", arguments=[note, pos.line, pos.character + 2])
    )
    assert as_applied(result)
    assert "[pf2e:condition:frightened]" in client.applied_edits[-1].changes[note][0].new_text


def as_applied(result) -> bool:
    return bool(getattr(result, "applied", None) or (isinstance(result, dict) and result.get("applied")))


async def test_replace_legacy_name_command(client, note):
    pos = position_of(PREP_NOTE, "flat-footed")
    rng = {"start": {"line": pos.line, "character": pos.character},
           "end": {"line": pos.line, "character": pos.character + len("flat-footed")}}
    result = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="gmprep.replaceLegacyName", arguments=[note, rng, "off-guard"])
    )
    assert as_applied(result)
    assert client.applied_edits[-1].changes[note][0].new_text == "off-guard"


async def test_completion_prefix_multiword_and_fuzzy(client, note):
    text = PREP_NOTE + "\nThe ambush: goblin w"
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=note, version=2),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    end = lsp.Position(line=text.count("\n"), character=len(text.rsplit("\n", 1)[1]))
    result = await client.text_document_completion_async(lsp.CompletionParams(text_document=_ident(note), position=end))
    labels = [i.label for i in result.items]
    assert "Goblin Warrior" in labels
    item = next(i for i in result.items if i.label == "Goblin Warrior")
    assert "creature" in item.detail and "Monster Core" in item.detail
    assert "pf2e:creature:goblin-warrior" in item.documentation.value
    assert item.text_edit.new_text == "Goblin Warrior"
    assert item.text_edit.range.start.character == end.character - len("goblin w")
    # fuzzy: letters in order
    text2 = text + "\nfrightnd"
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=note, version=3),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text2)],
        )
    )
    end2 = lsp.Position(line=text2.count("\n"), character=len("frightnd"))
    result = await client.text_document_completion_async(lsp.CompletionParams(text_document=_ident(note), position=end2))
    assert "Frightened" in [i.label for i in result.items][:5]
    # back to the original text for the other tests
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=note, version=4),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=PREP_NOTE)],
        )
    )


async def test_definition_opens_a_read_only_entry_file(client, note, lsp_store):
    pos = position_of(PREP_NOTE, "Demoralize")
    loc = await client.text_document_definition_async(lsp.DefinitionParams(text_document=_ident(note), position=pos))
    if isinstance(loc, list):
        loc = loc[0]
    path = Path(to_fs_path(loc.uri))
    assert path.parent == lsp_store / "entries"
    text = path.read_text(encoding="utf-8")
    assert "Demoralize" in text
    assert not os.stat(path).st_mode & stat.S_IWUSR


async def test_entry_and_status_requests(client):
    entry = await call(client, "gmprep/entry", {"id": "pf2e:condition:frightened"})
    assert entry["id"] == "pf2e:condition:frightened"
    assert "Frightened" in entry["markdown"]
    assert entry["citation"]["sourceId"] == "pf2e:condition:frightened"
    assert entry["citation"]["book"] == "Pathfinder Player Core"
    status = await call(client, "gmprep/status")
    assert status["state"] == "ready" and status["entries"] >= 5364 and status["embeddings"] is True
