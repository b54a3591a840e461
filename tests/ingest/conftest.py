"""Shared fixtures of the ingest tests: a small real corpus."""

import gzip
import json
from pathlib import Path

import pytest

from gmprep.ingest.corpus import corpus_dir

WANT = {"pf2e:condition:prone", "pf2e:condition:off-guard", "pf2e:action:trip", "pf2e:trait:attack"}


@pytest.fixture()
def mini_corpus(tmp_path: Path) -> Path:
    """Four real entries plus one malformed line."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    lines = []
    for name in ("conditions", "actions", "traits"):
        with gzip.open(corpus_dir() / f"{name}.jsonl.gz", "rt") as fh:
            lines += [line for line in fh if json.loads(line)["id"] in WANT]
    (folder / "mini.jsonl").write_text("".join(lines) + "{broken\n")
    return folder
