"""Typed records that cross the kg boundary: nodes, edges, search filters and hits."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

NodeKind = Literal["book", "chapter", "section", "entry"]
EdgeKind = Literal["parent", "next", "ref", "trait"]


class Node(BaseModel):
    """One node of the graph: a book, a chapter (entry type), a section, or an entry.

    ``node_id`` is unique in the store. For corpus entries it equals the corpus ``id``
    (``pf2e:condition:frightened``), which is also kept as ``source_id`` for citations.
    Structural nodes use ids such as ``book:pathfinder-player-core`` and
    ``book:pathfinder-player-core/condition``; notes use ``note:<relpath>#<slug>``.
    """

    node_id: str
    source_id: str
    kind: NodeKind
    name: str
    type: str  # corpus type (condition, spell, ...), or book/chapter/section/note
    book: str | None = None
    page: str | None = None
    traits: list[str] = Field(default_factory=list)
    rarity: str | None = None
    level: int | None = None
    text: str = ""
    summary: str = ""
    path: list[str] = Field(default_factory=list)  # ancestor names, book first
    parent_id: str | None = None
    origin: str = "corpus:pf2e"  # which ingested source owns the node (corpus or notes file)
    aliases: list[str] = Field(default_factory=list)
    fields: dict = Field(default_factory=dict)  # type-specific stat fields, as the corpus has them

    @property
    def is_prose(self) -> bool:
        """A section of a book's rules prose (``fields.hover_name`` false, ``ingest/aon_rules.py``):
        searchable and citable, but its title is a heading, not a name GMs write."""
        return self.fields.get("hover_name") is False


class Edge(BaseModel):
    """A directed edge. ``parent`` points child -> parent, ``next`` points to the next sibling,
    ``ref`` is a reference found in the text or links, ``trait`` points an entry to its trait entry."""

    src: str
    dst: str
    kind: EdgeKind


class SearchFilters(BaseModel):
    """Filters applied to every candidate; empty means no restriction."""

    books: list[str] = Field(default_factory=list)
    types: list[str] = Field(default_factory=list)
    traits: list[str] = Field(default_factory=list)
    rarities: list[str] = Field(default_factory=list)
    level_min: int | None = None
    level_max: int | None = None
    kinds: list[NodeKind] = Field(default_factory=lambda: list[NodeKind](["entry"]))
    origins: list[str] = Field(default_factory=list)  # prefix match, e.g. "corpus:" or "notes:"


class Hit(BaseModel):
    """One search result, complete enough to cite: id, name, type, book, page, path, score, text."""

    source_id: str
    node_id: str
    name: str
    type: str
    book: str | None = None
    page: str | None = None
    path: list[str] = Field(default_factory=list)
    level: int | None = None
    traits: list[str] = Field(default_factory=list)
    score: float
    text: str
    origin: str = "corpus:pf2e"
    via: str = "seed"  # how it was found: name, seed, rerank, expand:<edge kind> from <id>
    # the type's fields the text leaves out (``kg.render.plain_stat_line``: a spell's range and duration, an
    # ancestry's Hit Points and Speed), so an answer given this passage can state and cite them
    stats: str = ""

    def passage(self) -> str:
        """What an answer is given to read and is checked against: the stat line, then the text."""
        return f"{self.stats}\n{self.text}" if self.stats else self.text

    def citation(self) -> str:
        """Human citation: ``Name (Book, p. X) [id]``."""
        return Citation.from_hit(self).label()


_PAGE_RANGE = re.compile(r"^\d+\s*[-\u2013]\s*\d+$")


def where_cited(book: str | None, page: str | None) -> str:
    """How a source is written, for every record that cites one (``Citation.where`` and the creators'
    table citations): "Book, p. 83", "Book, pp. 192-195", "notes/x.md, line 12", "Book" (page unknown)."""
    book = book or "no book"
    page = (page or "").strip()
    if not page:
        return book
    if page.isdigit():
        return f"{book}, p. {page}"
    if _PAGE_RANGE.match(page):
        return f"{book}, pp. {page}"
    return f"{book}, {page}"


class Citation(BaseModel):
    """What an answer or a hover cites: enough to name the source and open the entry.

    The one owner of how a source is written: ``where()`` gives "Book, p. 83", "Book, pp. 192-195" for a
    page range, "notes/x.md, line 12" for a page that is not a number, and the book alone when the
    page is unknown; ``label()`` gives "Name (where) [id]". Every hover, answer, export and CLI listing
    writes sources through these two."""

    source_id: str
    name: str
    type: str
    book: str | None = None
    page: str | None = None
    path: list[str] = Field(default_factory=list)

    @classmethod
    def from_hit(cls, hit: Hit) -> Citation:
        """The citation of a search hit."""
        return cls(source_id=hit.source_id, name=hit.name, type=hit.type, book=hit.book, page=hit.page, path=hit.path)

    @classmethod
    def from_node(cls, node: Node) -> Citation:
        """The citation of a graph node."""
        return cls(source_id=node.source_id, name=node.name, type=node.type, book=node.book, page=node.page, path=node.path)

    def where(self) -> str:
        """``Book, p. N`` (``pp. N-M`` for a range, the page as written when it is not a number)."""
        return where_cited(self.book, self.page)

    def label(self) -> str:
        """``Name (Book, p. N) [source id]``: one source on one line."""
        return f"{self.name} ({self.where()}) [{self.source_id}]"
