"""Per-document mention cache and LSP position arithmetic.

A document's mentions are computed once per version (the editor sends a new version on every
edit), by ``kg.note_scan`` on a worker thread, and looked up by offset with a binary search, so a
hover or a code action costs a bisect instead of a scan. Positions are LSP positions in UTF-16
code units, converted per line.
"""

from __future__ import annotations

import bisect
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from lsprotocol import types as lsp

from gmprep.common.settings import HoverSettings
from gmprep.kg.names import Mention, NameIndex
from gmprep.kg.note_scan import MAX_SCAN_CHARS, NoteScanner, load_scorer

# candidates a scan lets the context model read for the first time before it answers (~6 ms each on two
# cores): none. Every first reading happens on the reading thread and lands with a rescan and a republish,
# so an edit's hover is answered as fast as without the model (with the scorer's own confidence for the
# edited paragraph's candidates until their reading lands, a few hundred ms later)
CONTEXT_BUDGET = 0
READ_BATCH = 64  # pairs a reading job reads between checks that its note is still open

log = logging.getLogger(__name__)
__all__ = ["MAX_SCAN_CHARS", "DocumentCache", "DocumentMentions", "scan"]


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (a lone surrogate, which JSON lets a client send,
    counts as the one unit it is)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_to_index(line: str, units: int) -> int:
    """Python index in ``line`` of a UTF-16 column (clamped to the line)."""
    if line.isascii():
        return max(0, min(units, len(line)))
    count = 0
    for i, ch in enumerate(line):
        if count >= units:
            return i
        count += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


@dataclass
class DocumentMentions:
    """One version of a document: its text, line starts and mentions sorted by start."""

    uri: str
    version: int | None
    text: str
    mentions: list[Mention]
    skipped: str | None = None  # why the document was not scanned
    context_pending: list[tuple[str, str]] = field(default_factory=list)  # see ``NoteScan.context_pending``
    line_starts: list[int] = field(default_factory=list)
    _starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        starts = [0]
        find = self.text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.line_starts = starts
        self._starts = [m.start for m in self.mentions]

    # ---- positions ----------------------------------------------------------------------
    def line_text(self, line: int) -> str:
        """The text of ``line`` without its line break ('' past the end)."""
        if line < 0 or line >= len(self.line_starts):
            return ""
        start = self.line_starts[line]
        end = self.line_starts[line + 1] - 1 if line + 1 < len(self.line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r")

    def offset(self, pos: lsp.Position) -> int | None:
        """Character offset of an LSP position, or None when the position is outside the text."""
        if pos.line < 0 or pos.character < 0 or pos.line >= len(self.line_starts):
            return None
        line = self.line_text(pos.line)
        if pos.character > utf16_len(line):
            return None
        return self.line_starts[pos.line] + utf16_to_index(line, pos.character)

    def position(self, offset: int) -> lsp.Position:
        """LSP position of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.line_starts, offset) - 1
        start = self.line_starts[line]
        return lsp.Position(line=line, character=utf16_len(self.text[start:offset]))

    def range_of(self, mention: Mention) -> lsp.Range:
        """The LSP range of a mention."""
        return lsp.Range(start=self.position(mention.start), end=self.position(mention.end))

    # ---- mentions -----------------------------------------------------------------------
    def at(self, pos: lsp.Position) -> Mention | None:
        """The mention under the cursor (a cursor right after the last character counts too)."""
        off = self.offset(pos)
        if off is None:
            return None
        i = bisect.bisect_right(self._starts, off) - 1
        if i >= 0 and off <= self.mentions[i].end:
            m = self.mentions[i]
            if off < m.end or (off == m.end and (i + 1 >= len(self.mentions) or self.mentions[i + 1].start != off)):
                return m
        return None

    def in_range(self, rng: lsp.Range) -> list[Mention]:
        """Mentions overlapping ``rng`` (or touching it when the range is empty)."""
        a, b = self.offset(rng.start), self.offset(rng.end)
        if a is None:
            return []
        if b is None:
            b = len(self.text)
        if a == b:
            m = self.at(rng.start)
            return [m] if m else []
        return [m for m in self.mentions if m.start < b and m.end > a]


class DocumentCache:
    """Mentions per open document, recomputed only when the version changes; a rescan re-reads
    only the chunks whose text changed (``kg.note_scan.NoteScanner``). Scans run on one worker
    thread (``submit``), so the event loop that answers hovers never waits for a big note."""

    def __init__(self) -> None:
        # called with a document's uri (on the scan worker) when its mentions changed without a new
        # version: the context model's first reading of a note landed (the server republishes)
        self.on_update: Callable[[str], None] | None = None
        self._docs: dict[str, DocumentMentions] = {}
        self._lock = threading.Lock()
        self._scanner: NoteScanner | None = None
        self._scanner_key: tuple | None = None
        self._pending: dict[str, tuple[int | None, str, list[Future]]] = {}
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gmprep-scan")
        # the context model's first readings of big notes: a thread of their own, so scans (and the hovers
        # waiting on them) never queue behind seconds of reading
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gmprep-context")

    def scanner(self, names: NameIndex, hover: HoverSettings | None = None) -> NoteScanner:
        """The note scanner for this name index and these hover settings (rebuilt when they change)."""
        hover = hover or HoverSettings()
        key = (id(names), hover.model_dump_json())
        with self._lock:
            if self._scanner is None or self._scanner_key != key:
                self._scanner = NoteScanner(names, hover, load_scorer())
                self._scanner_key = key
                for alias in self._scanner.unknown_aliases:
                    log.warning("hover.aliases: the target of %r names no entry; left out", alias)
                self._docs.clear()
            return self._scanner

    def cached(self, uri: str, version: int | None, text: str) -> DocumentMentions | None:
        """The mentions of this version if already scanned."""
        with self._lock:
            cached = self._docs.get(uri)
        # the version decides; comparing the text too (a memcmp) guards against clients that reuse versions
        if cached is not None and cached.version == version and (cached.text is text or cached.text == text):
            return cached
        return None

    def get(
        self, uri: str, version: int | None, text: str, names: NameIndex | None, hover: HoverSettings | None = None
    ) -> DocumentMentions:
        """The mentions of this version of the document (computed now, in this thread, if not cached)."""
        doc = self.cached(uri, version, text)
        if doc is not None:
            return doc
        scanner = self.scanner(names, hover) if names is not None else None
        doc = scan(uri, version, text, names, scanner, context_budget=CONTEXT_BUDGET)
        with self._lock:
            # not the empty result computed before the names were ready, nor one from settings
            # that changed during the scan
            if scanner is not None and self._scanner is scanner:
                self._docs[uri] = doc
        if doc.context_pending and scanner is not None:
            self._reader.submit(self._read_context, uri, version, doc.context_pending, scanner)
        return doc

    def _read_context(self, uri: str, version: int | None, pairs: list[tuple[str, str]], scanner: NoteScanner) -> None:
        """Off the hover's path (the reading thread): the context model reads a note's candidates near the
        threshold, a batch at a time (stopping if the note is closed or the settings change: what was read
        stays cached, a newer version's pairs are mostly the same), then the scan worker rescans the note
        and ``on_update`` is told."""
        ctx = scanner.context
        if ctx is None:
            return
        try:
            for i in range(0, len(pairs), READ_BATCH):
                with self._lock:
                    if self._scanner is not scanner or uri not in self._docs:
                        return
                ctx.read(pairs[i:i + READ_BATCH])
            self._executor.submit(self._rescan, uri, version, scanner)
        except Exception:  # the server stays up; the note keeps the scorer's own confidences
            log.exception("reading %s in context failed", uri)

    def _rescan(self, uri: str, version: int | None, scanner: NoteScanner) -> None:
        """After a reading: the current version of ``uri`` scanned again (now read), and ``on_update``."""
        try:
            with self._lock:
                doc = self._docs.get(uri)
            if doc is None or self._scanner is not scanner or doc.version != version:
                return  # a newer version was scanned meanwhile, with what had been read by then
            again = scan(uri, version, doc.text, scanner.names, scanner)
            with self._lock:
                if self._scanner is not scanner or self._docs.get(uri) is not doc:
                    return
                self._docs[uri] = again
            if self.on_update is not None:
                self.on_update(uri)
        except Exception:
            log.exception("rescanning %s after its reading failed", uri)

    def submit(
        self, uri: str, version: int | None, text: str, names: NameIndex | None, hover: HoverSettings | None = None
    ) -> Future:
        """Scan this version on the worker thread; a future of its ``DocumentMentions``. While a
        scan waits in the queue, a newer version of the same document takes its place and its
        waiters get the newer result (10 edits a second of a big note: one scan per pass)."""
        doc = self.cached(uri, version, text)
        fut: Future = Future()
        if doc is not None:
            fut.set_result(doc)
            return fut
        with self._lock:
            queued = self._pending.get(uri)
            waiters = queued[2] if queued is not None else []
            waiters.append(fut)
            self._pending[uri] = (version, text, waiters)
        if queued is None:
            self._executor.submit(self._run, uri, names, hover)
        return fut

    def _run(self, uri: str, names: NameIndex | None, hover: HoverSettings | None) -> None:
        with self._lock:
            version, text, waiters = self._pending.pop(uri)
        try:
            doc = self.get(uri, version, text, names, hover)
        except Exception as exc:  # the server stays up; the waiters see the error
            log.exception("scanning %s failed", uri)
            for w in waiters:
                w.set_exception(exc)
            return
        for w in waiters:
            w.set_result(doc)

    def drop(self, uri: str) -> None:
        """Forget a closed document."""
        with self._lock:
            self._docs.pop(uri, None)

    def clear(self) -> None:
        """Forget everything (the name index changed)."""
        with self._lock:
            self._docs.clear()
            self._scanner = None
            self._scanner_key = None


def scan(uri: str, version: int | None, text: str, names: NameIndex | None, scanner: NoteScanner | None = None,
         context_budget: int | None = None) -> DocumentMentions:
    """Find the mentions of one document version (through ``scanner``, e.g. the cache's, else a fresh
    one); huge or binary documents are not scanned. ``context_budget``: as ``NoteScanner.scan``."""
    if names is None:
        return DocumentMentions(uri, version, text, [], skipped="the rules index is still loading")
    result = (scanner or NoteScanner(names, None, load_scorer())).scan(text, context_budget)
    return DocumentMentions(uri, version, text, result.mentions, skipped=result.skipped,
                            context_pending=result.context_pending)


def diagnostic_data(d: lsp.Diagnostic) -> dict | None:
    """A diagnostic's ``data`` as a dict (clients send it back as JSON; pygls may hand a namedtuple)."""
    if isinstance(d.data, dict):
        return d.data
    asdict = getattr(d.data, "_asdict", None)
    return asdict() if asdict is not None else None
