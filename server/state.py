"""What one language-server process holds: settings, the name index, the store, conversations,
the index state, and the per-document mention cache.

Loading is staged so that the editor is useful at once: the name index and the entry texts come
from the bundled corpus (two seconds, no model), hovers and completion work from them; the store
(graph, BM25, vectors) is opened once built, and the search models load on the first search.
"""

from __future__ import annotations

import gc
import logging
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from gmprep.common.errors import GmprepError
from gmprep.common.settings import HoverSettings, Settings
from gmprep.core.conversations import ConversationStore
from gmprep.kg.models import Node
from gmprep.kg.names import NameIndex
from gmprep.server.documents import DocumentCache

if TYPE_CHECKING:  # imported where first used: the server answers hovers before numpy and the store load
    from gmprep.core.traces import TraceStore
    from gmprep.kg.search import Searcher
    from gmprep.kg.store import Store

log = logging.getLogger(__name__)

IndexState = Literal["empty", "building", "ready", "error"]
_NON_FILE_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:(?![\\/])")  # untitled:..., vscode-notebook-cell:...


class IndexStatus(BaseModel):
    """The index state reported by ``gmprep/status`` and ``gmprep/indexState``."""

    state: IndexState = "empty"
    message: str = "not started"
    entries: int = 0
    embeddings: bool = False
    names_ready: bool = False
    percentage: int | None = None


class RulesBook:
    """Corpus entries in memory: names, texts and reference edges, for hovers and completion
    before (and without) the store."""

    def __init__(self, nodes: list[Node], refs: dict[str, list[str]], others: list[Node] | None = None):
        self.nodes = {n.node_id: n for n in nodes}
        self.refs = refs
        # name-only entries of books gmprep does not hold: notes name them, a hover says whose they are; they are no
        # entries (no text, no page, nothing to cite, complete or open), so they stay out of ``nodes``
        self.names = NameIndex.build(nodes, others or ())
        self.others = {n.node_id: n for n in others or () if self.names.lookup(n.name) == n.node_id}
        # completion: names sorted once (lowercased) for prefix search, every word of every name
        # for word-start search, and names grouped by first letter for the fuzzy pass; the books'
        # rules-prose sections are not names (kg/names.py), so completing one would write a word no hover reads
        self.sorted_names = sorted(((n.name.lower(), n.node_id) for n in nodes if not n.is_prose),
                                   key=lambda t: t[0])
        words: set[tuple[str, str]] = set()
        self.by_initial: dict[str, list[tuple[str, str]]] = {}
        for lower, node_id in self.sorted_names:
            for w in re.findall(r"[a-z0-9'+]+", lower)[1:]:
                words.add((w, node_id))
            self.by_initial.setdefault(lower[:1], []).append((lower, node_id))
        self.sorted_words = sorted(words)
        self.completion_docs: dict[str, str] = {}  # node_id -> documentation, filled on use

    @classmethod
    def from_corpus(cls, other_books: bool | None = None) -> RulesBook:
        """Load the bundled corpus (no store, no model); with ``other_books`` (default: the ``hover.other_books``
        setting's default) the names of other books' entries too."""
        from gmprep.ingest.corpus import load_corpus

        load = load_corpus()
        entries = [n for n in load.nodes if n.kind == "entry"]
        refs: dict[str, list[str]] = {}
        for e in load.edges:
            if e.kind == "ref":
                refs.setdefault(e.src, []).append(e.dst)
        if other_books is None:
            other_books = HoverSettings().other_books
        if not other_books:
            return cls(entries, refs)
        from gmprep.core.agents.otherbooks import catalogue_entries

        return cls(entries, refs, catalogue_entries())


class ServerState:
    """Shared state of the server; every attribute is safe to read from handlers."""

    def __init__(self, settings: Settings | None = None, workspace_root: Path | None = None):
        self.settings = settings or Settings()
        self.workspace_root = workspace_root
        self.status = IndexStatus()
        self.docs = DocumentCache()
        self.book: RulesBook | None = None
        self._book_ready = threading.Event()
        self._book_load_lock = threading.Lock()
        self._store: Store | None = None
        self._searcher: Searcher | None = None
        self._conversations: ConversationStore | None = None
        self._traces: TraceStore | None = None
        self._lock = threading.RLock()
        self._searcher_lock = threading.Lock()
        self.on_status: Callable[[IndexStatus], None] | None = None  # set by the server: notify the client

    # ---- the in-memory rules book -------------------------------------------------------
    def load_book(self) -> None:
        """Load the corpus name index (call from a worker thread; again when ``hover.other_books`` changes, which
        decides the names it holds: one load at a time, and a change made during a load is loaded after it)."""
        with self._book_load_lock:
            while True:
                want = self.settings.hover.other_books
                self._load_book(want)
                if self.book is None or self.settings.hover.other_books == want:
                    return

    def _load_book(self, other_books: bool) -> None:
        try:
            t0 = time.perf_counter()
            self.book = RulesBook.from_corpus(other_books)
            # the name index is millions of long-lived objects: out of the collector's full passes,
            # which would otherwise stall the event loop for hundreds of ms while notes are edited
            gc.collect()
            gc.freeze()
            log.info("name index ready in %.2fs (%d keys)", time.perf_counter() - t0, len(self.book.names))
        except Exception:  # the server stays up without hovers, and says why
            log.exception("could not load the bundled corpus")
        finally:
            self._book_ready.set()
            self.set_status(names_ready=self.book is not None)
            self.docs.clear()

    def wait_book(self, timeout: float = 20.0) -> RulesBook | None:
        """The rules book, waiting for it while it loads at startup."""
        self._book_ready.wait(timeout)
        return self.book

    @property
    def names(self) -> NameIndex | None:
        """The name index, once loaded."""
        return self.book.names if self.book else None

    # ---- status ---------------------------------------------------------------------------
    def set_status(self, **changes) -> IndexStatus:
        """Update the index status and tell the client."""
        with self._lock:
            self.status = self.status.model_copy(update=changes)
            status = self.status
        if self.on_status:
            try:
                self.on_status(status)
            except Exception:
                log.exception("could not report the index status")
        return status

    # ---- store, search, conversations ---------------------------------------------------
    @property
    def store_dir(self) -> Path:
        return Path(self.settings.store_dir)

    def store(self) -> Store | None:
        """The opened store when the index is ready, else None."""
        with self._lock:
            if self._store is None and self.status.state == "ready":
                from gmprep.kg.store import Store

                self._store = Store.open(self.store_dir, create=False)
            return self._store

    def require_store(self) -> Store:
        """The store, or a clear error while it is missing or building."""
        store = self.store()
        if store is None:
            raise GmprepError(f"the rules index is {self.status.state}: {self.status.message}")
        return store

    def searcher(self) -> Searcher:
        """The hybrid searcher over the store (models load on first use, under their own lock so
        hovers and conversations never wait for a model to load)."""
        with self._searcher_lock:
            if self._searcher is None:
                from gmprep.kg.search import Searcher

                self._searcher = Searcher.from_settings(self.require_store(), self.settings)
            return self._searcher

    def conversations(self) -> ConversationStore:
        """The conversations database in the store folder."""
        with self._lock:
            if self._conversations is None:
                self._conversations = ConversationStore.in_store(self.store_dir)
            return self._conversations

    def traces(self) -> TraceStore:
        """The answer-trace table (``gmprep.core.traces``) of the conversations database."""
        with self._lock:
            if self._traces is None:
                from gmprep.core.traces import TraceStore

                self._traces = TraceStore(self.conversations().db_path)
            return self._traces

    def retire_store(self) -> None:
        """Forget the store and searcher (before a rebuild, or when the store folder changes) without
        closing them: a request still running (a cancelled ask finishing its search) keeps the old objects
        until it ends, and garbage collection closes them then. Closing here pulled the database and the
        memory-mapped vectors out from under such a thread ("closed database", or a SIGSEGV in usearch)."""
        with self._lock:
            self._store = None
            self._searcher = None

    def close_store(self) -> None:
        """Close the store and drop the searcher (on shutdown, when no request runs any more)."""
        with self._lock:
            if self._store is not None:
                try:
                    self._store.close()
                except Exception:
                    log.exception("closing the store")
            self._store = None
            self._searcher = None

    def shutdown(self) -> None:
        """Close everything."""
        self.close_store()
        with self._lock:
            if self._traces is not None:
                self._traces.close()
                self._traces = None
            if self._conversations is not None:
                self._conversations.close()
                self._conversations = None

    # ---- nodes ------------------------------------------------------------------------------
    def held_books(self) -> list[str]:
        """The books gmprep holds: the store's (added books included) when it is ready, else the bundled corpus's."""
        store = self.store()
        if store is not None:
            from gmprep.core.agents.otherbooks import held_books

            try:
                return held_books(store.db)
            except Exception:  # a store being rebuilt: the bundled books below
                log.debug("held books unavailable", exc_info=True)
        books = {n.book for n in self.book.nodes.values() if n.book} if self.book else set()
        return sorted(b.removeprefix("Pathfinder ") for b in books)

    def other_entry(self, node_id: str) -> Node | None:
        """A name-only entry of a book gmprep does not hold (``RulesBook.others``), by id."""
        return self.book.others.get(node_id) if self.book else None

    def node(self, node_id: str) -> Node | None:
        """An entry by id: from memory for corpus entries, else from the store."""
        if self.book and node_id in self.book.nodes:
            node = self.book.nodes[node_id]
            store = self.store()
            if store is not None:  # the page from a book the user added (`gmprep books add`) is in the store
                stored = store.get(node_id)
                if stored is not None and stored.page != node.page:
                    node = node.model_copy(update={"page": stored.page})
            return node
        store = self.store()
        return store.get(node_id) if store else None

    def related(self, node_id: str, limit: int = 8) -> list[Node]:
        """Entries this one references (its ``ref`` edges), best known first."""
        ids: list[str] = []
        store = self.store()
        if store is not None:
            ids = [other for other, kind in store.neighbors(node_id, kinds=("ref",)) if kind == "ref"]
        elif self.book:
            ids = list(self.book.refs.get(node_id, []))
        out: list[Node] = []
        for other in dict.fromkeys(ids):
            node = self.node(other)
            if node is not None and node.kind == "entry":
                out.append(node)
            if len(out) >= limit:
                break
        return out

    # ---- paths ------------------------------------------------------------------------------
    def relpath(self, uri: str) -> str:
        """Workspace-relative path of a document URI (the absolute path outside the workspace)."""
        from pygls.uris import to_fs_path

        fs = to_fs_path(uri) or uri
        path = Path(fs)
        if self.workspace_root is not None:
            try:
                return path.resolve().relative_to(self.workspace_root.resolve()).as_posix()
            except ValueError:
                pass
        return path.as_posix()

    def uri_of(self, relpath: str) -> str:
        """The document URI of a workspace-relative path (a document that has no file, such as
        ``untitled:Untitled-1``, is keyed by its URI and stays that URI)."""
        if _NON_FILE_URI.match(relpath):
            return relpath
        path = Path(relpath)
        if not path.is_absolute() and self.workspace_root is not None:
            path = self.workspace_root / path
        return path.resolve().as_uri() if path.is_absolute() else path.as_posix()

    def notes_root(self) -> Path | None:
        """The configured notes folder (absolute), if any."""
        if not self.settings.notes_dir:
            return None
        root = Path(self.settings.notes_dir)
        if not root.is_absolute() and self.workspace_root is not None:
            root = self.workspace_root / root
        return root
