"""``gmprep/ask`` plumbing: runs ``gmprep.core.answer.answer_question`` on a worker event loop,
streams its deltas to the client, honours ``$/cancelRequest`` and saves both messages.

The answer engine (retrieval, models) may block for seconds; it runs on its own thread and loop so
hovers and completion stay instant meanwhile. The server holds no answer logic of its own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gmprep.common.settings import Settings
    from gmprep.core.answer import Answer, ChatTurn
    from gmprep.core.sources import Searcher
    from gmprep.kg.models import Citation

log = logging.getLogger(__name__)

# How long a cancelled answer may take to wind down and hand back its partial text; after that the
# user gets what streamed so far and the engine's late result is dropped (it may be inside a model
# load or a search that cannot be interrupted).
CANCEL_GRACE_S = 3.0


class Worker:
    """A daemon thread running an asyncio loop for long jobs."""

    def __init__(self, name: str = "gmprep-ask"):
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future:
        """Run ``coro`` on the worker loop."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, fn: Callable[[], Any]) -> None:
        """Call ``fn`` on the worker loop's thread."""
        self.loop.call_soon_threadsafe(fn)

    def stop(self) -> None:
        """Stop the loop (pending jobs are dropped)."""
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)


class AnswerRun:
    """One answer being generated: deltas seen so far and the cancel switch."""

    def __init__(self, worker: Worker):
        self.worker = worker
        self.deltas: list[str] = []
        self.sources: list[Citation] | None = None  # the numbered passages, once the engine has them
        self.cancelled = False
        self.closed = False  # the request was answered: later deltas are dropped
        self._cancel: asyncio.Event | None = None
        self._cancel_requested = False

    def request_cancel(self) -> None:
        """Ask the engine to stop (thread-safe, idempotent)."""
        self.cancelled = True

        def set_event() -> None:
            self._cancel_requested = True
            if self._cancel is not None:
                self._cancel.set()

        self.worker.call(set_event)

    async def run(
        self, question: str, history: list[ChatTurn], searcher: Searcher, settings: Settings,
        on_delta: Callable[[str], None], on_sources: Callable[[list[Citation]], None] | None = None,
    ) -> Answer | None:
        """Await the engine's answer on the worker loop; a cancellation of the calling task asks
        the engine to stop and still returns what it produced (or None). ``on_sources`` gets the
        numbered passages once, before the first delta (both are called on the worker thread)."""
        from gmprep.core.answer import answer_question

        async def job() -> Answer:
            self._cancel = asyncio.Event()
            if self._cancel_requested:
                self._cancel.set()

            def delta(text: str) -> None:
                if self.closed:
                    return
                self.deltas.append(text)
                on_delta(text)

            def sources(cited: list[Citation]) -> None:
                if self.closed or self.sources is not None:
                    return
                self.sources = list(cited)
                if on_sources is not None:
                    on_sources(self.sources)

            return await answer_question(
                question, history=history, searcher=searcher, settings=settings, on_delta=delta,
                on_sources=sources, cancel=self._cancel,
            )

        inner = asyncio.wrap_future(self.worker.submit(job()))
        try:
            return await asyncio.shield(inner)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # we handle it: wind down and answer with the partial text
            self.request_cancel()
            try:
                return await asyncio.wait_for(asyncio.shield(inner), CANCEL_GRACE_S)
            except (TimeoutError, asyncio.CancelledError):
                return None
        finally:
            self.closed = True
