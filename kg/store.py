"""The knowledge-graph store: one folder holding

- ``graph.db``: SQLite with nodes, edges, per-source digests and metadata, plus an FTS5 table (BM25);
- ``vectors.usearch``: the usearch vector index (cosine), opened memory-mapped, keyed by node rowid.

The store records the embedder name and dimension, the corpus digest and a schema version, so a
store built by another embedder, from another corpus or by another version is detected
(``Store.health``) and rebuilt by the index pipeline, never used silently.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from gmprep.common.dbfiles import can_write, connect_read_only
from gmprep.common.errors import ReadOnlyError, StoreError
from gmprep.common.text import content_words, words
from gmprep.kg.models import Edge, Node

log = logging.getLogger(__name__)

SCHEMA_VERSION = "1"
DB_NAME = "graph.db"
VECTORS_NAME = "vectors.usearch"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nodes(
  rowid INTEGER PRIMARY KEY,
  node_id TEXT NOT NULL UNIQUE,
  source_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  book TEXT, page TEXT, rarity TEXT, level INTEGER,
  traits TEXT NOT NULL DEFAULT '[]',
  text TEXT NOT NULL DEFAULT '',
  summary TEXT NOT NULL DEFAULT '',
  path TEXT NOT NULL DEFAULT '[]',
  parent_id TEXT,
  origin TEXT NOT NULL,
  aliases TEXT NOT NULL DEFAULT '[]',
  fields TEXT NOT NULL DEFAULT '{}',
  embedded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS nodes_origin ON nodes(origin);
CREATE INDEX IF NOT EXISTS nodes_parent ON nodes(parent_id);
CREATE TABLE IF NOT EXISTS edges(
  src TEXT NOT NULL, dst TEXT NOT NULL, kind TEXT NOT NULL, origin TEXT NOT NULL,
  PRIMARY KEY(src, dst, kind)
);
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst);
CREATE INDEX IF NOT EXISTS edges_origin ON edges(origin);
CREATE TABLE IF NOT EXISTS sources(origin TEXT PRIMARY KEY, digest TEXT NOT NULL, path TEXT, updated_at TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
  name, aliases, path, body, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""

_NODE_COLS = (
    "node_id, source_id, kind, name, type, book, page, rarity, level, traits, text, summary, "
    "path, parent_id, origin, aliases, fields"
)
# BM25 column weights: name, aliases, path, body. A name hit matters most.
_BM25_WEIGHTS = (8.0, 6.0, 1.5, 1.0)


class StoreHealth(BaseModel):
    """What is wrong with a store, if anything, in words a user understands."""

    exists: bool
    problems: list[str] = Field(default_factory=list)
    needs_full_rebuild: bool = False
    needs_reembed: bool = False

    @property
    def ok(self) -> bool:
        return self.exists and not self.problems


def fts_query(text: str) -> str:
    """A safe FTS5 MATCH expression: the query's content words OR-ed, each quoted."""
    terms = content_words(text, min_len=2)
    seen: list[str] = []
    for t in terms or words(text):
        if t not in seen:
            seen.append(t)
    return " OR ".join(f'"{t}"' for t in seen)


def _node_from_row(row: sqlite3.Row | tuple) -> Node:
    (node_id, source_id, kind, name, ntype, book, page, rarity, level, traits, text, summary,
     path, parent_id, origin, aliases, fields) = row
    return Node(
        node_id=node_id, source_id=source_id, kind=kind, name=name, type=ntype, book=book, page=page,
        rarity=rarity, level=level, traits=json.loads(traits), text=text, summary=summary,
        path=json.loads(path), parent_id=parent_id, origin=origin, aliases=json.loads(aliases),
        fields=json.loads(fields),
    )


class Store:
    """Graph + BM25 + vectors in one folder. Thread-safe for reads; writes are serialised."""

    def __init__(self, root: Path, db: sqlite3.Connection, read_only: bool = False):
        self.root = root
        self.db = db
        self.read_only = read_only  # opened without write access (permissions or a read-only mount)
        self._lock = threading.RLock()
        self._vectors = None  # usearch Index (memory-mapped view), loaded lazily
        self._vectors_mtime: float | None = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ----- opening -------------------------------------------------------------------------------
    @classmethod
    def open(cls, root: Path | str, create: bool = True) -> Store:
        """Open (or create) the store in ``root``. A file that is not a SQLite database raises StoreError.

        ``create=False`` is a reader: a store the user may not write (permissions, read-only mount)
        opens read-only. A writer (``create=True``) on such a store gets ReadOnlyError, not "corrupt".
        """
        root = Path(root)
        db_path = root / DB_NAME
        if not db_path.exists() and not create:
            raise StoreError(f"no index in {root}: run `gmprep index build` first")
        if not can_write(db_path):
            if create:
                raise ReadOnlyError(
                    f"the index folder {root} is read-only: make it writable, or build an index in a folder "
                    "you can write with `gmprep --store DIR index build`"
                )
            try:
                return cls(root, connect_read_only(db_path, "meta"), read_only=True)
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"the index database {db_path} cannot be read ({exc}); rebuild it with `gmprep index build`") from exc
        root.mkdir(parents=True, exist_ok=True)
        try:
            db = sqlite3.connect(db_path, check_same_thread=False, timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"the index database {db_path} is corrupt ({exc}); rebuild it with `gmprep index build`") from exc
        return cls(root, db)

    def close(self) -> None:
        """Close the database and drop the vector view."""
        self._vectors = None
        self.db.close()

    @property
    def db_path(self) -> Path:
        return self.root / DB_NAME

    @property
    def vectors_path(self) -> Path:
        return self.root / VECTORS_NAME

    # ----- metadata ------------------------------------------------------------------------------
    @property
    def meta(self) -> dict[str, str]:
        """All metadata (embedder, embedder_dim, corpus_digest, schema_version, build_state ...)."""
        return dict(self.db.execute("SELECT key, value FROM meta"))

    def set_meta(self, **values: str) -> None:
        """Write metadata keys (committed)."""
        with self._lock, self.db:
            self.db.executemany(
                "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                [(k, str(v)) for k, v in values.items()],
            )

    def health(self, embedder: str | None = None, dim: int | None = None, corpus_digest: str | None = None) -> StoreHealth:
        """Check the store against what the caller expects; every problem is a sentence."""
        h = StoreHealth(exists=self.db_path.exists())
        try:
            self.db.execute("SELECT count(*) FROM nodes").fetchone()
            quick = self.db.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            h.problems.append(f"the index database is corrupt ({exc})")
            h.needs_full_rebuild = True
            return h
        if quick != "ok":
            h.problems.append(f"the index database failed its integrity check ({quick})")
            h.needs_full_rebuild = True
            return h
        meta = self.meta
        if meta.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
            h.problems.append(f"the index was built by another gmprep version (schema {meta.get('schema_version')})")
            h.needs_full_rebuild = True
        if corpus_digest and meta.get("corpus_digest") not in (None, corpus_digest):
            h.problems.append("the bundled corpus changed since the index was built")
        if embedder and meta.get("embedder") not in (None, embedder):
            h.problems.append(f"the index was built with embedder {meta.get('embedder')!r}, not {embedder!r}")
            h.needs_reembed = True
        if dim and meta.get("embedder_dim") not in (None, str(dim)):
            h.problems.append(f"the index vectors have dimension {meta.get('embedder_dim')}, not {dim}")
            h.needs_reembed = True
        embedded = self.db.execute("SELECT count(*) FROM nodes WHERE embedded=1").fetchone()[0]
        if embedded:
            try:
                count = self._open_vectors().size if self.vectors_path.exists() else None
            except StoreError as exc:
                count = None
                h.problems.append(str(exc))
            if count is None and not h.needs_reembed:
                if not any("vector" in p for p in h.problems):
                    h.problems.append(f"the vector file {self.vectors_path.name} is missing")
                h.needs_reembed = True
            elif count is not None and count != embedded:
                h.problems.append(f"the vector file holds {count} vectors but {embedded} nodes are embedded")
                h.needs_reembed = True
        return h

    # ----- writing -------------------------------------------------------------------------------
    def replace_origin(self, origin: str, nodes: Sequence[Node], edges: Sequence[Edge], digest: str, path: str | None = None) -> list[int]:
        """Replace everything one source (``origin``) owns in a single transaction; returns removed rowids.

        Vectors of removed nodes must be dropped by the caller with ``remove_vectors``.
        """
        with self._lock, self.db:
            removed = [r for (r,) in self.db.execute("SELECT rowid FROM nodes WHERE origin=?", (origin,))]
            self.db.executemany("DELETE FROM fts WHERE rowid=?", [(r,) for r in removed])
            self.db.execute("DELETE FROM nodes WHERE origin=?", (origin,))
            self.db.execute("DELETE FROM edges WHERE origin=?", (origin,))
            for node in nodes:
                cur = self.db.execute(
                    f"INSERT INTO nodes({_NODE_COLS}) VALUES({','.join('?' * 17)})",
                    (
                        node.node_id, node.source_id, node.kind, node.name, node.type, node.book, node.page,
                        node.rarity, node.level, json.dumps(node.traits), node.text, node.summary,
                        json.dumps(node.path), node.parent_id, node.origin, json.dumps(node.aliases),
                        json.dumps(node.fields),
                    ),
                )
                self.db.execute(
                    "INSERT INTO fts(rowid, name, aliases, path, body) VALUES(?, ?, ?, ?, ?)",
                    (cur.lastrowid, node.name, " ".join(node.aliases), " ".join(node.path), node.text or node.summary),
                )
            self.db.executemany(
                "INSERT OR IGNORE INTO edges(src, dst, kind, origin) VALUES(?, ?, ?, ?)",
                [(e.src, e.dst, e.kind, origin) for e in edges],
            )
            self.db.execute(
                "INSERT INTO sources(origin, digest, path, updated_at) VALUES(?, ?, ?, datetime('now')) "
                "ON CONFLICT(origin) DO UPDATE SET digest=excluded.digest, path=excluded.path, updated_at=excluded.updated_at",
                (origin, digest, path),
            )
        return removed

    def remove_origin(self, origin: str) -> list[int]:
        """Delete one source's nodes, edges and digest; returns removed rowids (drop their vectors)."""
        removed = self.replace_origin(origin, [], [], "")
        with self._lock, self.db:
            self.db.execute("DELETE FROM sources WHERE origin=?", (origin,))
        return removed

    def source_digests(self, prefix: str = "") -> dict[str, str]:
        """``origin -> digest`` for the ingested sources whose origin starts with ``prefix``."""
        return dict(self.db.execute("SELECT origin, digest FROM sources WHERE origin LIKE ?", (prefix + "%",)))

    def unembedded(self) -> list[tuple[int, Node]]:
        """(rowid, node) of every node still without a vector."""
        rows = self.db.execute(f"SELECT rowid, {_NODE_COLS} FROM nodes WHERE embedded=0 ORDER BY rowid").fetchall()
        return [(r[0], _node_from_row(r[1:])) for r in rows]

    def mark_all_unembedded(self) -> None:
        """Forget every vector (after an embedder change or a lost vector file)."""
        with self._lock, self.db:
            self.db.execute("UPDATE nodes SET embedded=0")
        self._vectors = None
        self.vectors_path.unlink(missing_ok=True)

    def add_vectors(self, rowids: Sequence[int], vectors: np.ndarray) -> None:
        """Add vectors for ``rowids`` to the index file and mark those nodes embedded."""
        from usearch.index import Index

        with self._lock:
            index = Index(ndim=vectors.shape[1], metric="cos", dtype="f32")
            if self.vectors_path.exists():
                index.load(str(self.vectors_path))
            keys = np.asarray(rowids, dtype=np.uint64)
            present = [k for k in keys if index.contains(int(k))]
            if present:
                index.remove(np.asarray(present, dtype=np.uint64))
            index.add(keys, vectors.astype(np.float32))
            self._save_vectors(index)
            with self.db:
                self.db.executemany("UPDATE nodes SET embedded=1 WHERE rowid=?", [(int(r),) for r in rowids])

    def remove_vectors(self, rowids: Iterable[int]) -> None:
        """Drop vectors of deleted nodes (no-op when there are none)."""
        rowids = [int(r) for r in rowids]
        if not rowids or not self.vectors_path.exists():
            return
        from usearch.index import Index

        with self._lock:
            index = Index.restore(str(self.vectors_path))
            if index is None:
                return
            present = [r for r in rowids if index.contains(r)]
            if present:
                index.remove(np.asarray(present, dtype=np.uint64))
                self._save_vectors(index)

    def _save_vectors(self, index) -> None:
        tmp = self.vectors_path.with_suffix(".tmp")
        index.save(str(tmp))
        tmp.replace(self.vectors_path)  # atomic: a reader never sees half a file
        self._vectors = None

    # ----- reading -------------------------------------------------------------------------------
    def get(self, node_id: str) -> Node | None:
        """The node with this id, or None."""
        row = self.db.execute(f"SELECT {_NODE_COLS} FROM nodes WHERE node_id=?", (node_id,)).fetchone()
        return _node_from_row(row) if row else None

    def get_many(self, node_ids: Sequence[str]) -> dict[str, Node]:
        """``node_id -> Node`` for those of ``node_ids`` that exist."""
        out: dict[str, Node] = {}
        ids = list(dict.fromkeys(node_ids))
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            q = f"SELECT {_NODE_COLS} FROM nodes WHERE node_id IN ({','.join('?' * len(chunk))})"
            for row in self.db.execute(q, chunk):
                out[row[0]] = _node_from_row(row)
        return out

    def iter_nodes(self, kinds: Sequence[str] | None = ("entry",), origin_prefix: str | None = None) -> Iterator[Node]:
        """Every node of the given kinds (None: all), optionally of one source family."""
        q, args = f"SELECT {_NODE_COLS} FROM nodes WHERE 1=1", []
        if kinds:
            q += f" AND kind IN ({','.join('?' * len(kinds))})"
            args += list(kinds)
        if origin_prefix:
            q += " AND origin LIKE ?"
            args.append(origin_prefix + "%")
        for row in self.db.execute(q + " ORDER BY rowid", args):
            yield _node_from_row(row)

    def resolve_name(self, name: str) -> str | None:
        """The entry whose name is exactly ``name`` (any case), corpus entries first, and of those the ones that
        are names (not a book's rules-prose section, ``fields.hover_name`` false: [[Perception]] is the skill,
        not Player Core's section of that title); for ``[[wiki links]]``."""
        row = self.db.execute(
            "SELECT node_id FROM nodes WHERE kind='entry' AND lower(name)=lower(?) "
            "ORDER BY origin NOT LIKE 'corpus:%', coalesce(json_extract(fields, '$.hover_name'), 1) = 0, rowid LIMIT 1",
            (name.strip(),),
        ).fetchone()
        return row[0] if row else None

    def entry_count(self) -> int:
        """How many entry nodes the store holds."""
        return self.db.execute("SELECT count(*) FROM nodes WHERE kind='entry'").fetchone()[0]

    def has_embeddings(self) -> bool:
        """True when every node has a vector and the vector file is present."""
        missing = self.db.execute("SELECT count(*) FROM nodes WHERE embedded=0").fetchone()[0]
        total = self.db.execute("SELECT count(*) FROM nodes").fetchone()[0]
        return total > 0 and missing == 0 and self.vectors_path.exists()

    def embedded_count(self) -> tuple[int, int]:
        """``(nodes with a vector, all nodes)``."""
        embedded, total = self.db.execute("SELECT COALESCE(SUM(embedded), 0), count(*) FROM nodes").fetchone()
        return int(embedded), int(total)

    def any_embedded(self) -> bool:
        """Whether any node has a vector (cheap: stops at the first)."""
        return self.db.execute("SELECT 1 FROM nodes WHERE embedded=1 LIMIT 1").fetchone() is not None

    def vector_problem(self) -> str | None:
        """Why dense search cannot be trusted on this store, in words; None when it can (or when the
        store was deliberately built without vectors, ``index build --no-embed``). Cheap enough to
        ask on every search."""
        if self.meta.get("build_state") == "building":
            embedded, total = self.embedded_count()
            return f"the last index build did not finish ({embedded} of {total} nodes have a vector)"
        if not self.vectors_path.exists() and self.any_embedded():
            return f"the vector file {self.vectors_path.name} is missing"
        return None

    def neighbors(self, node_id: str, kinds: Iterable[str] | None = None) -> list[tuple[str, str]]:
        """``(other_id, edge_kind)`` for edges leaving or entering ``node_id`` (incoming ``ref`` is
        reported as ``ref_by``, incoming ``parent`` as ``child``, incoming ``next`` as ``prev``,
        incoming ``trait`` as ``has_trait``)."""
        kinds = set(kinds) if kinds else None
        out: list[tuple[str, str]] = []
        for dst, kind in self.db.execute("SELECT dst, kind FROM edges WHERE src=?", (node_id,)):
            if kinds is None or kind in kinds:
                out.append((dst, kind))
        reverse = {"ref": "ref_by", "parent": "child", "next": "prev", "trait": "has_trait"}
        for src, kind in self.db.execute("SELECT src, kind FROM edges WHERE dst=?", (node_id,)):
            rk = reverse[kind]
            if kinds is None or rk in kinds:
                out.append((src, rk))
        return out

    def children(self, node_id: str) -> list[Node]:
        """Direct children in sibling order."""
        rows = self.db.execute(
            f"SELECT {_NODE_COLS} FROM nodes WHERE parent_id=? ORDER BY coalesce(level, -99), lower(name)", (node_id,)
        )
        return [_node_from_row(r) for r in rows]

    def ancestors(self, node_id: str) -> list[Node]:
        """Ancestors from the root down to the direct parent."""
        chain: list[Node] = []
        node = self.get(node_id)
        seen = {node_id}
        while node and node.parent_id and node.parent_id not in seen:
            seen.add(node.parent_id)
            node = self.get(node.parent_id)
            if node:
                chain.append(node)
        return list(reversed(chain))

    def bm25(self, query: str, k: int = 50, kinds: Sequence[str] = ("entry",)) -> list[tuple[str, float]]:
        """FTS5 BM25 top ``k`` as ``(node_id, score)``, higher is better."""
        expr = fts_query(query)
        if not expr:
            return []
        w = ", ".join(str(x) for x in _BM25_WEIGHTS)
        sql = (
            f"SELECT n.node_id, -bm25(fts, {w}) AS s FROM fts JOIN nodes n ON n.rowid = fts.rowid "
            f"WHERE fts MATCH ? AND n.kind IN ({','.join('?' * len(kinds))}) ORDER BY bm25(fts, {w}) LIMIT ?"
        )
        try:
            # SQLite turns a NaN score into NULL; seen once with another SQLite build on a model-written
            # query. The row still matched: keep it, with the lowest score.
            return [(nid, float(s) if s is not None else 0.0) for nid, s in self.db.execute(sql, (expr, *kinds, k))]
        except sqlite3.OperationalError as exc:  # a query FTS5 cannot parse: no lexical hits, not a crash
            log.warning("bm25 query %r failed: %s", expr, exc)
            return []

    def _open_vectors(self):
        """The memory-mapped usearch view, reopened when the file changed."""
        from usearch.index import Index

        if not self.vectors_path.exists():
            raise StoreError(f"the vector file {self.vectors_path} is missing; run `gmprep index build`")
        mtime = self.vectors_path.stat().st_mtime
        if self._vectors is None or mtime != self._vectors_mtime:
            try:
                view = Index.restore(str(self.vectors_path), view=True)
            except Exception as exc:  # usearch raises plain RuntimeError/ValueError on bad files
                raise StoreError(f"the vector file {self.vectors_path.name} is corrupt ({exc}); run `gmprep index build`") from exc
            if view is None:
                raise StoreError(f"the vector file {self.vectors_path.name} is not a usearch index; run `gmprep index build`")
            self._vectors, self._vectors_mtime = view, mtime
        return self._vectors

    def _rowids_to_ids(self, rowids: Sequence[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        rowids = [int(r) for r in rowids]
        for i in range(0, len(rowids), 500):
            chunk = rowids[i : i + 500]
            q = f"SELECT rowid, node_id FROM nodes WHERE rowid IN ({','.join('?' * len(chunk))})"
            out.update(dict(self.db.execute(q, chunk)))
        return out

    def vector_search(self, vector: np.ndarray, k: int = 50, kinds: Sequence[str] = ("entry",)) -> list[tuple[str, float]]:
        """Approximate nearest neighbours as ``(node_id, cosine similarity)``, best first."""
        index = self._open_vectors()
        want = k if kinds is None else k * 2  # leave room for structural nodes filtered out below
        matches = index.search(np.asarray(vector, dtype=np.float32), min(want, max(index.size, 1)))
        ids = self._rowids_to_ids(matches.keys)
        allowed = None
        if kinds:
            allowed = self._kinds_of(list(ids.values()))
        out = []
        for key, dist in zip(matches.keys, matches.distances, strict=False):
            nid = ids.get(int(key))
            if nid is None or (allowed is not None and allowed.get(nid) not in kinds):
                continue
            out.append((nid, 1.0 - float(dist)))
        return out[:k]

    def _kinds_of(self, node_ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for i in range(0, len(node_ids), 500):
            chunk = node_ids[i : i + 500]
            q = f"SELECT node_id, kind FROM nodes WHERE node_id IN ({','.join('?' * len(chunk))})"
            out.update(dict(self.db.execute(q, chunk)))
        return out

    def vectors_for(self, node_ids: Sequence[str]) -> np.ndarray:
        """Stored vectors of ``node_ids`` in order (zeros for nodes without one)."""
        index = self._open_vectors()
        rows = dict(
            self.db.execute(
                f"SELECT node_id, rowid FROM nodes WHERE embedded=1 AND node_id IN ({','.join('?' * len(node_ids))})",
                list(node_ids),
            )
        ) if node_ids else {}
        out = np.zeros((len(node_ids), index.ndim), dtype=np.float32)
        keys = [rows.get(n) for n in node_ids]
        present = [(i, k) for i, k in enumerate(keys) if k is not None]
        if present:
            got = index.get(np.asarray([k for _, k in present], dtype=np.uint64))
            for (i, _), vec in zip(present, got, strict=False):
                if vec is not None:
                    out[i] = vec
        return out

    def all_vectors(self) -> tuple[list[str], np.ndarray]:
        """Every stored vector with its node id (for benchmarks and exact search)."""
        index = self._open_vectors()
        rows = self.db.execute("SELECT rowid, node_id FROM nodes WHERE embedded=1 ORDER BY rowid").fetchall()
        if not rows:
            return [], np.zeros((0, index.ndim), dtype=np.float32)
        vecs = index.get(np.asarray([r for r, _ in rows], dtype=np.uint64))
        return [n for _, n in rows], np.asarray(vecs, dtype=np.float32)
