"""Read-only markdown files of full entries, ``<store_dir>/entries/<file>.md``, that hovers link to
and Go to Definition opens. Rendering is ``gmprep.kg.render.render_entry``.

All corpus entries are written once per store build by a low-priority child process
(``python -m gmprep.server.entries --store DIR``): rendering five thousand entries in a server
thread would hold the GIL and put hovers in a queue behind it. A stamp file records which build
the files come from; after a rebuild they are rewritten. Go to Definition writes a missing file
on the spot.

The child is started by one long-lived thread of the server (``gmprep-entries``), never by the
short-lived thread that happened to notice the store is ready: on Linux the child's parent-death
signal fires when the *thread* that forked it exits, which killed every writer with SIGTERM right
after an index build. Any exit other than success, or a stop the server asked for, is an error.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import queue
import re
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
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
    with Store.open(store_dir, create=False) as store:
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


class EntryFiles:
    """The server's view of the entry files: look up, write one now, or start the background writer."""

    def __init__(self, state, on_error: Callable[[str], None] | None = None):
        self.state = state
        self.on_error = on_error  # told (in words) when the writer fails
        self.last_error: str | None = None
        self._write_lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._stopping = False
        self._requests: queue.Queue[Path] = queue.Queue()
        self._owner: threading.Thread | None = None

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
        """Have the writer thread start the child process that writes every entry file (once per
        ready store); False when one is already running. Callable from any thread."""
        if self._proc is not None and self._proc.poll() is None:
            return False
        if self._owner is None or not self._owner.is_alive():
            self._owner = threading.Thread(target=self._serve, daemon=True, name="gmprep-entries")
            self._owner.start()
        self._requests.put(self.state.store_dir)
        return True

    def _serve(self) -> None:
        """The writer thread: lives as long as the server, so the child's parent-death signal
        means "the server died", not "a helper thread finished"."""
        while True:
            store_dir = self._requests.get()
            if self._proc is not None and self._proc.poll() is None:
                continue  # a writer for this store is already running
            cmd = [sys.executable, "-m", "gmprep.server.entries", "--store", str(store_dir)]
            self._stopping = False
            try:
                proc = subprocess.Popen(
                    cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    preexec_fn=_child_setup if hasattr(os, "nice") else None,
                )
            except OSError as exc:
                self._failed(f"could not start the entry-file writer: {exc}")
                continue
            self._proc = proc
            _, err = proc.communicate()
            if proc.returncode != 0 and not self._stopping:
                how = f"killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
                tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
                self._failed(f"writing the full-entry files failed ({how}) {tail[0]}".strip())

    def _failed(self, message: str) -> None:
        self.last_error = message
        log.error("%s", message)
        if self.on_error is not None:
            try:
                self.on_error(message)
            except Exception:
                log.exception("could not report the entry-writer failure")

    def stop(self) -> None:
        """Stop the background writer (shutdown, rebuild)."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            self._stopping = True
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()


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
