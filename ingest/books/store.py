"""A parsed book into the user's store: its nodes, its tree, and the pages it gives bundled entries.

- Every heading and sidebar becomes an ``entry`` node (type ``book-section`` / ``sidebar``) under a ``book``
  node, with the book's title and the printed page, so it is found by BM25 and vectors, hovered and cited
  like the bundled entries. The origin ``books:<name>`` owns them; re-adding a book replaces them.
- The tree itself is kept as JSON in the store's own ``user_books`` table (never in the package): the
  files stay on the user's machine and ``books list`` reads it back.
- A section whose name is a bundled entry's name, under a chapter naming that entry's type (a
  "Frightened" section under "Conditions" -> ``pf2e:condition:frightened``), or whose name is a unique
  bundled entry, is matched: a ``ref`` edge links them, and when the book is the entry's own book (by
  title) the entry takes the page. The entry's previous page is kept in ``user_book_pages`` so
  ``books remove`` restores it, and ``reapply_pages`` puts the pages back after a corpus re-ingest.

The two tables belong to this module; they live in the store's database next to the graph.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from pydantic import BaseModel, Field

from gmprep.common.errors import GmprepError
from gmprep.common.settings import Settings
from gmprep.ingest.aon_rules import is_prose_id
from gmprep.ingest.books.tree import LEVEL_NAMES, BookTree, Section
from gmprep.ingest.corpus import CHAPTER_TITLES, slug
from gmprep.kg.models import Edge, Node
from gmprep.kg.store import Store

ORIGIN_PREFIX = "books:"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS user_books(
  name TEXT PRIMARY KEY, title TEXT NOT NULL, source TEXT NOT NULL, format TEXT NOT NULL, digest TEXT NOT NULL,
  pages INTEGER NOT NULL, sections INTEGER NOT NULL, added_at TEXT NOT NULL, tree TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS user_book_pages(
  entry_id TEXT PRIMARY KEY, name TEXT NOT NULL, page TEXT NOT NULL, prev_page TEXT
);
"""
# chapter title (lower case, singular or plural) -> bundled entry type: "Conditions" -> condition
_TYPE_OF_TITLE = {t.lower(): k for k, t in CHAPTER_TITLES.items()}
_TYPE_OF_TITLE.update({t.lower().rstrip("s"): k for k, t in CHAPTER_TITLES.items()})
_TYPE_OF_TITLE.update({k.replace("-", " "): k for k in CHAPTER_TITLES})


class BookInfo(BaseModel):
    """One added book, as ``books list`` shows it."""

    name: str
    title: str
    source: str
    format: str
    pages: int
    sections: int
    matched: int = 0
    added_at: str = ""


class BooksReport(BaseModel):
    """What ``books add`` did."""

    name: str
    title: str
    pages: int
    nodes: int
    matched: int = 0  # bundled entries linked to a section
    paged: int = 0  # of those, entries that took the page (the book is their own book)
    nodes_embedded: int = 0
    messages: list[str] = Field(default_factory=list)
    seconds: float = 0.0


def parse_book(path: Path, title: str | None = None) -> BookTree:
    """The reader for the file's kind: PDF, markdown or HTML. Anything else is a one-line error."""
    path = Path(path)
    if not path.is_file():
        raise GmprepError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        try:
            from gmprep.ingest.books.pdf import parse_pdf
        except ModuleNotFoundError as exc:  # pdfminer.six is the optional extra
            raise GmprepError("reading PDFs needs the 'books' extra: pip install 'gmprep[books]'") from exc
        return parse_pdf(path, title)
    from gmprep.ingest.books.markup import parse_html, parse_markdown

    if suffix in (".md", ".markdown"):
        return parse_markdown(path, title)
    if suffix in (".html", ".htm", ".xhtml"):
        return parse_html(path, title)
    raise GmprepError(f"{path.name}: not a PDF, markdown or HTML file")


def _norm_book(title: str | None) -> str:
    """A book title without the words every title shares: "Pathfinder Player Core" -> "player core"."""
    words = re.findall(r"[a-z0-9]+", (title or "").lower())
    return " ".join(w for w in words if w not in {"pathfinder", "second", "edition", "2e", "remaster", "the"})


def same_book(a: str | None, b: str | None) -> bool:
    """Whether two titles name one book ("Player Core" = "Pathfinder Player Core", not "Player Core 2")."""
    return bool(_norm_book(a)) and _norm_book(a) == _norm_book(b)


def _ensure_tables(store: Store) -> None:
    with store.db:
        store.db.executescript(_SCHEMA)


def _has_books(store: Store) -> bool:
    """Whether any book was ever added (readers must not create tables: the store may be read-only)."""
    return store.db.execute("SELECT 1 FROM sqlite_master WHERE name='user_books'").fetchone() is not None


def _type_hints(ancestors: list[str]) -> set[str]:
    hints = set()
    for name in ancestors:
        key = " ".join(re.findall(r"[a-z0-9]+", name.lower()))
        if key in _TYPE_OF_TITLE:
            hints.add(_TYPE_OF_TITLE[key])
    return hints


def _match(store: Store, name: str, ancestors: list[str], title: str) -> str | None:
    """The bundled entry this section is, or None when the name is absent or ambiguous."""
    rows = store.db.execute(
        "SELECT node_id, type, book FROM nodes WHERE kind='entry' AND origin LIKE 'corpus:%' AND lower(name)=lower(?)",
        (name.strip(),),
    ).fetchall()
    if not rows:
        return None
    hints = _type_hints(ancestors)
    if hints:
        pool = [r for r in rows if r[1] in hints] or ([] if len(rows) > 1 else rows)
    else:
        # with no chapter naming a type, a section is not a trait's glossary line: a rulebook's
        # "Exploration" chapter is the rules of exploration, not the exploration trait
        pool = [r for r in rows if r[1] != "trait"]
    if len(pool) > 1:  # a book's own rules section shares its name with the action or condition it is
        pool = [r for r in pool if not is_prose_id(r[0])] or pool
    if len(pool) > 1:  # the same name in several books: the one this book is
        pool = [r for r in pool if same_book(r[2], title)] or pool
    return pool[0][0] if len(pool) == 1 else None


def book_nodes(tree: BookTree, name: str) -> tuple[Node, list[tuple[Node, Section, list[str]]], list[Edge]]:
    """The book node, each section's node (with its section and ancestor titles) and the structural edges."""
    origin = ORIGIN_PREFIX + name
    root_id = f"userbook:{name}"
    book = Node(node_id=root_id, source_id=root_id, kind="book", name=tree.title, type="book", book=tree.title,
                text=tree.preface, origin=origin, fields={"source": tree.source, "format": tree.format})
    out: list[tuple[Node, Section, list[str]]] = []
    edges: list[Edge] = []
    used: set[str] = set()

    def visit(sec: Section, parent: Node, trail: list[str], ancestors: list[str]) -> Node:
        base = f"{root_id}/{'/'.join([*trail, slug(sec.title) or 'section'])}"
        node_id, n = base, 2
        while node_id in used:
            node_id, n = f"{base}-{n}", n + 1
        used.add(node_id)
        node = Node(
            node_id=node_id, source_id=node_id, kind="entry", name=sec.title,
            type="sidebar" if sec.kind == "sidebar" else "book-section", book=tree.title, page=sec.page,
            text=sec.text, path=[tree.title, *ancestors], parent_id=parent.node_id, origin=origin,
            fields={"level": sec.level, "level_name": LEVEL_NAMES.get(sec.level, "subsection"),
                    "number": sec.number, "physical_page": sec.physical_page},
        )
        out.append((node, sec, ancestors))
        edges.append(Edge(src=node_id, dst=parent.node_id, kind="parent"))
        kids = [visit(c, node, [*trail, slug(sec.title) or "section"], [*ancestors, sec.title]) for c in sec.children]
        for a, b in zip(kids, kids[1:], strict=False):
            edges.append(Edge(src=a.node_id, dst=b.node_id, kind="next"))
        return node

    tops = [visit(s, book, [], []) for s in tree.sections]
    for a, b in zip(tops, tops[1:], strict=False):
        edges.append(Edge(src=a.node_id, dst=b.node_id, kind="next"))
    book.summary = f"{tree.title}: " + ", ".join(s.title for s in tree.sections[:40])
    return book, out, edges


def add_book(settings: Settings, path: Path, title: str | None = None, name: str | None = None,
             progress: bool = True, embed: bool = True) -> BooksReport:
    """Parse ``path`` and put it into the store (replacing an earlier copy of the same book)."""
    from gmprep.ingest.pipeline import _tqdm_progress, embed_pending

    t0 = time.perf_counter()
    tree = parse_book(path, title)
    name = slug(name or tree.title) or slug(Path(path).stem) or "book"
    book, sections, edges = book_nodes(tree, name)
    store = Store.open(settings.store_dir)
    report = BooksReport(name=name, title=tree.title, pages=tree.pages, nodes=1 + len(sections))
    try:
        _ensure_tables(store)
        if not store.db.execute("SELECT 1 FROM nodes WHERE origin LIKE 'corpus:%' LIMIT 1").fetchone():
            report.messages.append("the store holds no bundled entries yet (run `gmprep index build`): "
                                   "sections were not matched to rules")
        matches: dict[str, str] = {}  # entry id -> section node id (first section of that name wins)
        for node, sec, ancestors in sections:
            if sec.kind != "heading":
                continue
            entry = _match(store, sec.title, ancestors, tree.title)
            if entry and entry not in matches:
                matches[entry] = node.node_id
                node.fields["matches"] = entry
                edges.append(Edge(src=node.node_id, dst=entry, kind="ref"))
        _restore_pages(store, name)  # an earlier copy of this book: its pages go before the new ones do
        removed = store.replace_origin(ORIGIN_PREFIX + name, [book, *(n for n, _, _ in sections)], edges,
                                       tree.digest, str(Path(path).resolve()))
        store.remove_vectors(removed)
        by_id = {n.node_id: n for n, _, _ in sections}
        with store._lock, store.db:
            for entry, sec_id in matches.items():
                row = store.db.execute("SELECT book, page FROM nodes WHERE node_id=?", (entry,)).fetchone()
                page = by_id[sec_id].page
                if row is None or page is None or not same_book(row[0], tree.title):
                    continue
                store.db.execute(
                    "INSERT INTO user_book_pages(entry_id, name, page, prev_page) VALUES(?, ?, ?, ?) "
                    "ON CONFLICT(entry_id) DO UPDATE SET name=excluded.name, page=excluded.page",
                    (entry, name, page, row[1]),
                )
                store.db.execute("UPDATE nodes SET page=? WHERE node_id=?", (page, entry))
                report.paged += 1
            store.db.execute(
                "INSERT OR REPLACE INTO user_books(name, title, source, format, digest, pages, sections, added_at, tree) "
                "VALUES(?, ?, ?, ?, ?, ?, ?, datetime('now'), ?)",
                (name, tree.title, tree.source, tree.format, tree.digest, tree.pages, len(sections),
                 tree.model_dump_json()),
            )
        report.matched = len(matches)
        if embed:
            report.nodes_embedded = embed_pending(store, settings, _tqdm_progress() if progress else None)
    finally:
        store.close()
    report.seconds = round(time.perf_counter() - t0, 2)
    return report


def _restore_pages(store: Store, name: str) -> None:
    """Give the entries that took their page from book ``name`` their previous page back."""
    _ensure_tables(store)
    with store._lock, store.db:
        rows = store.db.execute("SELECT entry_id, prev_page FROM user_book_pages WHERE name=?", (name,)).fetchall()
        store.db.executemany("UPDATE nodes SET page=? WHERE node_id=?", [(prev, e) for e, prev in rows])
        store.db.execute("DELETE FROM user_book_pages WHERE name=?", (name,))


def reapply_pages(store: Store) -> int:
    """After the corpus was re-ingested (its nodes replaced), put the books' pages back; returns how many.
    A store no book was ever added to is left exactly as it is."""
    if not _has_books(store):
        return 0
    with store._lock, store.db:
        rows = store.db.execute("SELECT entry_id, page FROM user_book_pages").fetchall()
        store.db.executemany("UPDATE nodes SET page=? WHERE node_id=?", [(p, e) for e, p in rows])
    return len(rows)


def list_books(settings: Settings) -> list[BookInfo]:
    """The books added to the store, by name."""
    store = Store.open(settings.store_dir, create=False)
    try:
        if not _has_books(store):
            return []
        rows = store.db.execute(
            "SELECT name, title, source, format, pages, sections, added_at FROM user_books ORDER BY name"
        ).fetchall()
        out = []
        for name, title, source, fmt, pages, sections, added in rows:
            matched = store.db.execute(
                "SELECT count(*) FROM edges WHERE origin=? AND kind='ref'", (ORIGIN_PREFIX + name,)
            ).fetchone()[0]
            out.append(BookInfo(name=name, title=title, source=source, format=fmt, pages=pages, sections=sections,
                                matched=matched, added_at=added))
        return out
    finally:
        store.close()


def book_tree(settings: Settings, name: str) -> BookTree:
    """The stored tree of book ``name``."""
    store = Store.open(settings.store_dir, create=False)
    try:
        row = store.db.execute("SELECT tree FROM user_books WHERE name=?", (name,)).fetchone() if _has_books(store) else None
    finally:
        store.close()
    if row is None:
        raise GmprepError(f"no book named {name!r}: see `gmprep books list`")
    return BookTree.model_validate(json.loads(row[0]))


def remove_book(settings: Settings, name: str) -> int:
    """Remove book ``name``: its nodes, vectors and tree; bundled entries get their old pages back."""
    Store.open(settings.store_dir, create=False).close()  # a clear error when there is no store at all
    store = Store.open(settings.store_dir)  # a writer: a read-only store is refused with a clear error
    try:
        _ensure_tables(store)
        if not store.db.execute("SELECT 1 FROM user_books WHERE name=?", (name,)).fetchone():
            known = ", ".join(n for (n,) in store.db.execute("SELECT name FROM user_books")) or "none"
            raise GmprepError(f"no book named {name!r} (added books: {known})")
        _restore_pages(store, name)
        removed = store.remove_origin(ORIGIN_PREFIX + name)
        store.remove_vectors(removed)
        with store._lock, store.db:
            store.db.execute("DELETE FROM user_books WHERE name=?", (name,))
        return len(removed)
    finally:
        store.close()
