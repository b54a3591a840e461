"""A deliberately primitive JSON-RPC client over a subprocess's stdio: it can send bytes no real
client would (broken headers, invalid JSON, binary garbage) to test that the server survives."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from typing import Any


class RawClient:
    """Writes framed (or unframed) bytes and reads framed JSON messages on a thread."""

    def __init__(self, cmd: list[str], env: dict | None = None, cwd: str | None = None):
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
        )
        self.messages: queue.Queue[dict] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next = 0

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if length is None:
                continue
            body = out.read(length)
            try:
                self.messages.put(json.loads(body))
            except ValueError:
                self.messages.put({"unparseable": body[:200].decode("latin-1")})

    def send_bytes(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send_body(self, body: bytes) -> None:
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send(self, msg: dict) -> None:
        self.send_body(json.dumps(msg).encode())

    def request(self, method: str, params: Any = None) -> int:
        self._next += 1
        msg = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self._next

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def response(self, msg_id: int, timeout: float = 60.0) -> dict:
        """Wait for the response to ``msg_id`` (other messages are dropped; server requests answered null)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no response to request {msg_id}")
            msg = self.messages.get(timeout=left)
            if msg.get("id") == msg_id and ("result" in msg or "error" in msg):
                return msg
            if "method" in msg and "id" in msg:  # a server->client request: answer it
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})

    def call(self, method: str, params: Any = None, timeout: float = 60.0) -> dict:
        return self.response(self.request(method, params), timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
