"""Keeping the index current from the editor: check on start, build in the background with
work-done progress, re-index a saved note. The work itself is ``gmprep.ingest.pipeline``."""

from __future__ import annotations

import logging
import threading
import uuid
from pathlib import Path

from lsprotocol import types as lsp

from gmprep.server.state import ServerState

log = logging.getLogger(__name__)

_STAGE_WORDS = {"corpus": "ingesting the rules", "notes": "ingesting notes", "embed": "embedding"}


def check_store(state: ServerState) -> bool:
    """Look at the store on disk (``gmprep.ingest.health``): True (and state ``ready``) when it can be
    used as it is."""
    from gmprep.ingest.health import check_store as inspect

    check = inspect(state.store_dir)
    if not check.complete:
        why = "; ".join(check.problems) or "the index is incomplete"
        state.set_status(state="empty", message=why, entries=check.entries, embeddings=check.embedded)
        return False
    entries = check.entries
    state.set_status(state="ready", message=f"{entries} entries", entries=entries, embeddings=True, percentage=None)
    return True


class IndexRunner:
    """Runs index builds one at a time in a background thread, reporting ``$/progress``."""

    def __init__(self, server, state: ServerState):
        self.server = server
        self.state = state
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        # notes saved while a build or a sync ran: indexed once it ends (a save must not be lost)
        self._pending: set[Path] = set()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, force: bool = False, build: bool = True) -> bool:
        """Check the store and build it if needed (always with ``force``; never without ``build``);
        False if a build already runs."""
        with self._lock:
            if self.running:
                return False
            self._thread = threading.Thread(target=self._run, args=(force, build), name="gmprep-index", daemon=True)
            self._thread.start()
            return True

    def join(self, timeout: float | None = None) -> None:
        """Wait for the current build (tests, shutdown)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self, force: bool, build: bool = True) -> None:
        state = self.state
        try:
            if not force and check_store(state):
                self._sync_notes()
                return
            if build or force:
                self._build()
        except Exception as exc:
            log.exception("index build failed")
            state.set_status(state="error", message=f"index build failed: {exc}", percentage=None)
        finally:
            self._drain_saved()

    def _build(self) -> None:
        from gmprep.ingest.pipeline import build_index

        state = self.state
        state.retire_store()
        state.set_status(state="building", message="building the rules index", percentage=0)
        progress = _Progress(self.server)
        progress.begin("gmprep: building the rules index")

        def on_progress(stage: str, done: int, total: int) -> None:
            pct = int(100 * done / total) if total else 0
            # ingest is quick, embedding is most of the time: show it as 10..100
            overall = pct // 10 if stage != "embed" else 10 + int(0.9 * pct)
            msg = f"{_STAGE_WORDS.get(stage, stage)} {done}/{total}"
            state.set_status(state="building", message=msg, percentage=overall)
            progress.report(msg, overall)

        try:
            report = build_index(state.settings, notes_dir=state.notes_root(), progress=on_progress)
        except Exception:
            progress.end("index build failed")
            raise
        progress.end(f"{report.entries} entries indexed")
        state.set_status(
            state="ready", message=f"{report.entries} entries", entries=report.entries, embeddings=True, percentage=None
        )

    def _sync_notes(self) -> None:
        """The store is usable: bring the notes folder up to date (notes edited while the editor was
        closed), quietly; only changed notes are re-read and only their new nodes embedded."""
        from gmprep.ingest.pipeline import build_index

        root = self.state.notes_root()
        if root is None or not root.is_dir():
            return
        report = build_index(self.state.settings, notes_dir=root, progress=False)
        for msg in report.messages:
            log.warning(msg)
        if report.notes_indexed or report.notes_removed:
            log.info("notes synced: %d indexed, %d removed", len(report.notes_indexed), len(report.notes_removed))
            self.state.set_status(entries=report.entries)

    def index_saved_note(self, path: Path) -> bool:
        """Re-index one saved note inside the notes folder (in the background); False if not a note."""
        state = self.state
        root = state.notes_root()
        if root is None or path.suffix.lower() != ".md":
            return False
        try:
            path.resolve().relative_to(root.resolve())
        except ValueError:
            return False
        with self._lock:
            self._pending.add(path.resolve())
            if self.running:
                return True  # the running build or sync indexes it when it ends
            self._thread = threading.Thread(target=self._drain_saved, name="gmprep-note", daemon=True)
            self._thread.start()
        return True

    def _drain_saved(self) -> None:
        """Index the saved notes waiting in ``_pending`` (on the indexing thread), until none is left."""
        from gmprep.ingest.pipeline import index_note

        state = self.state
        while True:
            with self._lock:
                if not self._pending or state.status.state != "ready":
                    # not ready: the build that makes it ready drains the queue when it ends. Marked idle
                    # under the lock, so a save arriving now starts a new drain instead of waiting on us
                    if self._thread is threading.current_thread():
                        self._thread = None
                    return
                path = self._pending.pop()
            root = state.notes_root()
            if root is None:
                return
            try:
                report = index_note(state.settings, path, root.resolve())
                for msg in report.messages:
                    log.warning(msg)
                state.set_status(entries=report.entries)
            except Exception:
                log.exception("re-indexing %s failed", path)


class _Progress:
    """Work-done progress from a worker thread: every message goes through the event loop."""

    def __init__(self, server):
        self.server = server
        self.token = f"gmprep-index-{uuid.uuid4().hex[:8]}"
        self.ok = False
        self.begun = False  # the client accepted the token: reports may flow
        self.ended: str | None = None  # end message waiting for the client to accept the token

    def _call(self, fn, *args) -> None:
        loop = getattr(self.server, "loop", None)
        if loop is None or loop.is_closed():
            return
        loop.call_soon_threadsafe(lambda: _safe(fn, *args))

    def begin(self, title: str) -> None:
        caps = getattr(self.server, "client_capabilities", None)
        window = getattr(caps, "window", None) if caps else None
        self.ok = bool(window and window.work_done_progress)
        if not self.ok:
            return
        wdp = self.server.work_done_progress

        def created(*_args) -> None:
            wdp.begin(self.token, lsp.WorkDoneProgressBegin(title=title, percentage=0, cancellable=False))
            self.begun = True
            if self.ended is not None:  # the build finished before the client answered
                wdp.end(self.token, lsp.WorkDoneProgressEnd(message=self.ended))

        self._call(lambda: wdp.create(self.token, callback=created))

    def report(self, message: str, percentage: int) -> None:
        if self.ok and self.begun:
            wdp = self.server.work_done_progress
            self._call(wdp.report, self.token, lsp.WorkDoneProgressReport(message=message, percentage=percentage))

    def end(self, message: str) -> None:
        if not self.ok:
            return
        if self.begun:
            wdp = self.server.work_done_progress
            self._call(wdp.end, self.token, lsp.WorkDoneProgressEnd(message=message))
        else:
            self.ended = message


def _safe(fn, *args) -> None:
    try:
        fn(*args)
    except Exception:
        log.exception("progress report failed")
