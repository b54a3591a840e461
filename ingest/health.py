"""The store health check, in one place: what a store holds and everything wrong with it, in words.

``gmprep index status``, the language server's start-up check and the index pipeline's repairs all
read this; nothing else assembles a health verdict. A store is *usable* when it exists and has no
problem: built completely (a killed build leaves ``build_state = building``), every node embedded
and its vectors present, built by this gmprep's embedder, schema and bundled corpus.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from gmprep.common.errors import StoreError
from gmprep.ingest.corpus import corpus_digest, corpus_dir
from gmprep.kg.embedder import EMBEDDER_DIM, EMBEDDER_NAME
from gmprep.kg.store import DB_NAME, Store, StoreHealth


class StoreCheck(BaseModel):
    """A store's contents and problems (``gmprep index status --json`` prints this)."""

    store_dir: str
    exists: bool = False
    read_only: bool = False
    entries: int = 0
    nodes: int = 0
    nodes_embedded: int = 0
    embedded: bool = False  # every node has a vector and the vector file is present
    build_state: str | None = None
    meta: dict[str, str] = Field(default_factory=dict)
    problems: list[str] = Field(default_factory=list)

    @property
    def usable(self) -> bool:
        """Complete, embedded and without problems: safe to search and answer from as it is."""
        return self.exists and not self.problems and self.entries > 0

    @property
    def complete(self) -> bool:
        """Usable and fully embedded (not a ``--no-embed`` graph-only build): what the server serves."""
        return self.usable and self.embedded and self.build_state == "complete"


def store_health(store: Store, corpus_folder: Path | None = None) -> StoreHealth:
    """``Store.health`` against this gmprep's embedder and the bundled (or given) corpus."""
    digest = corpus_digest(corpus_folder or corpus_dir())
    return store.health(embedder=EMBEDDER_NAME, dim=EMBEDDER_DIM, corpus_digest=digest)


def inspect_store(store: Store, corpus_folder: Path | None = None) -> StoreCheck:
    """Everything ``check_store`` reports, for a store that is already open."""
    health = store_health(store, corpus_folder)
    meta = store.meta
    embedded, total = store.embedded_count()
    check = StoreCheck(
        store_dir=str(store.root), exists=True, read_only=store.read_only, entries=store.entry_count(),
        nodes=total, nodes_embedded=embedded, embedded=store.has_embeddings(),
        build_state=meta.get("build_state"), meta=meta, problems=list(health.problems),
    )
    state = check.build_state
    if state == "building":
        check.problems.append(
            f"the last index build did not finish ({embedded} of {total} nodes have a vector); "
            "run `gmprep index build` to finish it"
        )
    elif state == "complete" and embedded < total:
        check.problems.append(
            f"{total - embedded} of {total} nodes have no vector (an update did not finish); "
            "run `gmprep index build` to embed them"
        )
    elif state is None and total:
        check.problems.append("the index build never finished; run `gmprep index build`")
    if not check.entries and not check.problems:
        check.problems.append("the index holds no entries; run `gmprep index build`")
    return check


def check_store(store_dir: Path | str, corpus_folder: Path | None = None) -> StoreCheck:
    """Open the store in ``store_dir`` read-only, inspect it and close it. Never raises for a missing,
    unreadable or corrupt store: that is a problem in the result."""
    store_dir = Path(store_dir)
    if not (store_dir / DB_NAME).exists():
        return StoreCheck(store_dir=str(store_dir), problems=[f"no index in {store_dir}; run `gmprep index build`"])
    try:
        with Store.open(store_dir, create=False) as store:
            return inspect_store(store, corpus_folder)
    except StoreError as exc:
        return StoreCheck(store_dir=str(store_dir), exists=True, problems=[str(exc)])
