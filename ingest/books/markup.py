"""Markdown and HTML exports of a book -> ``BookTree``: the headings give the hierarchy.

Heading levels are ranked as used (an export whose top headings are ``h2`` gets chapters from ``h2``); a
single top heading that opens the file is the book's title when none is given. Exports carry no pages.
"""

from __future__ import annotations

import hashlib
from html.parser import HTMLParser
from pathlib import Path

from markdown_it import MarkdownIt

from gmprep.ingest.books.tree import BookTree, Section, nest, split_number

_md = MarkdownIt("commonmark").enable("table")

# one block of the export: (heading level or None for body text, text)
Block = tuple[int | None, str]


def _tree(blocks: list[Block], title: str | None, source: str, fmt: str, digest: str) -> BookTree:
    levels = [lv for lv, _ in blocks if lv is not None]
    first_heading = next((i for i, (lv, _) in enumerate(blocks) if lv is not None), None)
    # "# Title" opening the file and never used again at that level: the book's title, not a chapter
    if first_heading is not None and levels.count(min(levels)) == 1 and blocks[first_heading][0] == min(levels):
        found = blocks[first_heading][1]
        blocks = blocks[:first_heading] + blocks[first_heading + 1 :]
        title = title or found
        levels = [lv for lv, _ in blocks if lv is not None]
    rank = {lv: i + 1 for i, lv in enumerate(sorted(set(levels)))}
    flat: list[tuple[Section, int]] = []
    preface: list[str] = []
    bodies: dict[int, list[str]] = {}
    current = preface
    for lv, text in blocks:
        if lv is None:
            current.append(text)
            continue
        number, name = split_number(text)
        sec = Section(title=name, level=rank[lv], number=number)
        flat.append((sec, rank[lv]))
        current = bodies[id(sec)] = []
    for sec, _ in flat:
        sec.text = "\n\n".join(t for t in bodies[id(sec)] if t.strip())
    return BookTree(title=title or Path(source).stem, source=source, format=fmt, digest=digest,
                    preface="\n\n".join(preface).strip(), sections=nest(flat))


def parse_markdown(path: Path, title: str | None = None) -> BookTree:
    """A markdown export: ATX/setext headings by markdown-it-py; body kept as the source markdown."""
    raw = Path(path).read_bytes()
    text = raw.decode("utf-8", errors="replace")
    lines = text.splitlines()
    tokens = _md.parse(text)
    heads = [(int(t.tag[1]), t.map[0], t.map[1], tokens[i + 1].content.strip())
             for i, t in enumerate(tokens) if t.type == "heading_open" and t.map]
    blocks: list[Block] = []
    pos = 0
    for level, start, end, name in heads:
        body = "\n".join(lines[pos:start]).strip()
        if body:
            blocks.append((None, body))
        blocks.append((level, name))
        pos = end
    tail = "\n".join(lines[pos:]).strip()
    if tail:
        blocks.append((None, tail))
    return _tree(blocks, title, Path(path).name, "markdown", hashlib.sha256(raw).hexdigest()[:16])


class _HtmlBlocks(HTMLParser):
    """h1-h6 as headings; paragraphs, list items and table rows as text (cells joined with `` | ``)."""

    _BREAK = {"p", "div", "li", "tr", "br", "section", "article", "table", "ul", "ol", "blockquote", "pre", "dd", "dt"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.buf: list[str] = []
        self.level: int | None = None
        self.skip = 0

    def _flush(self) -> None:
        text = " ".join("".join(self.buf).split())
        self.buf = []
        if text:
            if self.blocks and self.blocks[-1][0] is None and self.level is None:
                self.blocks[-1] = (None, self.blocks[-1][1] + "\n" + text)
            else:
                self.blocks.append((self.level, text))

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in ("script", "style", "head", "nav"):
            self.skip += 1
        elif len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self._flush()
            self.level = int(tag[1])
        elif tag in ("td", "th") and self.buf:
            self.buf.append(" | ")
        elif tag in self._BREAK:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head", "nav"):
            self.skip = max(0, self.skip - 1)
        elif len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self._flush()
            self.level = None
        elif tag in self._BREAK:
            self._flush()

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.buf.append(data)


def parse_html(path: Path, title: str | None = None) -> BookTree:
    """An HTML export (stdlib parser): headings by h1-h6, text by block elements."""
    raw = Path(path).read_bytes()
    parser = _HtmlBlocks()
    parser.feed(raw.decode("utf-8", errors="replace"))
    parser.close()
    parser._flush()
    # consecutive text blocks become paragraphs of one section
    return _tree(parser.blocks, title, Path(path).name, "html", hashlib.sha256(raw).hexdigest()[:16])
