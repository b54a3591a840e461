"""The JSON-RPC protocol with two robustness fixes over pygls' default.

1. A request whose params do not fit the method's schema (a hover without a position, a string
   where a number belongs) gets an ``InvalidParams`` error response; pygls would log it and never
   answer, leaving the client waiting forever.
2. Params of ``gmprep/*`` requests stay plain JSON dicts (validated by our pydantic models)
   instead of becoming namedtuples.
3. No error response carries a Python traceback (pygls puts one in ``error.data`` for any
   unexpected exception): the client gets one line, the traceback goes to the server log.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types as lsp
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, LanguageServerProtocol

log = logging.getLogger(__name__)

CUSTOM_PREFIX = "gmprep/"
_INVALID_PARAMS = -32602
_IGNORED = "$/gmprep/ignored"


class GmprepProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that always answers a request, even a malformed one."""

    def structure_message(self, data: dict[str, Any]):
        if not isinstance(data, dict) or "jsonrpc" not in data:
            return data
        method = data.get("method")
        if isinstance(method, str) and method.startswith(CUSTOM_PREFIX):
            params = data.get("params")
            if "id" in data:
                return JsonRPCRequestMessage(id=data["id"], method=method, params=params, jsonrpc=data["jsonrpc"])
            return JsonRPCNotification(method=method, params=params, jsonrpc=data["jsonrpc"])
        try:
            return super().structure_message(data)
        except Exception as exc:
            if "id" in data and isinstance(method, str):
                log.warning("invalid params for %s: %s", method, exc)
                self._send_response(
                    data["id"],
                    error=lsp.ResponseError(code=_INVALID_PARAMS, message=f"invalid params for {method}"),
                )
            else:
                log.warning("dropped a malformed message: %s", exc)
            # handled: give the dispatcher a notification nobody listens to
            return JsonRPCNotification(method=_IGNORED, params=None, jsonrpc="2.0")

    def _send_response(self, msg_id, result: Any | None = None, error: lsp.ResponseError | None = None):
        if error is not None and (error.data is not None or "\n" in error.message):
            log.warning("request %s failed: %s %s", msg_id, error.message, error.data or "")
            first = error.message.strip().splitlines()[0] if error.message.strip() else "internal error"
            error = lsp.ResponseError(code=error.code, message=first)
        return super()._send_response(msg_id, result, error)

    def handle_message(self, message):
        if getattr(message, "method", None) == _IGNORED:
            return
        if not hasattr(message, "jsonrpc"):
            # valid JSON that is not a JSON-RPC message (a bare list or number): nothing to answer
            log.warning("ignored a message that is not JSON-RPC: %r", message)
            return
        super().handle_message(message)
