"""A markdown note as scannable prose, with exact document offsets.

``parse_chunk(text)`` reads one block-level chunk of a note with markdown-it-py's token stream and
returns a *masked* copy of it: the same length, every line break in place, the characters of prose
kept (paragraphs, headings, list items, table cells, the visible text of links, wiki-link labels,
emphasis markers) and everything else replaced by ``MASK``: HTML blocks and inline HTML, fenced,
indented and inline code, link and image targets, images, autolinks and bare URLs, e-mail
addresses, wiki-link targets. Because the masked text lines up character for character with the
source, a name found in it has its document offsets for free (hover ranges, diagnostics); no
position is ever recomputed from rendered text. markdown-it gives the block of each inline run by
line (``token.map``); its children are walked with a cursor over the inline source, and every kept
span is checked against the document, so a construct we don't expect loses its hovers, never
misplaces them.

``split_chunks(text)`` cuts a note where a new top-level block starts (after a blank line, or at an
unindented heading, list item or quote line; never inside a fence, an HTML comment/``<pre>``-like
block or front matter, never before an indented continuation), so a change re-parses only the
chunks whose text changed. Front matter (YAML ``---`` / TOML ``+++``
at the top) is its own chunk and never scanned.

The ignore comments (``<!-- gmprep-ignore -->``, ``<!-- gmprep-ignore-end -->``,
``<!-- gmprep-ignore-next-line -->``) are reported as directives, in HTML blocks or inline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.common.utils import normalizeReference

MASK = "\x00"  # not a word character, not whitespace: a masked stretch also separates words
Directive = Literal["ignore", "ignore-end", "ignore-next-line"]
_DIRECTIVE = re.compile(r"<!--\s*gmprep-(ignore-next-line|ignore-end|ignore)\s*-->")
_URL = re.compile(
    r"(?<![\w/])(?:(?:https?|ftp|file|obsidian)://|www\.)[^\s<>\x00]*[^\s<>\x00.,;:!?'\")\]]"
    r"|(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
)
_WIKI = re.compile(r"(!?)\[\[([^\[\]|\n]*)(?:\|([^\[\]\n]*))?\]\]")
_FRONT = re.compile(r"\A(?:\ufeff)?(---|\+\+\+)[ \t]*\r?\n")
_FENCE_OPEN = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
# HTML blocks that may contain blank lines (CommonMark types 1-5): they end at their closer
_HTML_LONG = [
    (re.compile(r"^[ \t]{0,3}<(?:script|pre|style|textarea)(?:\s|>|$)", re.I), re.compile(r"</(?:script|pre|style|textarea)>", re.I)),
    (re.compile(r"^[ \t]{0,3}<!--"), re.compile(r"-->")),
    (re.compile(r"^[ \t]{0,3}<\?"), re.compile(r"\?>")),
    (re.compile(r"^[ \t]{0,3}<![A-Za-z]"), re.compile(r">")),
    (re.compile(r"^[ \t]{0,3}<!\[CDATA\["), re.compile(r"\]\]>")),
]
# Unindented lines that start a block of their own even right after a paragraph line (a heading,
# a list item, a quote): parsed alone they read the same, so a long list is many small chunks.
_BLOCK_START = re.compile(r"#{1,6}(?:[ \t]|$)|[-+*][ \t]+\S|\d{1,9}[.)][ \t]+\S|>")
_BLOCK_MARKS = frozenset(" \t>#*+-|.)")
_REF_DEF = re.compile(r"^[ \t]{0,3}\[([^\]\n]+)\]:[ \t]*\S", re.M)


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    md.disable("text_join")  # escapes and entities stay separate tokens carrying their source text
    return md


_MD = _markdown()


@dataclass(frozen=True, slots=True)
class Region:
    """One run of inline prose (a paragraph, heading, table cell...), in chunk offsets."""

    start: int
    end: int
    in_heading: bool = False
    in_list_item: bool = False
    in_table_cell: bool = False
    in_blockquote: bool = False
    heading_level: int = 0


@dataclass(slots=True)
class ChunkProse:
    """The scannable view of one chunk: masked text (same length as the chunk) and what the
    markdown says about each place in it."""

    text: str
    regions: list[Region] = field(default_factory=list)
    bold: list[tuple[int, int]] = field(default_factory=list)
    italic: list[tuple[int, int]] = field(default_factory=list)
    links: list[tuple[int, int]] = field(default_factory=list)  # visible link text
    headings: list[tuple[int, int, str]] = field(default_factory=list)  # (offset, level, plain text)
    directives: list[tuple[int, Directive]] = field(default_factory=list)


# ---- chunks -------------------------------------------------------------------------------------
def front_matter_end(text: str) -> int:
    """Length of the YAML/TOML front matter at the top of ``text`` (0 when there is none)."""
    m = _FRONT.match(text)
    if not m:
        return 0
    fence = m.group(1)
    pos = m.end()
    while pos < len(text):
        nl = text.find("\n", pos)
        line_end = len(text) if nl < 0 else nl
        line = text[pos:line_end].rstrip("\r \t")
        if line == fence or (fence == "---" and line == "..."):
            return len(text) if nl < 0 else nl + 1
        if nl < 0:
            break
        pos = nl + 1
    return 0  # never closed: not front matter, markdown reads it as a rule and text


def split_chunks(text: str) -> list[tuple[int, int]]:
    """Cut ``text`` into chunks that markdown parses the same alone as in the whole note: at a blank
    line followed by an unindented line, outside fences and long HTML blocks. Linear in ``text``."""
    cuts = [0]
    pos = front_matter_end(text)
    if pos:
        cuts.append(pos)
    fence: str | None = None
    html_end: re.Pattern | None = None
    blank = False
    quote = False  # the previous line is a block quote's, with text
    n = len(text)
    while pos < n:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl
        line = text[pos:end]
        nxt = n if nl < 0 else nl + 1
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and stripped.strip(fence[0]) == "":
                fence = None
        elif html_end is not None:
            if html_end.search(line):
                html_end = None
        else:
            is_blank = line.strip() == ""
            # a quote line after a quote line of text continues the same paragraph: one chunk, so a name
            # broken across its lines ("Recall\n> Knowledge") is still read whole; an empty quote line
            # ends the paragraph and may be cut after (a long quote stays several chunks to rescan)
            quoted = line[:1] == ">" and quote
            if not is_blank and line[:1] not in (" ", "\t") and pos > cuts[-1] and not quoted and (
                blank or _BLOCK_START.match(line)
            ):
                cuts.append(pos)
            quote = line[:1] == ">" and line.strip(" \t>") != ""
            m = _FENCE_OPEN.match(line)
            if m:
                fence = m.group(1)[0] * len(m.group(1))
            else:
                for opener, closer in _HTML_LONG:
                    om = opener.match(line)
                    if om and not closer.search(line, om.end()):
                        html_end = closer
                        break
            blank = is_blank
        pos = nxt
    if cuts[-1] != n:
        cuts.append(n)
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def reference_labels(text: str) -> tuple[str, ...]:
    """The normalised labels of the note's link reference definitions (``[label]: url``), so a
    chunk parsed alone still knows ``[text][label]`` is a link."""
    return tuple(sorted({normalizeReference(m.group(1)) for m in _REF_DEF.finditer(text)}))


# ---- one chunk ----------------------------------------------------------------------------------
def parse_chunk(chunk: str, refs: tuple[str, ...] = (), front_matter: bool = False) -> ChunkProse:
    """The masked prose view of one chunk (see the module docstring)."""
    if front_matter:
        return ChunkProse(text=_mask_all(chunk))
    keep = bytearray(len(chunk))  # 1 where the source character stays visible
    out = ChunkProse(text="")
    starts = line_starts(chunk)
    env = {"references": {r: {"href": "#", "title": ""} for r in refs}}
    try:
        tokens = _MD.parse(chunk, env)
    except Exception:  # markdown-it never should; a chunk it can't read simply gets no hovers
        return ChunkProse(text=_mask_all(chunk))
    in_heading = 0
    list_depth = 0
    quote_depth = 0
    in_cell = False
    row_cursor: dict[int, int] = {}
    for tok in tokens:
        t = tok.type
        if t == "heading_open":
            in_heading = int(tok.tag[1:]) if tok.tag[1:].isdigit() else 1
        elif t == "heading_close":
            in_heading = 0
        elif t == "list_item_open":
            list_depth += 1
        elif t == "list_item_close":
            list_depth -= 1
        elif t == "blockquote_open":
            quote_depth += 1
        elif t == "blockquote_close":
            quote_depth -= 1
        elif t in ("td_open", "th_open"):
            in_cell = True
        elif t in ("td_close", "th_close"):
            in_cell = False
        elif t == "html_block" and tok.map:
            a = starts[tok.map[0]]
            for m in _DIRECTIVE.finditer(chunk, a, _line_end(chunk, starts, tok.map[1] - 1)):
                out.directives.append((m.start(), m.group(1)))  # type: ignore[arg-type]
        elif t == "inline" and tok.map:
            region = _inline(chunk, starts, tok, keep, out, in_cell, row_cursor)
            if region is not None:
                a, b = region
                out.regions.append(Region(
                    a, b, in_heading=bool(in_heading), in_list_item=list_depth > 0, in_table_cell=in_cell,
                    in_blockquote=quote_depth > 0, heading_level=in_heading,
                ))
                if in_heading:
                    plain = "".join(ch if keep[i] else " " for i, ch in enumerate(chunk[a:b], a))
                    plain = re.sub(r"[*_~\[\]\x00]", " ", plain)  # emphasis and link marks are not words
                    out.headings.append((a, in_heading, " ".join(plain.split())))
    out.text = _apply_mask(chunk, keep)
    return out


def _apply_mask(chunk: str, keep: bytearray) -> str:
    # runs of kept/masked characters, joined: much faster than per character on big chunks
    parts: list[str] = []
    i, n = 0, len(chunk)
    while i < n:
        j = keep.find(b"\x00" if keep[i] else b"\x01", i)
        j = n if j < 0 else j
        if keep[i]:
            parts.append(chunk[i:j])
        else:
            seg = chunk[i:j]
            if "\n" in seg or "\r" in seg:
                parts.append("".join(c if c in "\r\n" else MASK for c in seg))
            else:
                parts.append(MASK * (j - i))
        i = j
    return "".join(parts)


def _mask_all(chunk: str) -> str:
    return re.sub(r"[^\r\n]", MASK, chunk)


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts (after ``\\n``; a ``\\r`` stays at its line's end)."""
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def _line_end(text: str, starts: list[int], line: int) -> int:
    if line + 1 < len(starts):
        return starts[line + 1] - 1
    return len(text)


def _locate_lines(chunk: str, starts: list[int], tok, in_cell: bool, row_cursor: dict[int, int]) -> list[int] | None:
    """The chunk offset where each line of the inline token's content starts (its first non-blank
    character), or None when a line can't be found in the source."""
    lines = tok.content.split("\n")
    first = tok.map[0]
    out: list[int] = []
    for k, cl in enumerate(lines):
        line_no = first + k
        if line_no >= len(starts):
            return None
        a = starts[line_no]
        b = _line_end(chunk, starts, line_no)
        src = chunk[a:b].rstrip("\r")
        body = cl.strip()
        if not body:
            out.append(a + len(src))
            continue
        if in_cell:
            lo = row_cursor.get(line_no, 0)
            pos = src.find(body, lo)
            if pos < 0:
                return None
            row_cursor[line_no] = pos + len(body)
        else:
            trimmed = src.rstrip()
            pos = len(trimmed) - len(body) if trimmed.endswith(body) else src.find(body)
            if pos < 0:
                return None
        out.append(a + pos)
    return out


def _inline(chunk, starts, tok, keep: bytearray, out: ChunkProse, in_cell: bool, row_cursor) -> tuple[int, int] | None:
    """Walk one inline token's children over its source; mark the prose characters in ``keep``.
    Returns the region's (start, end) in chunk offsets."""
    content: str = tok.content
    line_offs = _locate_lines(chunk, starts, tok, in_cell, row_cursor)
    if line_offs is None:
        return None
    # content index -> chunk offset, per content line (leading blanks of a line are not mapped)
    leads: list[tuple[int, int, int]] = []  # (content line start, its lead, chunk offset of first char)
    ci = 0
    for k, cl in enumerate(content.split("\n")):
        lead = len(cl) - len(cl.lstrip())
        leads.append((ci, ci + lead, line_offs[k]))
        ci += len(cl) + 1

    def to_chunk(c: int) -> int:
        # last line starting at or before c
        lo, hi = 0, len(leads) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if leads[mid][0] <= c:
                lo = mid
            else:
                hi = mid - 1
        _, first_char, off = leads[lo]
        return off + (c - first_char)

    def keep_span(ca: int, cb: int, text: str) -> bool:
        """Mark content[ca:cb] visible if it sits verbatim at its mapped place in the chunk."""
        if cb <= ca:
            return True
        pieces = []
        c = ca
        while c < cb:  # piece by piece, line by line
            nl = content.find("\n", c, cb)
            e = cb if nl < 0 else nl
            if e > c:
                da = to_chunk(c)
                if chunk[da:da + (e - c)] != content[c:e]:
                    return False
                pieces.append((da, da + (e - c)))
            c = e + 1
            while c < cb and content[c] in " \t":
                c += 1
        for da, db in pieces:
            keep[da:db] = b"\x01" * (db - da)
        return True

    # block markers before each line (list bullets, quote marks, heading hashes, cell bars) stay
    # visible: they end a sentence for the rules that read what precedes a name
    for off in line_offs:
        ls = chunk.rfind("\n", 0, off) + 1
        for p in range(ls, off):
            if chunk[p] in _BLOCK_MARKS:
                keep[p] = 1
    c = 0
    n = len(content)
    strong: list[int] = []
    em: list[int] = []
    link_start: int | None = None
    children = tok.children or []
    i = 0
    while i < len(children):
        ch = children[i]
        t = ch.type
        if t == "text":
            s = ch.content
            if not s:
                i += 1
                continue
            if not content.startswith(s, c):
                pos = content.find(s, c)
                if pos < 0:
                    break
                c = pos
            _keep_text(content, c, c + len(s), keep_span, out, to_chunk)
            c += len(s)
        elif t == "text_special":
            if content.startswith(ch.markup, c):
                c += len(ch.markup)
            else:
                break
        elif t in ("softbreak", "hardbreak"):
            nl = content.find("\n", c)
            if nl < 0:
                break
            c = nl + 1
            while c < n and content[c] in " \t":
                c += 1
        elif t == "code_inline":
            c = _skip_code(content, c, ch.markup)
        elif t == "html_inline":
            if content.startswith(ch.content, c):
                dm = _DIRECTIVE.fullmatch(ch.content)
                if dm:
                    out.directives.append((to_chunk(c), dm.group(1)))  # type: ignore[arg-type]
                c += len(ch.content)
            else:
                break
        elif t in ("em_open", "strong_open", "s_open", "em_close", "strong_close", "s_close"):
            m = ch.markup
            if not content.startswith(m, c):
                break
            if t != "s_open" and t != "s_close":
                stack = strong if t.startswith("strong") else em
                target = out.bold if t.startswith("strong") else out.italic
                if t.endswith("_open"):
                    stack.append(to_chunk(c + len(m)))
                elif stack:
                    target.append((stack.pop(), to_chunk(c)))
            keep_span(c, c + len(m), m)
            c += len(m)
        elif t == "link_open":
            if ch.markup == "autolink" or ch.info == "auto":
                close = content.find(">", c)
                if close < 0:
                    break
                c = close + 1
                while i < len(children) and children[i].type != "link_close":
                    i += 1
            else:
                if not content.startswith("[", c):
                    break
                keep_span(c, c + 1, "[")
                c += 1
                link_start = to_chunk(c)
        elif t == "link_close":
            if ch.markup == "autolink" or ch.info == "auto":
                pass
            else:
                if not content.startswith("]", c):
                    break
                if link_start is not None:
                    out.links.append((link_start, to_chunk(c)))
                    link_start = None
                keep_span(c, c + 1, "]")
                c = _skip_link_tail(content, c + 1)
        elif t == "image":
            c = _skip_image(content, c)
        else:  # a construct this walker does not know: stop (what follows gets no hovers)
            break
        if c < 0:
            break
        i += 1
    return line_offs[0], to_chunk(n) if n else line_offs[0]


def _keep_text(content: str, a: int, b: int, keep_span, out: ChunkProse, to_chunk) -> None:
    """Keep a text run visible, except bare URLs and e-mail addresses; of a wiki link
    (``[[target|label]]``) only the label (or the target when there is no label) is prose."""
    s = content[a:b]
    visible: list[tuple[int, int]] = []
    pos = 0
    for m in _WIKI.finditer(s):
        visible.append((pos, m.start()))
        if m.group(1):  # ![[embed]]: an image or note embed, never prose
            pass
        elif m.group(3) is not None:
            visible.append((m.start(3), m.end(3)))
            out.links.append((to_chunk(a + m.start(3)), to_chunk(a + m.end(3))))
        else:
            visible.append((m.start(2), m.end(2)))
            out.links.append((to_chunk(a + m.start(2)), to_chunk(a + m.end(2))))
        pos = m.end()
    visible.append((pos, len(s)))
    for va, vb in visible:
        piece = s[va:vb]
        p = 0
        for m in _URL.finditer(piece):
            keep_span(a + va + p, a + va + m.start(), piece[p:m.start()])
            p = m.end()
        keep_span(a + va + p, a + vb, piece[p:])


def _skip_code(content: str, c: int, markup: str) -> int:
    n = len(markup)
    if not content.startswith(markup, c):
        return -1
    pos = c + n
    while True:
        pos = content.find(markup, pos)
        if pos < 0:
            return -1
        end = pos + n
        if (pos == 0 or content[pos - 1] != "`") and (end >= len(content) or content[end] != "`"):
            return end
        while pos < len(content) and content[pos] == "`":
            pos += 1


def _skip_balanced(content: str, c: int, open_ch: str, close_ch: str) -> int:
    """Index after the bracket closing the one at ``c`` (escapes honoured), or -1."""
    depth = 0
    i = c
    n = len(content)
    while i < n:
        ch = content[i]
        if ch == "\\":
            i += 2
            continue
        if ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def _skip_link_tail(content: str, c: int) -> int:
    """After a link's ``]``: skip ``(destination "title")`` or ``[label]``."""
    if c < len(content) and content[c] == "(":
        return _skip_balanced(content, c, "(", ")")
    if c < len(content) and content[c] == "[":
        return _skip_balanced(content, c, "[", "]")
    return c


def _skip_image(content: str, c: int) -> int:
    if not content.startswith("![", c):
        return -1
    end = _skip_balanced(content, c + 1, "[", "]")
    if end < 0:
        return -1
    return _skip_link_tail(content, end)
