"""The reranker's training rows as a file: mined where the store is, trained on where the GPU is.

Mining (queries, hard negatives from the store's BM25 and vectors) needs the store; training needs only
the rows. ``gmprep reranker train --rows-out FILE`` writes them, ``--rows-in FILE`` trains from them on a
machine without the store (a lent GPU: scripts/gpu_reranker.sh).

The file is gzipped JSON lines. The first line is the header (``format``, the mining config and seed,
counts, and what the rows came from: the store's corpus digest, entry counts, its embedder); each
following line is one group exactly as the trainer consumes it: ``query`` and ``passages`` (the positive
first, then the negatives, each read through ``kg.reranker.rerank_passage`` for that query), with the
``ids`` of those passages and the query's ``generator`` kept for the record.

This module imports nothing of ours and no pydantic: the GPU side reads rows with the standard library.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = "gmprep-reranker-rows/1"


class RowsError(ValueError):
    """A rows file that is not one (wrong format line, ragged groups)."""


@dataclass
class Row:
    """One training group: the query, its passages (positive first) and their entry ids."""

    query: str
    passages: list[str]
    ids: list[str]
    generator: str


@dataclass
class Rows:
    """A header and its rows; ``sha256`` is the file's when read from (or written to) one."""

    header: dict[str, Any]
    rows: list[Row]
    sha256: str | None = None
    path: str | None = None
    by_generator: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.by_generator:
            for r in self.rows:
                self.by_generator[r.generator] = self.by_generator.get(r.generator, 0) + 1

    @property
    def negatives(self) -> int:
        return int(self.header["negatives"])

    def columns(self) -> dict[str, list[str]]:
        """Columns for the trainer: ``query``, ``positive``, ``negative_1`` .. ``negative_n``."""
        names = ["positive", *(f"negative_{i + 1}" for i in range(self.negatives))]
        cols: dict[str, list[str]] = {"query": [r.query for r in self.rows]}
        for i, name in enumerate(names):
            cols[name] = [r.passages[i] for r in self.rows]
        return cols


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_rows(path: Path, header: dict[str, Any], rows: Iterable[Row]) -> Rows:
    """Write ``header`` (with ``format`` and ``rows`` added) and the rows; returns them with the file's sha256.
    The gzip header carries no name or time, so the same rows give the same bytes (and sha256)."""
    rows = list(rows)
    head = {"format": FORMAT, **header, "rows": len(rows)}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
        gz.write((json.dumps(head, sort_keys=True) + "\n").encode())
        for r in rows:
            line = {"query": r.query, "passages": r.passages, "ids": r.ids, "generator": r.generator}
            gz.write((json.dumps(line, ensure_ascii=False) + "\n").encode())
    tmp.replace(path)
    return Rows(head, rows, sha256=_sha256(path), path=str(path))


def read_rows(path: Path) -> Rows:
    """The header and rows of a file ``write_rows`` wrote; every row must have 1 + ``negatives`` passages."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        try:
            head = json.loads(fh.readline() or "null")
        except ValueError as exc:
            raise RowsError(f"{path}: the first line is not JSON ({exc})") from exc
        if not isinstance(head, dict) or head.get("format") != FORMAT:
            raise RowsError(f"{path}: not a reranker rows file (first line must have format {FORMAT!r})")
        width = 1 + int(head["negatives"])
        rows = []
        for n, line in enumerate(fh, start=2):
            d = json.loads(line)
            if len(d["passages"]) != width or len(d["ids"]) != width:
                raise RowsError(f"{path}:{n}: {len(d['passages'])} passages, the header says {width}")
            rows.append(Row(d["query"], d["passages"], d["ids"], d["generator"]))
    if len(rows) != head.get("rows"):
        raise RowsError(f"{path}: {len(rows)} rows, the header says {head.get('rows')} (a truncated file?)")
    return Rows(head, rows, sha256=_sha256(path), path=str(path))
