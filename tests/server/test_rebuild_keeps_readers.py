"""A rebuild must not pull the store out from under a request that is still running.

Seen in the VS Code e2e: an ask cancelled in the editor keeps searching for a moment; "Rebuild index"
closed the store under it ("Cannot operate on a closed database", and once a SIGSEGV when the
memory-mapped vectors went away). The index thread now retires the store: new requests open a fresh
one, running ones finish on the old objects.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from lsp_helpers import copy_store

import gmprep.ingest.pipeline as pipeline
from gmprep.common.settings import Settings
from gmprep.server.indexing import IndexRunner
from gmprep.server.state import ServerState


def test_a_rebuild_leaves_a_running_requests_store_usable(store_dir: Path, tmp_path: Path, monkeypatch):
    store_path = copy_store(store_dir, tmp_path / "store")
    state = ServerState(Settings(store_dir=store_path))
    state.set_status(state="ready", message="test", percentage=None)
    in_flight = state.store()  # what a running ask holds
    assert in_flight is not None
    entries = in_flight.entry_count()

    def quick_build(settings, notes_dir=None, progress=None, **kw):  # the build itself is not under test here
        return SimpleNamespace(entries=entries)

    monkeypatch.setattr(pipeline, "build_index", quick_build)
    server = SimpleNamespace(loop=None)
    IndexRunner(server, state)._build()

    assert in_flight.entry_count() == entries  # still open for the request that holds it
    fresh = state.store()
    assert fresh is not None and fresh is not in_flight  # new requests get a store opened after the build
    state.shutdown()
