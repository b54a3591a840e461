"""JSON-lines files, plain or gzip-compressed, as data jobs append them.

One reader for files that a killed job may have left with a torn last line (the question
generation job and the question index both read them)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def open_text(path: Path, mode: str = "rt") -> IO[str]:
    """``path`` opened as UTF-8 text; ``.gz`` files through gzip (appending adds a gzip member,
    which readers see as one stream)."""
    if path.suffix == ".gz":
        return gzip.open(path, mode, encoding="utf-8")  # type: ignore[return-value]
    return open(path, mode.replace("t", ""), encoding="utf-8")


def json_objects(path: Path) -> Iterator[dict]:
    """Each line of ``path`` that is a JSON object; other lines (a torn last line) are skipped."""
    with open_text(path) as f:
        for line in f:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                yield row
