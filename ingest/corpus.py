"""The bundled PF2e Remaster corpus -> graph nodes and edges.

Hierarchy: book > chapter (one per entry type) > [section ...] > entry. Class features hang under
their class entry and heritages under their ancestry entry, as in the books. Edges: parent,
next (sibling order), ref (the corpus ``links``) and trait (entry -> its trait glossary entry).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from gmprep.kg.models import Edge, Node

log = logging.getLogger(__name__)

CORPUS_ORIGIN = "corpus:pf2e"
CHAPTER_TITLES = {
    "action": "Actions", "ancestry": "Ancestries", "archetype": "Archetypes", "background": "Backgrounds",
    "class": "Classes", "class-feature": "Class Features", "condition": "Conditions", "creature": "Creatures",
    "equipment": "Equipment", "feat": "Feats", "hazard": "Hazards", "heritage": "Heritages", "rule": "Rules",
    "spell": "Spells", "trait": "Traits", "skill": "Skills",
}
NO_BOOK = "GM Screen (index pages)"
# A trait slug with a value ("deadly-d10", "thrown-20", "versatile-p") points at its base trait entry.
_TRAIT_VALUE = re.compile(r"^(.+?)-(d\d+|\d+|[a-z])$")


def slug(text: str) -> str:
    """Lowercase ascii slug used for structural node ids."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def corpus_dir() -> Path:
    """The folder of the bundled, gzip-compressed corpus inside the installed package."""
    return Path(str(resources.files("gmprep.ingest") / "data" / "pf2e"))


@dataclass
class CorpusLoad:
    """Nodes and edges read from the corpus, plus the lines that could not be read."""

    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    digest: str = ""


def _open(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")


def iter_records(folder: Path, errors: list[str]) -> Iterator[dict]:
    """Yield corpus records from every ``*.jsonl`` / ``*.jsonl.gz`` file; bad lines are reported, skipped."""
    files = sorted(p for p in folder.iterdir() if p.name.endswith((".jsonl", ".jsonl.gz")))
    for path in files:
        with _open(path) as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                    if not isinstance(rec, dict) or not {"id", "name", "type"} <= rec.keys():
                        raise ValueError("missing id/name/type")
                except ValueError as exc:
                    errors.append(f"{path.name}:{lineno}: skipped malformed corpus line ({exc})")
                    continue
                yield rec


def corpus_digest(folder: Path) -> str:
    """sha256 over the corpus files' decompressed bytes: the store records it to detect a changed corpus."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.iterdir() if p.name.endswith((".jsonl", ".jsonl.gz"))):
        h.update(path.name.removesuffix(".gz").encode())
        with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as fh:
            h.update(fh.read())
    return h.hexdigest()[:16]


def trait_entry_id(trait: str, ids: set[str]) -> str | None:
    """``deadly-d10`` -> ``pf2e:trait:deadly`` when only the base trait has an entry."""
    tid = f"pf2e:trait:{trait}"
    if tid in ids:
        return tid
    m = _TRAIT_VALUE.match(trait)
    if m and f"pf2e:trait:{m.group(1)}" in ids:
        return f"pf2e:trait:{m.group(1)}"
    return None


def load_corpus(folder: Path | None = None) -> CorpusLoad:
    """Read the corpus folder (default: the bundled one) into nodes and edges."""
    folder = folder or corpus_dir()
    out = CorpusLoad(digest=corpus_digest(folder))
    records = list(iter_records(folder, out.errors))
    for msg in out.errors:
        log.warning(msg)
    ids = {r["id"] for r in records}
    structural: dict[str, Node] = {}

    def ensure(node_id: str, kind: str, name: str, parent: str | None, book: str | None, path: list[str]) -> str:
        if node_id not in structural:
            structural[node_id] = Node(
                node_id=node_id, source_id=node_id, kind=kind, name=name, type=kind, book=book,
                path=path, parent_id=parent, origin=CORPUS_ORIGIN,
            )
        return node_id

    children: dict[str, list[Node]] = {}
    for rec in records:
        book = rec.get("book") or NO_BOOK
        book_id = ensure(f"book:{slug(book)}", "book", book, None, rec.get("book"), [])
        etype = rec["type"]
        chap_name = CHAPTER_TITLES.get(etype, etype.title())
        parent = ensure(f"{book_id}/{etype}", "chapter", chap_name, book_id, rec.get("book"), [book])
        path = [book, chap_name]
        fields = rec.get("fields") or {}
        section = rec.get("section") or []
        if etype == "rule" and len(section) > 1:
            # GM-screen pages: intermediate section headings become section nodes
            for title in section[:-1]:
                parent = ensure(f"{parent}/{slug(title)}", "section", title, parent, rec.get("book"), list(path))
                path = [*path, title]
        elif etype == "class-feature" and f"pf2e:class:{slug(fields.get('class', ''))}" in ids:
            parent = f"pf2e:class:{slug(fields['class'])}"
            path = [*path, fields["class"]]
        elif etype == "heritage" and f"pf2e:ancestry:{slug(fields.get('ancestry', ''))}" in ids:
            parent = f"pf2e:ancestry:{slug(fields['ancestry'])}"
            path = [*path, fields["ancestry"]]
        node = Node(
            node_id=rec["id"], source_id=rec["id"], kind="entry", name=rec["name"], type=etype,
            book=rec.get("book"), page=rec.get("page"), traits=list(rec.get("traits") or []),
            rarity=rec.get("rarity"), level=rec.get("level"), text=rec.get("text") or "",
            path=path, parent_id=parent, origin=CORPUS_ORIGIN, fields=fields,
        )
        out.nodes.append(node)
        children.setdefault(parent, []).append(node)
        for link in rec.get("links") or []:
            if link in ids and link != rec["id"]:
                out.edges.append(Edge(src=rec["id"], dst=link, kind="ref"))
        for trait in node.traits:
            tid = trait_entry_id(trait, ids)
            if tid and tid != rec["id"]:
                out.edges.append(Edge(src=rec["id"], dst=tid, kind="trait"))
        if etype == "feat" and fields.get("archetype"):
            aid = f"pf2e:archetype:{slug(fields['archetype'])}"
            if aid in ids:
                out.edges.append(Edge(src=rec["id"], dst=aid, kind="ref"))

    for node in structural.values():
        if node.parent_id:
            children.setdefault(node.parent_id, []).append(node)
    for node in [*structural.values(), *out.nodes]:
        if node.parent_id:
            out.edges.append(Edge(src=node.node_id, dst=node.parent_id, kind="parent"))
    for kids in children.values():
        kids.sort(key=lambda n: (n.level if n.level is not None else -99, n.name.lower()))
        for a, b in zip(kids, kids[1:], strict=False):
            out.edges.append(Edge(src=a.node_id, dst=b.node_id, kind="next"))
    summarize_parents(list(structural.values()), children)
    out.nodes = [*structural.values(), *out.nodes]
    return out


def summarize_parents(parents: list[Node], children: dict[str, list[Node]], max_names: int = 60) -> None:
    """Extractive summary for structural nodes: what they hold and the names of their children."""
    for node in parents:
        kids = children.get(node.node_id, [])
        names = ", ".join(k.name for k in kids[:max_names])
        more = f" and {len(kids) - max_names} more" if len(kids) > max_names else ""
        node.summary = f"{node.name}: {len(kids)} entries: {names}{more}."
