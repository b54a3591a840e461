"""The OpenAI-compatible backend against a minimal HTTP server started on 127.0.0.1 by the test.

The server replays recorded responses (named as such below: they are the SSE chunks a llama.cpp
server sent for these requests, trimmed), so the client's real HTTP, SSE parsing, schema request,
retries, error reporting and timeouts are exercised without a model.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel

from gmprep.core.llm.base import ChatMessage, LLMError
from gmprep.core.llm.openai_backend import OpenAIBackend

RECORDED_TEXT_CHUNKS = ["The frightened", " condition gives", " a status penalty."]
RECORDED_JSON_CHUNKS = ['{"name": "frightened",', ' "value": 2}']
RECORDED_USAGE = {"prompt_tokens": 31, "completion_tokens": 9, "total_tokens": 40, "prompt_tokens_details": {"cached_tokens": 24}}


def _sse(chunks: list[str]) -> bytes:
    out = []
    for c in chunks:
        out.append({"choices": [{"index": 0, "delta": {"content": c}, "finish_reason": None}]})
    out.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    out.append({"choices": [], "usage": RECORDED_USAGE})
    return b"".join(f"data: {json.dumps(o)}\n\n".encode() for o in out) + b"data: [DONE]\n\n"


class RecordedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[dict] = []
        self.flaky_failures = 0


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server: RecordedServer = self.server  # type: ignore[assignment]
        server.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        model = body["model"]
        if model == "flaky" and server.flaky_failures < 1:
            server.flaky_failures += 1
            return self._reply(503, b'{"error": {"message": "loading model"}}', "application/json")
        if model == "bad":
            return self._reply(400, b'{"error": {"message": "unknown field max_tokenz"}}', "application/json")
        if model == "slow":
            time.sleep(1.5)
        chunks = RECORDED_JSON_CHUNKS if body.get("response_format") else RECORDED_TEXT_CHUNKS
        self._reply(200, _sse(chunks), "text/event-stream")

    def _reply(self, status: int, data: bytes, ctype: str):
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass


@pytest.fixture()
def server():
    srv = RecordedServer()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _url(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


MSGS = [ChatMessage(role="user", content="What does frightened do?")]


class Cond(BaseModel):
    name: str
    value: int


async def test_streams_text_and_reports_usage(server):
    llm = OpenAIBackend(_url(server), "local", api_key="sk-test", retries=0)
    pieces: list[str] = []
    done = await llm.complete(MSGS, on_token=pieces.append)
    assert pieces == RECORDED_TEXT_CHUNKS
    assert done.text == "".join(RECORDED_TEXT_CHUNKS)
    assert (done.usage.prompt, done.usage.completion, done.usage.cached) == (31, 9, 24)
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
    assert req["body"]["stream"] is True and req["body"]["messages"][0]["content"] == MSGS[0].content


async def test_structured_output_sends_the_schema(server):
    llm = OpenAIBackend(_url(server), "local", retries=0)
    value, _ = await llm.structured(MSGS, Cond)
    assert value == Cond(name="frightened", value=2)
    fmt = server.requests[0]["body"]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema["required"] == ["name", "value"] and schema["additionalProperties"] is False


async def test_retries_a_503_then_succeeds(server):
    llm = OpenAIBackend(_url(server), "flaky", retries=2, backoff_s=0.01)
    done = await llm.complete(MSGS)
    assert done.text.startswith("The frightened")
    assert len(server.requests) == 2


async def test_client_error_is_reported_without_retry(server):
    llm = OpenAIBackend(_url(server), "bad", retries=3, backoff_s=0.01)
    with pytest.raises(LLMError, match="HTTP 400.*max_tokenz"):
        await llm.complete(MSGS)
    assert len(server.requests) == 1


async def test_timeout_and_unreachable_endpoint_give_clear_errors(server):
    slow = OpenAIBackend(_url(server), "slow", timeout_s=0.3, retries=1, backoff_s=0.01)
    with pytest.raises(LLMError, match="failed after 2 attempts"):
        await slow.complete(MSGS)
    down = OpenAIBackend("http://127.0.0.1:9/v1", "local", timeout_s=1, retries=0)
    with pytest.raises(LLMError, match="127.0.0.1:9"):
        await down.complete(MSGS)
