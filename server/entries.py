"""Read-only markdown files of full entries, ``<store_dir>/entries/<id>.md``, that hovers link to
and Go to Definition opens. Rendering is ``gmprep.kg.render.render_entry``; files are written
once per store build (a stamp file records which build) and rewritten after a rebuild."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
import threading
from pathlib import Path

from gmprep.server.state import ServerState

log = logging.getLogger(__name__)

ENTRIES_DIR = "entries"
_STAMP = ".built-from"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def file_name(node_id: str) -> str:
    """A portable file name for an entry id (``pf2e:spell:fireball`` -> ``pf2e__spell__fireball.md``)."""
    name = node_id.replace(":", "__")
    safe = _UNSAFE.sub("_", name)
    if safe != name:  # notes ids carry slashes and '#': keep names unique
        safe += "-" + hashlib.sha1(node_id.encode()).hexdigest()[:8]
    return safe[:180] + ".md"


class EntryFiles:
    """Renders entries to files on demand and, in the background, all corpus entries at once."""

    def __init__(self, state: ServerState):
        self.state = state
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()  # render_all and Go to Definition may write the same file
        self._known: set[str] = set()
        self._stamp: str | None = None

    @property
    def folder(self) -> Path:
        return self.state.store_dir / ENTRIES_DIR

    def _build_stamp(self, store) -> str:
        meta = store.meta
        return f"{meta.get('corpus_digest', '')}:{meta.get('schema_version', '')}:{store.entry_count()}"

    def path_if_ready(self, node_id: str) -> Path | None:
        """The entry's file when it is already written (cheap: for hover links)."""
        if node_id in self._known:
            return self.folder / file_name(node_id)
        return None

    def ensure(self, node_id: str) -> Path | None:
        """Write the entry's file now if needed; None when the store is not ready or the id unknown."""
        store = self.state.store()
        if store is None:
            return None
        self._check_stamp(store)
        path = self.folder / file_name(node_id)
        if node_id in self._known and path.exists():
            return path
        markdown = self.render(node_id)
        if markdown is None:
            return None
        with self._write_lock:
            if node_id not in self._known or not path.exists():
                _write_read_only(path, markdown)
                self._known.add(node_id)
        return path

    def render(self, node_id: str) -> str | None:
        """The full entry as markdown (with its ancestors), or None if unknown."""
        store = self.state.store()
        if store is None or store.get(node_id) is None:
            return None
        from gmprep.kg.render import render_entry

        return render_entry(store, node_id)

    def _check_stamp(self, store) -> None:
        with self._lock:
            if self._stamp is not None:
                return
            stamp = self._build_stamp(store)
            stamp_file = self.folder / _STAMP
            old = stamp_file.read_text() if stamp_file.exists() else None
            self.folder.mkdir(parents=True, exist_ok=True)
            if old == stamp:
                self._known = self._scan_existing(store)
            else:
                for p in self.folder.glob("*.md"):
                    _unlink(p)
                stamp_file.write_text(stamp)
                self._known = set()
            self._stamp = stamp

    def _scan_existing(self, store) -> set[str]:
        present = {p.name for p in self.folder.glob("*.md")}
        return {n.node_id for n in store.iter_nodes(("entry",)) if file_name(n.node_id) in present}

    def invalidate(self) -> None:
        """Forget what was written (after a rebuild)."""
        with self._lock:
            self._stamp = None
            self._known = set()

    def render_all(self, stop: threading.Event | None = None) -> int:
        """Write every corpus entry's file (background thread after the index is ready)."""
        store = self.state.store()
        if store is None:
            return 0
        self._check_stamp(store)
        done = 0
        for node in store.iter_nodes(("entry",), origin_prefix="corpus:"):
            if stop is not None and stop.is_set():
                break
            if node.node_id in self._known:
                continue
            try:
                if self.ensure(node.node_id):
                    done += 1
            except Exception:
                if stop is not None and stop.is_set():
                    break  # shutting down: the store was closed under us
                log.exception("rendering %s failed", node.node_id)
        return done


def _write_read_only(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    _unlink(tmp)
    tmp.write_text(text, encoding="utf-8")
    os.chmod(tmp, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    _unlink(path)
    os.replace(tmp, path)


def _unlink(path: Path) -> None:
    try:
        os.chmod(path, stat.S_IWUSR | stat.S_IRUSR)
        path.unlink()
    except FileNotFoundError:
        pass
