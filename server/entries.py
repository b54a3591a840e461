"""Read-only markdown files of full entries, ``<store_dir>/entries/<file>.md``, that hovers link to
and Go to Definition opens. Rendering is ``gmprep.kg.render.render_entry``.

All corpus entries are written once per store build by a low-priority child process
(``python -m gmprep.server.entries --store DIR``): rendering five thousand entries in a server
thread would hold the GIL and put hovers in a queue behind it. A stamp file records which build
the files come from; after a rebuild they are rewritten. Go to Definition writes a missing file
on the spot.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path

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


def build_stamp(store) -> str:
    """What identifies a store build: corpus digest, schema and entry count."""
    meta = store.meta
    return f"{meta.get('corpus_digest', '')}:{meta.get('schema_version', '')}:{store.entry_count()}"


def write_read_only(path: Path, text: str) -> None:
    """Write ``text`` atomically to ``path`` and make it read-only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.chmod(tmp, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    os.replace(tmp, path)


def render_all(store_dir: Path, stop: threading.Event | None = None) -> int:
    """Write every corpus entry's file (clearing files of an older build first); returns how many
    were written."""
    from gmprep.kg.render import render_entry
    from gmprep.kg.store import Store

    folder = Path(store_dir) / ENTRIES_DIR
    store = Store.open(store_dir, create=False)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        stamp = build_stamp(store)
        stamp_file = folder / _STAMP
        if not stamp_file.exists() or stamp_file.read_text() != stamp:
            for p in folder.glob("*.md"):
                _unlink(p)
            stamp_file.write_text(stamp)
        present = {p.name for p in folder.glob("*.md")}
        done = 0
        for node in store.iter_nodes(("entry",), origin_prefix="corpus:"):
            if stop is not None and stop.is_set():
                break
            name = file_name(node.node_id)
            if name in present:
                continue
            try:
                write_read_only(folder / name, render_entry(store, node.node_id))
                done += 1
            except Exception:
                log.exception("rendering %s failed", node.node_id)
        return done
    finally:
        store.close()


class EntryFiles:
    """The server's view of the entry files: look up, write one now, or start the background writer."""

    def __init__(self, state):
        self.state = state
        self._write_lock = threading.Lock()
        self._proc: subprocess.Popen | None = None

    @property
    def folder(self) -> Path:
        return self.state.store_dir / ENTRIES_DIR

    def path_if_ready(self, node_id: str) -> Path | None:
        """The entry's file when it is already written (a stat: cheap enough for hover links)."""
        path = self.folder / file_name(node_id)
        return path if path.exists() else None

    def ensure(self, node_id: str) -> Path | None:
        """Write the entry's file now if needed; None when the store is not ready or the id unknown."""
        path = self.folder / file_name(node_id)
        if path.exists():
            return path
        markdown = self.render(node_id)
        if markdown is None:
            return None
        with self._write_lock:
            write_read_only(path, markdown)
        return path

    def render(self, node_id: str) -> str | None:
        """The full entry as markdown (with its ancestors), or None if unknown or not ready."""
        store = self.state.store()
        if store is None or store.get(node_id) is None:
            return None
        from gmprep.kg.render import render_entry

        return render_entry(store, node_id)

    def start_background(self) -> bool:
        """Start the child process that writes every entry file (once per ready store)."""
        if self._proc is not None and self._proc.poll() is None:
            return False
        cmd = [sys.executable, "-m", "gmprep.server.entries", "--store", str(self.state.store_dir)]
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=_child_setup if hasattr(os, "nice") else None,
        )
        threading.Thread(target=self._watch, args=(self._proc,), daemon=True, name="gmprep-render-watch").start()
        return True

    def _watch(self, proc: subprocess.Popen) -> None:
        _, err = proc.communicate()
        if proc.returncode not in (0, -15):
            log.warning("writing entry files failed (%s): %s", proc.returncode, err.decode(errors="replace")[-2000:])

    def stop(self) -> None:
        """Stop the background writer (shutdown, rebuild)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()


def _child_setup() -> None:
    """In the writer process before exec: low priority, and (Linux) die with the server, even when
    the server is killed with SIGKILL."""
    os.nice(10)
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
        except OSError:
            pass


def _unlink(path: Path) -> None:
    try:
        os.chmod(path, stat.S_IWUSR | stat.S_IRUSR)
        path.unlink()
    except FileNotFoundError:
        pass


def main(argv: list[str] | None = None) -> int:
    """``python -m gmprep.server.entries --store DIR``: write every entry file of a store."""
    p = argparse.ArgumentParser(description="write the read-only entry files of a gmprep store")
    p.add_argument("--store", type=Path, required=True)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    n = render_all(args.store)
    print(f"wrote {n} entry files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
