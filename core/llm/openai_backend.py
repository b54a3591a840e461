"""Any OpenAI-compatible chat endpoint (llama.cpp server, vLLM, Ollama, a hosted API) over httpx.

Streaming is Server-Sent Events (``stream: true``); structured output is
``response_format: {"type": "json_schema", "json_schema": {"name", "schema", "strict": true}}``.
Connection failures, timeouts, 429 and 5xx answers are retried with exponential backoff before any
text has been streamed (a retry after streamed text would repeat it); 4xx answers fail at once with
the server's own message.
"""

from __future__ import annotations

import json
import logging
import time

import httpx

from gmprep.core.llm.base import (
    ChatMessage,
    Completion,
    LLMBackend,
    LLMError,
    OnToken,
    ShouldStop,
    TokenUsage,
)

log = logging.getLogger(__name__)

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class _Retryable(Exception):
    pass


class OpenAIBackend(LLMBackend):
    """Chat completions from an OpenAI-compatible HTTP endpoint."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        max_tokens: int = 512,
        temperature: float = 0.0,
        parallel: int = 4,
    ):
        super().__init__(max_tokens=max_tokens, temperature=temperature)
        if not base_url:
            raise LLMError("the openai backend needs a base URL (llm.url), e.g. http://127.0.0.1:8080/v1")
        self.base_url = base_url.rstrip("/")
        self.model = model or "default"
        self.model_name = self.model
        self.retries = retries
        self.backoff_s = backoff_s
        self.parallel = parallel
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # connect quickly, but give a slow local model the whole budget between streamed chunks
        self._client = httpx.Client(headers=headers, timeout=httpx.Timeout(timeout_s, connect=min(10.0, timeout_s)))

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def _generate(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        json_schema: dict | None,
        on_token: OnToken | None,
        should_stop: ShouldStop,
    ) -> Completion:
        body: dict = {
            "model": self.model,
            "messages": [m.model_dump() for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": json_schema, "strict": True},
            }
        url = f"{self.base_url}/chat/completions"
        last: BaseException | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                return self._stream_once(url, body, on_token, should_stop)
            except _Retryable as exc:
                last = exc.__cause__ or exc
                log.warning("openai backend: attempt %d failed: %s", attempt + 1, last)
        raise LLMError(f"the model endpoint {url} failed after {self.retries + 1} attempts: {last}")

    def _stream_once(self, url: str, body: dict, on_token: OnToken | None, should_stop: ShouldStop) -> Completion:
        pieces: list[str] = []
        usage: dict = {}
        finish = None
        stopped = False
        try:
            with self._client.stream("POST", url, json=body) as resp:
                if resp.status_code in _RETRY_STATUS:
                    resp.read()
                    raise _Retryable() from LLMError(f"HTTP {resp.status_code}: {resp.text[:200]}")
                if resp.status_code >= 400:
                    resp.read()
                    raise LLMError(f"the model endpoint refused the request (HTTP {resp.status_code}): {_error_text(resp)}")
                for line in resp.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    try:
                        chunk = json.loads(data)
                    except json.JSONDecodeError as exc:
                        raise LLMError(f"the model endpoint sent a malformed stream chunk: {data[:120]}") from exc
                    if "error" in chunk:
                        raise LLMError(f"the model endpoint reported an error: {chunk['error']}")
                    for choice in chunk.get("choices") or []:
                        piece = (choice.get("delta") or {}).get("content")
                        if piece:
                            pieces.append(piece)
                            if on_token:
                                on_token(piece)
                        finish = choice.get("finish_reason") or finish
                    usage = chunk.get("usage") or usage
                    if should_stop():
                        stopped = True
                        break  # closing the response aborts the generation server-side
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            if pieces:  # text already went to the caller: a retry would duplicate it
                raise LLMError(f"the model endpoint dropped the stream: {exc}") from exc
            raise _Retryable() from exc
        return Completion(
            text="".join(pieces),
            usage=TokenUsage(
                prompt=int(usage.get("prompt_tokens", 0)),
                completion=int(usage.get("completion_tokens", len(pieces))),
                cached=int((usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)),
            ),
            finish_reason="cancelled" if stopped else finish,
            cancelled=stopped,
        )


def _error_text(resp: httpx.Response) -> str:
    try:
        err = resp.json().get("error", resp.text)
    except ValueError:
        return resp.text[:300]
    return str(err.get("message", err) if isinstance(err, dict) else err)[:300]
