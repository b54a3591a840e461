"""The store health check (``gmprep.ingest.health``, its one owner) and what the commands do with it:
a half-embedded store (a killed build) and a lost vector file are named problems, ``index status``
exits non-zero, search refuses with one line instead of silently going keyword-only, a graph-only
build (``--no-embed``) still searches by keywords; a read-only store is read-only, not "corrupt"."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gmprep.cli import main
from gmprep.common.errors import ReadOnlyError
from gmprep.common.settings import Settings
from gmprep.ingest.health import check_store
from gmprep.ingest.pipeline import build_index
from gmprep.kg.search import Searcher
from gmprep.kg.store import Store


def _killed_mid_embedding(store: Path, keep: int) -> None:
    """What a build killed while embedding leaves: ``build_state = building`` (written before the
    corpus was re-ingested) and only the first batches' nodes marked embedded."""
    with sqlite3.connect(store / "graph.db") as db:
        db.execute("UPDATE meta SET value='building' WHERE key='build_state'")
        db.execute("UPDATE nodes SET embedded=0 WHERE rowid > ?", (keep,))


def test_a_killed_build_is_named_and_status_fails(store_copy: Path, capsys):
    assert main(["index", "status", "--store", str(store_copy)]) == 0
    assert "healthy" in capsys.readouterr().out
    _killed_mid_embedding(store_copy, keep=512)
    check = check_store(store_copy)
    assert not check.usable and check.build_state == "building" and check.nodes_embedded == 512
    assert main(["index", "status", "--store", str(store_copy)]) == 1
    out = capsys.readouterr().out
    assert f"problem: the last index build did not finish (512 of {check.nodes} nodes have a vector)" in out
    assert main(["search", "frightened", "--store", str(store_copy)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("gmprep: error: the last index build did not finish") and "\n" not in err
    assert "gmprep index build" in err


def test_a_missing_vector_file_is_a_store_problem_and_search_refuses(store_copy: Path, capsys):
    (store_copy / "vectors.usearch").unlink()
    assert any("vectors.usearch is missing" in p for p in check_store(store_copy).problems)
    assert main(["index", "status", "--store", str(store_copy)]) == 1
    assert "vectors.usearch is missing" in capsys.readouterr().out
    assert main(["search", "frightened", "--store", str(store_copy)]) == 1
    err = capsys.readouterr().err
    assert "vectors.usearch is missing; search refuses to run on keywords alone" in err and "Traceback" not in err
    with Store.open(store_copy, create=False) as store, pytest.raises(Exception, match="refuses"):
        Searcher(store).search("frightened")


def test_a_graph_only_build_searches_by_keywords(tmp_path: Path, mini_corpus: Path):
    store = tmp_path / "store"
    build_index(Settings(store_dir=store), progress=False, embed=False, corpus_folder=mini_corpus)
    with Store.open(store, create=False) as opened:
        hits = Searcher(opened).search("prone", rerank=False)
    assert hits and hits[0].node_id == "pf2e:condition:prone"


def _read_only_prefix() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root without setpriv: cannot take away write access")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


@pytest.mark.slow
def test_a_read_only_store_is_read_only_not_corrupt(store_copy: Path, tmp_path: Path):
    prefix = _read_only_prefix()
    for p in store_copy.glob("graph.db-*"):
        p.unlink()  # as shipped or mounted: no WAL index beside the database
    for p in [store_copy, *store_copy.iterdir()]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    gmprep = [*prefix, sys.executable, "-m", "gmprep", "--store", str(store_copy)]
    try:
        status = subprocess.run([*gmprep, "index", "status"], capture_output=True, text=True, timeout=120)
        assert status.returncode == 0, status.stdout + status.stderr
        assert "read_only: True" in status.stdout and "corrupt" not in status.stdout
        build = subprocess.run([*gmprep, "index", "build"], capture_output=True, text=True, timeout=120)
        assert build.returncode == 1 and "Traceback" not in build.stderr
        assert build.stderr.strip().splitlines() == [
            f"gmprep: error: the index folder {store_copy} is read-only: make it writable, or build an index "
            "in a folder you can write with `gmprep --store DIR index build`"
        ]
        search = subprocess.run([*gmprep, "search", "frightened", "--k", "1"], capture_output=True, text=True,
                                timeout=300)
        assert search.returncode == 0 and "pf2e:condition:frightened" in search.stdout, search.stderr
    finally:
        for p in [store_copy, *store_copy.iterdir()]:
            p.chmod(0o755 if p.is_dir() else 0o644)


def test_a_writer_on_a_read_only_folder_gets_read_only_error(tmp_path: Path):
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere in-process (the subprocess test above drops the capability)")
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(ReadOnlyError):
            Store.open(tmp_path / "store")
    finally:
        tmp_path.chmod(0o755)


class _Killed(BaseException):
    """Stands for the process dying: nothing after the raise point runs (BaseException skips handlers)."""


def test_the_pipeline_leaves_a_build_cut_short_marked_unfinished(tmp_path: Path, mini_corpus: Path):
    store = tmp_path / "store"

    def die_while_embedding(stage: str, done: int, total: int) -> None:
        if stage == "embed" and done == 0:
            raise _Killed

    with pytest.raises(_Killed):
        build_index(Settings(store_dir=store), progress=die_while_embedding, corpus_folder=mini_corpus)
    check = check_store(store, corpus_folder=mini_corpus)
    assert check.build_state == "building" and not check.usable
    assert any("the last index build did not finish (0 of" in p for p in check.problems)
    build_index(Settings(store_dir=store), progress=False, corpus_folder=mini_corpus)  # finishing repairs it
    assert check_store(store, corpus_folder=mini_corpus).usable
