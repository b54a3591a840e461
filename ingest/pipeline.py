"""Build and keep the index current: corpus + notes -> store (graph, FTS5, vectors).

``build_index`` is incremental: the corpus is re-ingested only when its digest changed, a note only
when its bytes changed, removed notes lose their nodes, and only nodes without a vector are embedded.
A corrupt database is moved aside (never deleted) and rebuilt; a lost or foreign vector file is
re-embedded. Every such repair is reported in ``BuildReport.messages``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from gmprep.common.errors import ReadOnlyError, StoreError
from gmprep.common.settings import Settings
from gmprep.common.text import contextual_text
from gmprep.ingest.books.store import reapply_pages
from gmprep.ingest.corpus import CORPUS_ORIGIN, corpus_digest, corpus_dir, load_corpus
from gmprep.ingest.health import store_health
from gmprep.ingest.notes import find_notes, note_origin, read_note
from gmprep.kg.embedder import EMBEDDER_DIM, EMBEDDER_NAME, shared_embedder
from gmprep.kg.models import Edge
from gmprep.kg.store import DB_NAME, SCHEMA_VERSION, Store

log = logging.getLogger(__name__)

# progress(stage, done, total): stage is "corpus", "notes" or "embed"
ProgressFn = Callable[[str, int, int], None]


class BuildReport(BaseModel):
    """What a build did and every problem it met, in words."""

    store_dir: str
    entries: int = 0
    nodes_embedded: int = 0
    corpus_reingested: bool = False
    notes_indexed: list[str] = Field(default_factory=list)
    notes_removed: list[str] = Field(default_factory=list)
    messages: list[str] = Field(default_factory=list)
    seconds: float = 0.0


def open_store_for_build(store_dir: Path, report: BuildReport) -> Store:
    """Open the store; a corrupt database file is moved aside (kept for inspection) and recreated.
    A store the user may not write is not corrupt: ReadOnlyError reaches the caller untouched."""
    try:
        store = Store.open(store_dir)
        health = store.health()
    except ReadOnlyError:
        raise
    except StoreError as exc:
        store, health = None, None
        report.messages.append(str(exc))
    if store is None or health is None or health.needs_full_rebuild:
        if store is not None and health is not None:
            report.messages.extend(health.problems)
            store.close()
        db = store_dir / DB_NAME
        aside = db.with_name(f"{DB_NAME}.broken-{int(time.time())}")
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(db) + suffix)
            if p.exists():
                p.replace(Path(str(aside) + suffix))
        (store_dir / "vectors.usearch").unlink(missing_ok=True)
        report.messages.append(f"moved the unusable index database aside to {aside.name} and rebuilt it")
        store = Store.open(store_dir)
    return store


def build_index(
    settings: Settings,
    notes_dir: Path | None = None,
    progress: ProgressFn | bool = True,
    embed: bool = True,
    corpus_folder: Path | None = None,
) -> BuildReport:
    """Bring the store in ``settings.store_dir`` up to date with the corpus and ``notes_dir``."""
    t0 = time.perf_counter()
    store_dir = Path(settings.store_dir)
    report = BuildReport(store_dir=str(store_dir))
    progress_fn = _tqdm_progress() if progress is True else (progress or None)
    with open_store_for_build(store_dir, report) as store:
        folder = corpus_folder or corpus_dir()
        digest = corpus_digest(folder)
        health = store_health(store, folder)
        report.messages.extend(p for p in health.problems if "corpus changed" not in p)
        reingest = store.source_digests(CORPUS_ORIGIN).get(CORPUS_ORIGIN) != digest
        if health.needs_reembed or reingest:
            # until "complete" is written again, the store is known half-built (a killed build shows)
            store.set_meta(build_state="building")
        if health.needs_reembed:
            store.mark_all_unembedded()
            report.messages.append("re-embedding every node")
        if reingest:
            corpus = load_corpus(folder)
            report.messages.extend(corpus.errors)
            if progress_fn:
                progress_fn("corpus", 0, 1)
            removed = store.replace_origin(CORPUS_ORIGIN, corpus.nodes, corpus.edges, digest, str(folder))
            store.remove_vectors(removed)
            # the pages the user's own books gave bundled entries (`gmprep books add`) outlive a re-ingest
            reapply_pages(store)
            report.corpus_reingested = True
            if progress_fn:
                progress_fn("corpus", 1, 1)
        if notes_dir is not None:
            sync_notes(store, Path(notes_dir), report)
        store.set_meta(
            schema_version=SCHEMA_VERSION, embedder=EMBEDDER_NAME, embedder_dim=str(EMBEDDER_DIM), corpus_digest=digest
        )
        if embed:
            report.nodes_embedded = embed_pending(store, settings, progress_fn)
            _question_index(store, settings, report)
            _dense_stage(store, settings, report)
            store.set_meta(build_state="complete")
        else:
            store.set_meta(build_state="graph-only")
        report.entries = store.entry_count()
    report.seconds = round(time.perf_counter() - t0, 2)
    for msg in report.messages:
        log.warning(msg)
    return report


def _question_index(store: Store, settings: Settings, report: BuildReport) -> None:
    """The question index beside the store (kg/question_index.py): rebuilt when the rules were re-ingested
    or it is missing; a notes sync leaves it alone (it indexes rules entries only). One owner for the CLI's
    `index build` and the server's build."""
    from gmprep.kg.question_index import SIDECAR, build_question_index, default_data_paths

    if report.corpus_reingested or not (Path(store.root) / SIDECAR).exists():
        log.info(build_question_index(store, default_data_paths(), device=settings.device))


def _dense_stage(store: Store, settings: Settings, report: BuildReport) -> None:
    """The fine-tuned bi-encoder's vectors beside the store (kg/dense_stage.py), when the repository ships
    the model: rebuilt with the question index, or when missing or written by another model; removed when
    no fine-tuned model is shipped."""
    from gmprep.kg.dense_stage import build_dense_stage, dense_stage_current

    if report.corpus_reingested or not dense_stage_current(store):
        log.info(build_dense_stage(store, device=settings.device))


def sync_notes(store: Store, root: Path, report: BuildReport) -> None:
    """Index new/changed notes under ``root`` and drop the nodes of notes that are gone."""
    known = store.source_digests("notes:")
    seen: set[str] = set()
    for path in find_notes(root):
        load = read_note(path, root)
        origin = note_origin(load.relpath)
        seen.add(origin)
        if load.error:
            report.messages.append(load.error)
            continue
        if known.get(origin) == load.digest:
            continue
        _store_note(store, load)
        report.notes_indexed.append(load.relpath)
    for origin in set(known) - seen:
        store.remove_vectors(store.remove_origin(origin))
        report.notes_removed.append(origin.removeprefix("notes:"))


def _store_note(store: Store, load) -> None:
    edges = list(load.edges)
    for src, target in load.wiki_targets:
        dst = store.resolve_name(target)
        if dst:
            edges.append(Edge(src=src, dst=dst, kind="ref"))
    removed = store.replace_origin(note_origin(load.relpath), load.nodes, edges, load.digest, load.relpath)
    store.remove_vectors(removed)


def index_note(settings: Settings, path: Path, notes_root: Path, embed: bool = True) -> BuildReport:
    """Re-index one saved note (incremental: only that file's nodes change). A missing file is removed."""
    report = BuildReport(store_dir=str(settings.store_dir))
    with Store.open(settings.store_dir) as store:
        if not path.exists():
            relpath = path.relative_to(notes_root).as_posix()
            store.remove_vectors(store.remove_origin(note_origin(relpath)))
            report.notes_removed.append(relpath)
        else:
            load = read_note(path, notes_root)
            if load.error:
                report.messages.append(load.error)
            else:
                _store_note(store, load)
                report.notes_indexed.append(load.relpath)
        if embed:
            report.nodes_embedded = embed_pending(store, settings, None)
        report.entries = store.entry_count()
    return report


def embed_pending(store: Store, settings: Settings, progress_fn: ProgressFn | None, batch: int = 256) -> int:
    """Embed every node without a vector (contextual text), saving as it goes."""
    pending = store.unembedded()
    if not pending:
        return 0
    embedder = shared_embedder(settings.device)
    # Similar lengths batch together: far less padding, so a full build embeds ~2x faster on a CPU.
    texts = {rowid: contextual_text(node) for rowid, node in pending}
    pending.sort(key=lambda item: len(texts[item[0]]))
    total = len(pending)
    done = 0
    if progress_fn:
        progress_fn("embed", 0, total)
    for start in range(0, total, batch):
        chunk = pending[start : start + batch]
        vecs = embedder.encode([texts[r] for r, _ in chunk])
        store.add_vectors([r for r, _ in chunk], vecs)
        done += len(chunk)
        if progress_fn:
            progress_fn("embed", done, total)
    return total


def _tqdm_progress() -> ProgressFn:
    """A progress callback drawing one tqdm bar per stage."""
    from tqdm import tqdm

    bars: dict[str, tqdm] = {}

    def update(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage)
        if bar is None:
            label = {"corpus": "ingest corpus", "notes": "ingest notes", "embed": "embed nodes"}[stage]
            bar = bars[stage] = tqdm(total=total, desc=label, unit=" nodes" if stage == "embed" else " step")
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()

    return update
