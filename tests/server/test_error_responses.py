"""Error responses are one clear line, never a Python traceback in ``error.data`` (issue 9), and the
server keeps serving: requests on documents that are not open, ``untitled:`` documents, and text
with lone surrogates (valid JSON, invalid Unicode)."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import CAPS, SERVER_CMD, call, make_client
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

POS = lsp.Position(line=0, character=3)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[*SERVER_CMD[:-1], "--no-build", "--stdio"],
                                              client_factory=make_client))
async def server(lsp_client: LanguageClient, tmp_path: Path):
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=CAPS, root_uri=tmp_path.as_uri(),
            initialization_options={"storeDir": str(tmp_path / "store")},
        )
    )
    for _ in range(300):  # the name index loads from the bundled corpus
        if (await call(lsp_client, "gmprep/status"))["namesReady"]:
            break
    yield
    await lsp_client.shutdown_session()


def _one_line(exc: JsonRpcException) -> str:
    assert exc.data is None, exc.data
    assert "\n" not in exc.message and "Traceback" not in exc.message and 'File "' not in exc.message
    return exc.message


async def _fails(coro) -> str:
    with pytest.raises(JsonRpcException) as info:
        await coro
    return _one_line(info.value)


async def _alive(client: LanguageClient) -> None:
    assert (await call(client, "gmprep/status"))["namesReady"]


async def test_requests_on_documents_that_are_not_open(server, tmp_path: Path):
    client = server
    for uri in ((tmp_path / "never-opened.md").as_uri(), "untitled:Untitled-1"):
        doc = lsp.TextDocumentIdentifier(uri=uri)
        msgs = [
            await _fails(client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=POS))),
            await _fails(client.text_document_completion_async(lsp.CompletionParams(text_document=doc, position=POS))),
            await _fails(client.text_document_definition_async(lsp.DefinitionParams(text_document=doc, position=POS))),
            await _fails(client.text_document_code_action_async(lsp.CodeActionParams(
                text_document=doc, range=lsp.Range(start=POS, end=POS), context=lsp.CodeActionContext(diagnostics=[]),
            ))),
        ]
        assert all(m == f"{uri} is not open in the editor (open it first)" for m in msgs), msgs
        await _alive(client)


async def test_an_untitled_document_that_is_open_works(server):
    client = server
    uri = "untitled:Untitled-2"
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri, language_id="markdown", version=1, text="The troll is frightened 2.\n")))
    h = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=0, character=15)))
    assert h is not None and "Frightened" in h.contents.value
    conv = (await call(client, "gmprep/conversation/new", {"uri": uri}))["conversation"]
    assert conv["uri"] == uri  # keyed by its URI, handed back as that URI (not file:///.../untitled%3A...)
    listed = (await call(client, "gmprep/conversations", {"uri": uri}))["conversations"]
    assert [c["id"] for c in listed] == [conv["id"]]


async def test_lone_surrogates(server, tmp_path: Path):
    client = server
    uri = (tmp_path / "broken.md").as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri, language_id="markdown", version=1, text="The troll \ud800 is frightened 2.\n")))
    doc = lsp.TextDocumentIdentifier(uri=uri)
    h = await client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=lsp.Position(line=0, character=20)))
    assert h is not None and "Frightened" in h.contents.value  # the lone surrogate counts as one UTF-16 unit
    await client.text_document_completion_async(lsp.CompletionParams(text_document=doc, position=lsp.Position(line=0, character=12)))
    msg = await _fails(call(client, "gmprep/conversation/new", {"uri": uri, "title": "Ambush \udc80"}))
    assert msg == "conversation_new failed: the text contains invalid Unicode (a lone surrogate)"
    msg = await _fails(call(client, "gmprep/search", {"query": "fright\ud800ened"}))
    assert msg.startswith("invalid params: query:")
    await _alive(client)


async def test_a_blank_question_is_refused_as_the_cli_refuses_it(server, tmp_path: Path):
    client = server
    uri = (tmp_path / "prep.md").as_uri()
    msg = await _fails(call(client, "gmprep/ask", {"question": " \n ", "uri": uri}))
    assert msg == "invalid params: question: the question is empty"  # core.question: one rule for both
    assert (await call(client, "gmprep/conversations", {"uri": uri}))["conversations"] == []  # nothing saved
    assert "namesReady" in await call(client, "gmprep/status")  # still serving (the name index may still be loading)
