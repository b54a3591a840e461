"""Markdown files (a GM's notes, homebrew, house rules, book text they own) -> graph nodes.

A file is split by its heading hierarchy with markdown-it-py: the file is a ``book``-level node and each
heading opens an ``entry`` node whose parent is the enclosing heading, so a section knows its ancestors.
``[[Wiki Links]]`` and links to other notes become ``ref`` edges.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

from gmprep.kg.models import Edge, Node

MAX_NOTE_BYTES = 2_000_000  # larger files are not notes; they are skipped with a message
_WIKI = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
_MDLINK = re.compile(r"\]\(([^)\s]+\.md)(?:#[^)]*)?\)")
_md = MarkdownIt("commonmark")


def note_origin(relpath: str) -> str:
    """The origin string that owns a note file's nodes."""
    return f"notes:{relpath}"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


@dataclass
class NoteLoad:
    """One note file's nodes and edges; ``error`` is set when the file could not be read."""

    relpath: str
    digest: str = ""
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    wiki_targets: list[tuple[str, str]] = field(default_factory=list)  # (src node id, link text)
    error: str | None = None


def read_note(path: Path, root: Path) -> NoteLoad:
    """Read and split one markdown file. Unreadable, binary or huge files give ``error``, not an exception."""
    relpath = path.relative_to(root).as_posix()
    out = NoteLoad(relpath=relpath)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        out.error = f"{relpath}: cannot read ({exc.strerror or exc})"
        return out
    if len(raw) > MAX_NOTE_BYTES:
        out.error = f"{relpath}: skipped, {len(raw) // 1024} KiB is too large for a note"
        return out
    if b"\x00" in raw:
        out.error = f"{relpath}: skipped, binary file"
        return out
    text = raw.decode("utf-8", errors="replace")
    out.digest = hashlib.sha256(raw).hexdigest()[:16]
    split_markdown(text, relpath, out)
    return out


def split_markdown(text: str, relpath: str, out: NoteLoad) -> None:
    """Fill ``out`` with one node per heading section of ``text`` (plus the file node)."""
    origin = note_origin(relpath)
    lines = text.splitlines()
    tokens = _md.parse(text)
    headings: list[tuple[int, int, str]] = []  # (level, line, title)
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map:
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            headings.append((int(tok.tag[1]), tok.map[0], title))
    file_id = f"note:{relpath}"
    title = relpath  # the file node is named by its path; its H1 (if any) is its first section
    first = headings[0][1] if headings else len(lines)
    preamble = "\n".join(lines[:first]).strip()
    file_node = Node(
        node_id=file_id, source_id=file_id, kind="book", name=title, type="note", book=f"notes/{relpath}",
        page="line 1", text=preamble, path=[], origin=origin,
    )
    out.nodes.append(file_node)
    stack: list[tuple[int, Node]] = []  # open headings: (level, node)
    used: set[str] = set()
    siblings: dict[str, list[str]] = {}
    for idx, (level, line, heading) in enumerate(headings):
        end = headings[idx + 1][1] if idx + 1 < len(headings) else len(lines)
        body = "\n".join(lines[line + 1 : end]).strip()
        while stack and stack[-1][0] >= level:
            stack.pop()
        parent = stack[-1][1] if stack else file_node
        base = f"{file_id}#{_slug(heading)}"
        node_id, n = base, 2
        while node_id in used:
            node_id, n = f"{base}-{n}", n + 1
        used.add(node_id)
        node = Node(
            node_id=node_id, source_id=node_id, kind="entry", name=heading or "(untitled)", type="note",
            book=f"notes/{relpath}", page=f"line {line + 1}", text=body,
            path=[*([file_node.name] if parent is file_node else [*parent.path, parent.name])],
            parent_id=parent.node_id, origin=origin,
        )
        out.nodes.append(node)
        out.edges.append(Edge(src=node_id, dst=parent.node_id, kind="parent"))
        siblings.setdefault(parent.node_id, []).append(node_id)
        stack.append((level, node))
        for m in _WIKI.finditer(body):
            out.wiki_targets.append((node_id, m.group(1).strip()))
        for m in _MDLINK.finditer(body):
            target = (Path(relpath).parent / m.group(1)).as_posix()
            out.edges.append(Edge(src=node_id, dst=f"note:{target}", kind="ref"))
    for kids in siblings.values():
        for a, b in zip(kids, kids[1:], strict=False):
            out.edges.append(Edge(src=a, dst=b, kind="next"))
    file_node.summary = f"{title}: " + ", ".join(h for _, _, h in headings[:40])


def find_notes(root: Path) -> list[Path]:
    """Markdown files under ``root`` (hidden folders such as .git and .gmprep skipped)."""
    if not root.is_dir():
        return []
    return sorted(
        p for p in root.rglob("*.md")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
