"""Encounter blocks in a markdown note, found from markdown-it-py block tokens.

An encounter is written one of three ways (issue 14):

* a fenced block: ```` ```encounter ```` ... ```` ``` ````, one creature group per line, optionally a
  party line (``Encounter (4 PCs, level 3)`` or ``party: 4 PCs, level 3``);
* a heading containing the word "Encounter" (``## Encounter (4 PCs, level 3)``) followed by a list,
  one creature group per item;
* one line: ``Encounter (4 PCs, level 3): 2 goblin warriors, goblin war chanter, elite wolf`` (a
  paragraph, a list item or a heading).

The finder only says *where* the text is; reading it (counts, elite/weak, the party) is
``gmprep.core.creators.encounter.parse_encounter``'s job. Each block hands core one text made of
pieces of the document, with the map back to document offsets, so what core reports (offsets in
its text) lands on the right characters of the note.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

# Block structure only: inline parsing (emphasis, links) is skipped, the block tokens keep their
# raw inline text in ``content``, and a 300-line note parses in a few milliseconds.
_md = MarkdownIt("commonmark").disable(["inline", "text_join"])
_WORD = re.compile(r"\bencounter\b", re.I)
# "Encounter (…): a, b" on one line: the label, then a colon with creatures after it
_ONE_LINE = re.compile(r"^[*_]*encounter\b[^:\n]{0,80}:[*_]*\s*\S", re.I)
_PARTY_LINE = re.compile(r"^\s*(?:[*_]*party[*_]*\s*:|encounter\b)", re.I)

MAX_ITEMS = 60  # creature lines read per block: a block is a handful, a runaway block is cut here
BlockKind = Literal["fence", "heading", "line"]


@dataclass
class EncounterBlock:
    """One encounter as written in the note: the text handed to core and its map to the document.

    ``pieces`` are (offset in ``text``, offset in the document, length): ``text`` is the pieces
    joined with ``\\n``. ``header`` is the piece that names the block (heading or label), if any."""

    kind: BlockKind
    first_line: int  # 0-based line of the heading / fence / label
    last_line: int  # inclusive
    text: str
    pieces: list[tuple[int, int, int]] = field(default_factory=list)
    item_lines: list[int] = field(default_factory=list)  # document line of each creature piece

    def doc_offset(self, text_offset: int) -> int:
        """The document offset of an offset in ``text`` (clamped into its piece)."""
        starts = [p[0] for p in self.pieces]
        i = max(0, bisect.bisect_right(starts, text_offset) - 1)
        t0, d0, n = self.pieces[i]
        return d0 + max(0, min(text_offset - t0, n))

    def contains_line(self, line: int) -> bool:
        return self.first_line <= line <= self.last_line


@dataclass
class NoteBlocks:
    """What the creators features need from one note version: encounter blocks, the party the note
    states outside them (``Party: 4 PCs, level 3``)."""

    encounters: list[EncounterBlock] = field(default_factory=list)
    party_lines: list[tuple[int, str]] = field(default_factory=list)  # (line, text) outside blocks


class _Builder:
    def __init__(self, text: str, line_starts: list[int]):
        self.text = text
        self.line_starts = line_starts

    def line_span(self, line: int) -> tuple[int, int]:
        a = self.line_starts[line]
        b = self.line_starts[line + 1] - 1 if line + 1 < len(self.line_starts) else len(self.text)
        if b > a and self.text[b - 1] == "\r":
            b -= 1
        return a, b

    def piece_in_line(self, line: int, content: str) -> tuple[int, int] | None:
        """(document offset, length) of ``content``'s first line within ``line``."""
        a, b = self.line_span(line)
        head = content.split("\n", 1)[0].strip()
        if not head:
            return None
        at = self.text.find(head, a, b)
        return (at, len(head)) if at >= 0 else None

    def block(self, kind: BlockKind, first: int, last: int, spans: list[tuple[int, int, int]]) -> EncounterBlock:
        """``spans``: (document offset, length, line) of each piece, header first when there is one."""
        parts: list[str] = []
        pieces: list[tuple[int, int, int]] = []
        pos = 0
        for d0, n, _line in spans:
            pieces.append((pos, d0, n))
            parts.append(self.text[d0 : d0 + n])
            pos += n + 1
        return EncounterBlock(kind, first, last, "\n".join(parts), pieces, [s[2] for s in spans])


def _inline_after(tokens: list[Token], i: int) -> Token | None:
    return tokens[i + 1] if i + 1 < len(tokens) and tokens[i + 1].type == "inline" else None


def find_blocks(text: str, line_starts: list[int]) -> NoteBlocks:
    """The encounter blocks and party lines of a note (cheap when it has none).

    The note is cut into chunks before every top-level ATX heading (outside fences): a heading ends
    whatever block precedes it, so each chunk parses on its own exactly as inside the whole note.
    Only chunks that mention an encounter or a party are parsed, and their results are
    cached by text, so typing re-parses one chunk instead of the note."""
    out = NoteBlocks()
    lowered = text.lower()
    if "encounter" not in lowered and "party" not in lowered:
        return out
    for first, end in _chunks(text, line_starts):
        a = line_starts[first]
        b = line_starts[end] if end < len(line_starts) else len(text)
        chunk = text[a:b]
        if not _RELEVANT.search(chunk):
            continue
        facts = _chunk_facts(chunk)
        for e in facts.blocks.encounters:
            out.encounters.append(EncounterBlock(
                e.kind, e.first_line + first, e.last_line + first, e.text,
                [(t0, d0 + a, n) for t0, d0, n in e.pieces], [x + first for x in e.item_lines],
            ))
        out.party_lines += [(line + first, t) for line, t in facts.blocks.party_lines]
    return out


# what a chunk must hold to be parsed: an encounter or a "Party:" line
_RELEVANT = re.compile(r"encounter|^\s*[*_]*party[*_]*\s*:", re.I | re.M)
_ATX = re.compile(r"(#{1,6})(?:[ \t]|$)", re.M)
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
CHUNK_CACHE = 4000


def _chunks(text: str, line_starts: list[int]) -> list[tuple[int, int]]:
    """(first line, end line) of each chunk. Cuts, outside fences and HTML comments, before:

    * an unindented ATX heading (a heading ends any paragraph or list before it);
    * an unindented line after a blank line that is not a list item or quote: after a blank line
      such a line cannot continue a paragraph, list item or block quote.

    A chunk that opens with an "Encounter" heading is not cut until its list starts (a paragraph may
    come between the heading and the list)."""
    cuts = [0]
    fence: str | None = None
    comment = False
    blank = False
    waiting_list = False  # the chunk is an encounter heading whose list has not started yet
    n = len(line_starts)
    for i in range(n):
        a = line_starts[i]
        line = text[a : line_starts[i + 1] if i + 1 < n else len(text)].rstrip("\r\n")
        c = line[:1]
        was_blank, blank = blank, not line.strip()
        if comment:
            comment = "-->" not in line
            continue
        if c in ("`", "~", " ") and (m := _FENCE_OPEN.match(line)):
            mark = m.group(1)
            if fence is None:
                if was_blank and c != " " and not waiting_list:
                    cuts.append(i)
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence) and not line[m.end():].strip():
                fence = None
            continue
        if fence is not None or blank or c in (" ", "\t"):
            continue
        if c == "#" and _ATX.match(line):
            if i > 0:
                cuts.append(i)
            waiting_list = bool(_WORD.search(line))
        elif _LIST_ITEM.match(line) or c == ">":
            waiting_list = False
        elif was_blank and not waiting_list:
            cuts.append(i)
        if line.startswith("<!--") and "-->" not in line:
            comment = True
    cuts.append(n)
    return [(x, y) for x, y in zip(cuts, cuts[1:], strict=False) if y > x]


_LIST_ITEM = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


@dataclass
class _ChunkFacts:
    blocks: NoteBlocks


_chunk_cache: OrderedDict[str, _ChunkFacts] = OrderedDict()
_chunk_lock = threading.Lock()


def _chunk_facts(chunk: str) -> _ChunkFacts:
    with _chunk_lock:
        hit = _chunk_cache.get(chunk)
        if hit is not None:
            _chunk_cache.move_to_end(chunk)
            return hit
    starts = [0]
    pos = chunk.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = chunk.find("\n", pos + 1)
    facts = _find_in(chunk, starts)
    with _chunk_lock:
        _chunk_cache[chunk] = facts
        if len(_chunk_cache) > CHUNK_CACHE:
            _chunk_cache.popitem(last=False)
    return facts


def _find_in(text: str, line_starts: list[int]) -> _ChunkFacts:
    """Blocks and party lines of one chunk, from its block tokens."""
    out = NoteBlocks()
    has_encounter = "encounter" in text.lower()
    tokens = _md.parse(text)
    b = _Builder(text, line_starts)
    used_lines: set[int] = set()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "fence" and tok.map and tok.info.strip().lower().split(" ")[:1] == ["encounter"]:
            first, end = tok.map
            last = end - 1
            a, e = b.line_span(last)
            closed = last > first and text[a:e].strip().startswith(tok.markup)
            spans = []
            for line in range(first + 1, end):
                a, e = b.line_span(line)
                raw = text[a:e]
                if closed and line == last:
                    break
                stripped = raw.strip()
                if not stripped and not closed:
                    # a fence being typed runs to the end of the note: read it up to its first blank line
                    last = line - 1
                    break
                if stripped:
                    spans.append((a + raw.index(stripped), len(stripped), line))
            spans = spans[:MAX_ITEMS]
            if spans:
                out.encounters.append(b.block("fence", first, last, spans))
            used_lines.update(range(first, end))
        elif tok.type == "heading_open" and tok.map:
            inline = _inline_after(tokens, i)
            content = inline.content if inline else ""
            line = tok.map[0]
            if _WORD.search(content):
                head = b.piece_in_line(line, content)
                if head and _ONE_LINE.match(content.strip()):
                    out.encounters.append(b.block("line", line, line, [(*head, line)]))
                    used_lines.add(line)
                elif head:
                    items, last, j = _list_after(tokens, i + 3, b)
                    if items:
                        # the whole heading line, "#" marks included: core reads a "#" line as the party line
                        a, e = b.line_span(line)
                        full = (a + len(text[a:e]) - len(text[a:e].lstrip()), len(text[a:e].strip()))
                        out.encounters.append(b.block("heading", line, last, [(*full, line), *items]))
                        used_lines.update(range(line, last + 1))
                        i = j
                        continue
        elif tok.type == "inline" and tok.map and has_encounter and _ONE_LINE.match(tok.content.strip()):
            line = tok.map[0]
            head = b.piece_in_line(line, tok.content)
            if head and line not in used_lines:
                out.encounters.append(b.block("line", line, line, [(*head, line)]))
                used_lines.add(line)
        elif tok.type == "inline" and tok.map and _PARTY_LINE.match(tok.content) and tok.map[0] not in used_lines:
            out.party_lines.append((tok.map[0], tok.content.split("\n", 1)[0].strip()))
        i += 1
    return _ChunkFacts(out)


def _list_after(tokens: list[Token], i: int, b: _Builder) -> tuple[list[tuple[int, int, int]], int, int]:
    """The items of the list that directly follows a heading (a paragraph in between is allowed):
    (pieces, last line, index of the token after the list)."""
    while i < len(tokens) and tokens[i].type in ("paragraph_open", "inline", "paragraph_close"):
        i += 1
    if i >= len(tokens) or tokens[i].type not in ("bullet_list_open", "ordered_list_open"):
        return [], -1, i
    depth = 0
    items: list[tuple[int, int, int]] = []
    first_map = tokens[i].map
    last = first_map[1] - 1 if first_map else -1
    while i < len(tokens):
        tok = tokens[i]
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
            if depth == 0:
                return items, last, i + 1
        elif tok.type == "inline" and depth == 1 and tok.map:
            piece = b.piece_in_line(tok.map[0], tok.content)
            if piece and len(items) < MAX_ITEMS:
                items.append((*piece, tok.map[0]))
        i += 1
    return items, last, i
