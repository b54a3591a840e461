"""Per-document mention cache and LSP position arithmetic.

A document's mentions are computed once per version (the editor sends a new version on every
edit) and looked up by offset with a binary search, so a hover or a code action costs a bisect
instead of a scan. Positions are LSP positions in UTF-16 code units, converted per line.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from lsprotocol import types as lsp

from gmprep.kg.names import Mention, NameIndex

# Larger documents are not scanned: a 10 MB log pasted into the editor gets no hovers, quickly.
MAX_SCAN_CHARS = 2_000_000
SEGMENT_CACHE = 20_000  # paragraphs whose mentions are remembered across edits
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)", re.M)
# Cut points: blank lines, and line breaks before list items, table rows, headings and quotes
# (a name may wrap onto the next line of a paragraph, never into a new list item or row).
_CUT = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|\||#|>))")


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


def segments(text: str) -> list[tuple[int, int]]:
    """Paragraph spans of ``text``: cut at blank lines and before list items, rows, headings and
    quotes, except inside fenced code blocks. No name spans such a cut, so the pieces can be
    scanned (and cached) independently."""
    fences: list[int] = [m.start() for m in _FENCE.finditer(text)]
    inside: list[tuple[int, int]] = []
    for a, b in zip(fences[0::2], fences[1::2] + [len(text)] * (len(fences) % 2), strict=False):
        inside.append((a, b))
    cuts = [0]
    k = 0
    for m in _CUT.finditer(text):
        pos = m.start() + 1
        while k < len(inside) and inside[k][1] < pos:
            k += 1
        if k < len(inside) and inside[k][0] <= pos <= inside[k][1]:
            continue
        cuts.append(pos)
    cuts.append(len(text))
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


class DocumentCache:
    """Mentions per open document, recomputed only when the version changes; after an edit only
    the paragraphs whose text changed are scanned again."""

    def __init__(self) -> None:
        self._docs: dict[str, DocumentMentions] = {}
        self._lock = threading.Lock()
        self._segments: OrderedDict[str, list[Mention]] = OrderedDict()
        self._names_id: int | None = None

    def _find(self, text: str, names: NameIndex) -> list[Mention]:
        with self._lock:
            if self._names_id != id(names):  # another name index: forget what it found
                self._segments.clear()
                self._names_id = id(names)
        out: list[Mention] = []
        for a, b in segments(text):
            seg = text[a:b]
            with self._lock:
                found = self._segments.get(seg)
                if found is not None:
                    self._segments.move_to_end(seg)
            if found is None:
                found = names.find_mentions(seg)
                with self._lock:
                    self._segments[seg] = found
                    if len(self._segments) > SEGMENT_CACHE:
                        self._segments.popitem(last=False)
            if a == 0:
                out.extend(found)
            else:
                out.extend(m.model_copy(update={"start": m.start + a, "end": m.end + a}) for m in found)
        return out

    def get(self, uri: str, version: int | None, text: str, names: NameIndex | None) -> DocumentMentions:
        """The mentions of this version of the document (computed now if not cached)."""
        with self._lock:
            cached = self._docs.get(uri)
        # the version decides; comparing the text too (a memcmp) guards against clients that reuse versions
        if cached is not None and cached.version == version and (cached.text is text or cached.text == text):
            return cached
        doc = scan(uri, version, text, names, self._find)
        if names is not None:  # don't cache the empty result computed before the names were ready
            with self._lock:
                self._docs[uri] = doc
        return doc

    def drop(self, uri: str) -> None:
        """Forget a closed document."""
        with self._lock:
            self._docs.pop(uri, None)

    def clear(self) -> None:
        """Forget everything (the name index changed)."""
        with self._lock:
            self._docs.clear()


def scan(uri: str, version: int | None, text: str, names: NameIndex | None, find=None) -> DocumentMentions:
    """Find the mentions of one document version (with ``find(text, names)`` when given, e.g. the
    paragraph cache); huge or binary documents are not scanned."""
    if names is None:
        return DocumentMentions(uri, version, text, [], skipped="the rules index is still loading")
    if len(text) > MAX_SCAN_CHARS:
        return DocumentMentions(uri, version, text, [], skipped=f"document too large ({len(text)} characters)")
    if "\x00" in text:
        return DocumentMentions(uri, version, text, [], skipped="binary document")
    mentions = find(text, names) if find is not None else names.find_mentions(text)
    return DocumentMentions(uri, version, text, mentions)
