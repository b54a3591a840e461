"""$/cancelRequest on gmprep/ask: the run stops, the question and the partial answer are saved
with outcome "cancelled", the response is a normal result, and the server keeps serving.

Over LSP with a fresh server, the first ask has to load the search models (seconds), so a cancel
sent a moment after the ask always lands mid-run. The engine-side hand-over (cancel event,
partial text) is checked in-process against a scripted stand-in engine (``FakeSlowEngine``, a test
double for control flow only)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_helpers import as_dict, call
from lsprotocol import types as lsp

from gmprep.server.ask import AnswerRun, Worker


async def test_cancel_over_lsp_saves_question_and_cancelled_answer(fresh, tmp_path: Path):
    client = fresh
    uri = (tmp_path / "prep.md").as_uri()
    conv = (await call(client, "gmprep/conversation/new", {"uri": uri}))["conversation"]
    pending = asyncio.ensure_future(  # pytest-lsp's send_request_async only sends once scheduled
        client.protocol.send_request_async(
            "gmprep/ask",
            {"question": "What does the frightened condition do to my checks?", "uri": uri, "conversationId": conv["id"]},
            msg_id="ask-to-cancel",
        )
    )
    await asyncio.sleep(0.3)  # the server has started the ask and is loading the search models
    client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id="ask-to-cancel"))
    result = as_dict(await asyncio.wait_for(pending, 120))
    assert result["answer"]["outcome"] == "cancelled"
    saved = (await call(client, "gmprep/conversation", {"id": conv["id"]}))["messages"]
    assert [m["role"] for m in saved] == ["user", "assistant"]
    assert saved[0]["text"] == "What does the frightened condition do to my checks?"
    assert saved[1]["outcome"] == "cancelled" and saved[1]["id"] == result["answer"]["id"]
    assert (await call(client, "gmprep/status"))["state"] == "ready"  # still serving


class FakeSlowEngine:
    """Test double for ``answer_question``: streams two pieces, then waits for the cancel event."""

    def __init__(self):
        self.saw_cancel = False

    async def __call__(self, question, *, history, searcher, settings, on_delta=None, on_sources=None, cancel=None):
        from gmprep.core.answer import Answer

        on_delta("Frightened gives a status ")
        on_delta("penalty")
        await asyncio.wait_for(cancel.wait(), 30)
        self.saw_cancel = True
        return Answer(text="Frightened gives a status penalty", outcome="cancelled", citations=[], steps=[])


async def test_answer_run_hands_cancel_to_the_engine_and_returns_its_partial(monkeypatch):
    import gmprep.core.answer as answer_module

    engine = FakeSlowEngine()
    monkeypatch.setattr(answer_module, "answer_question", engine)
    worker = Worker("test-ask")
    run = AnswerRun(worker)
    seen: list[str] = []
    task = asyncio.ensure_future(run.run("q", [], None, None, seen.append))
    for _ in range(200):
        if len(seen) == 2:
            break
        await asyncio.sleep(0.01)
    task.cancel()  # what pygls does on $/cancelRequest
    answer = await task
    worker.stop()
    assert engine.saw_cancel and run.cancelled
    assert answer.outcome == "cancelled" and answer.text == "Frightened gives a status penalty"
    assert run.deltas == ["Frightened gives a status ", "penalty"]
