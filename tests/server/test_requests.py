"""The custom gmprep/* requests end to end: search, conversations, ask (extractive, streamed),
trace, rename, and re-indexing a saved note."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import HOUSE_RULES, call
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_search_returns_cited_hits(client):
    result = await call(client, "gmprep/search", {"query": "frightened condition", "k": 5})
    hits = result["hits"]
    assert 1 <= len(hits) <= 5
    top = {h["sourceId"] for h in hits}
    assert "pf2e:condition:frightened" in top
    hit = next(h for h in hits if h["sourceId"] == "pf2e:condition:frightened")
    assert hit["book"] == "Pathfinder Player Core" and hit["type"] == "condition" and hit["text"]


async def test_bad_params_and_unknown_ids_are_errors(client):
    with pytest.raises(JsonRpcException) as err:
        await call(client, "gmprep/search", {"k": 3})
    assert err.value.code == -32602
    with pytest.raises(JsonRpcException) as err:
        await call(client, "gmprep/conversation", {"id": "no-such-conversation"})
    assert err.value.code == -32803


async def test_conversation_lifecycle_with_a_streamed_cited_answer(client, workspace: Path):
    uri = (workspace / "session-04.md").as_uri()
    conv = (await call(client, "gmprep/conversation/new", {"uri": uri, "title": "Troll fight"}))["conversation"]
    assert conv["path"] == "session-04.md" and conv["uri"] == uri and conv["messageCount"] == 0
    listed = (await call(client, "gmprep/conversations", {"uri": uri}))["conversations"]
    assert [c["id"] for c in listed] == [conv["id"]]

    client.answer_deltas.clear()
    result = await call(
        client, "gmprep/ask",
        {"question": "What does the frightened condition do?", "uri": uri, "conversationId": conv["id"]},
    )
    assert result["conversationId"] == conv["id"]
    assert result["userMessage"]["role"] == "user"
    answer = result["answer"]
    assert answer["role"] == "assistant" and answer["outcome"] == "answered"
    assert "pf2e:condition:frightened" in {c["sourceId"] for c in answer["citations"]}
    streamed = [d for d in client.answer_deltas if d["conversationId"] == conv["id"]]
    assert streamed and "".join(d["delta"] for d in streamed).strip() == answer["text"].strip()

    full = await call(client, "gmprep/conversation", {"id": conv["id"]})
    assert [m["role"] for m in full["messages"]] == ["user", "assistant"]
    assert full["conversation"]["messageCount"] == 2
    # the reopened answer says which sources its text cites, as the live result did
    assert full["messages"][1]["used"] == result["used"] and result["used"]
    if full["messages"][1]["traceId"]:
        steps = (await call(client, "gmprep/trace", {"messageId": full["messages"][1]["traceId"]}))["steps"]
        assert steps and all("name" in s and "ms" in s for s in steps)
    md = (await call(client, "gmprep/conversation/export", {"id": conv["id"]}))["markdown"]
    assert "What does the frightened condition do?" in md and "pf2e:condition:frightened" in md

    # a follow-up without conversationId starts a new conversation for the file
    other = await call(client, "gmprep/ask", {"question": "How does Demoralize work?", "uri": uri})
    assert other["conversationId"] != conv["id"]
    listed = (await call(client, "gmprep/conversations", {"uri": uri}))["conversations"]
    assert listed[0]["id"] == other["conversationId"]  # newest first

    assert (await call(client, "gmprep/conversation/delete", {"id": conv["id"]}))["deleted"] is True
    assert (await call(client, "gmprep/conversation/delete", {"id": conv["id"]}))["deleted"] is False


async def test_renamed_files_keep_their_conversations(client, workspace: Path):
    old, new = workspace / "old-name.md", workspace / "new-name.md"
    conv = (await call(client, "gmprep/conversation/new", {"uri": old.as_uri()}))["conversation"]
    client.workspace_did_rename_files(
        lsp.RenameFilesParams(files=[lsp.FileRename(old_uri=old.as_uri(), new_uri=new.as_uri())])
    )
    for _ in range(50):
        moved = (await call(client, "gmprep/conversations", {"uri": new.as_uri()}))["conversations"]
        if moved:
            break
        await asyncio.sleep(0.1)
    assert [c["id"] for c in moved] == [conv["id"]]
    assert (await call(client, "gmprep/conversations", {"uri": old.as_uri()}))["conversations"] == []


async def test_saving_a_note_reindexes_it(client, workspace: Path):
    note = workspace / "notes" / "house-rules.md"
    note.write_text(HOUSE_RULES + "\n## Wandering Troll Tax\n\nTrolls charge 2 gp per bridge crossing.\n", encoding="utf-8")
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=note.as_uri())))
    entry = None
    for _ in range(600):
        try:
            entry = await call(client, "gmprep/entry", {"id": "note:house-rules.md#wandering-troll-tax"})
            break
        except JsonRpcException:
            await asyncio.sleep(0.2)
    assert entry is not None, "the saved note was not indexed"
    assert "2 gp per bridge crossing" in entry["markdown"]


async def test_configuration_change_applies_books_filter(client):
    client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"gmprep": {"books": ["Pathfinder Monster Core"]}})
    )
    try:
        for _ in range(50):
            hits = (await call(client, "gmprep/search", {"query": "frightened", "k": 5}))["hits"]
            if hits and all(h["book"] == "Pathfinder Monster Core" for h in hits):
                break
            await asyncio.sleep(0.1)
        assert hits and all(h["book"] == "Pathfinder Monster Core" for h in hits)
    finally:
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"gmprep": {"books": []}}))
    for _ in range(50):
        hits = (await call(client, "gmprep/search", {"query": "frightened condition", "k": 5}))["hits"]
        if any(h["sourceId"] == "pf2e:condition:frightened" for h in hits):
            break
        await asyncio.sleep(0.1)
    assert any(h["sourceId"] == "pf2e:condition:frightened" for h in hits)
