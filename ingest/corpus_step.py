"""What the corpus scripts (``scripts/add_*.py``) share: one owner for their flags, for reading the bundled
corpus (stopping on a bad record), for a checkout's commit, and for writing the corpus back with the script's
own manifest entries replaced.

Each script adds one kind of data (creature Speed, weapon or armor statistics, pages, class features) from a
transcription kept in ``ingest/data/`` or from a checkout of its source; a rerun changes nothing, and the
scripts may run in any order, so every script owns exactly its manifest entries (``owned_by``) and leaves the
others as they are.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from gmprep.ingest.corpus import corpus_dir, iter_records
from gmprep.ingest.foundry.build import write_corpus

T = TypeVar("T")


class CorpusStepError(Exception):
    """The corpus could not be read (its bad records, one per line)."""


def parser(doc: str | None, source: str, source_help: str, transcribe: bool = False) -> argparse.ArgumentParser:
    """The flags every script takes: ``--corpus``, the checkout of its source (``--vault`` or ``--clone``, else
    the transcription) and, with ``transcribe``, ``--transcribe`` (rewrite the transcription from the checkout)."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    ap.add_argument(f"--{source}", type=Path, help=f"{source_help} (default: the transcription)")
    if transcribe:
        ap.add_argument("--transcribe", action="store_true", help=f"with --{source}: rewrite the transcription from it")
    ap.add_argument("--corpus", type=Path, default=corpus_dir())
    return ap


def read_source(args: argparse.Namespace, transcription: Path, read_clone: Callable[[Path], list[T]],
                read_transcription: Callable[[Path], list[T]],
                write_transcription: Callable[[list[T], Path], object]) -> list[T]:
    """The source's rows: parsed from ``args.clone`` (and written to ``transcription`` with ``--transcribe``),
    else read from the transcription."""
    if args.clone:
        rows = read_clone(args.clone)
        if args.transcribe:
            write_transcription(rows, transcription)
        return rows
    return read_transcription(transcription)


def read_checkout_or(args: argparse.Namespace, transcription: Path, read_vault: Callable[[Path, str], list[T]],
                     read_transcription: Callable[[Path], list[T]], where: str) -> tuple[list[T], str]:
    """The source's rows and the manifest's commit: from the ``--vault`` checkout at its commit, else from the
    transcription (whose rows carry their own commits, said by ``where``)."""
    if args.vault:
        commit = git_head(args.vault)
        return read_vault(args.vault, commit), f"checkout at {commit}"
    return read_transcription(transcription), where


def git_head(checkout: Path) -> str:
    """The commit a checkout is at ("unknown" when git cannot say)."""
    out = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def transform(corpus: Path, step: Callable[[Iterator[dict]], T]) -> T:
    """``step`` over the corpus's records; raises ``CorpusStepError`` when a record could not be read."""
    errors: list[str] = []
    out = step(iter_records(corpus, errors))
    if errors:
        raise CorpusStepError("\n".join(errors))
    return out


def owned_by(repo: str, *prefixes: str) -> Callable[[dict], bool]:
    """A manifest entry of ``repo`` whose ``what`` starts with one of ``prefixes`` (the script's own)."""
    return lambda source: source.get("repo") == repo and source.get("what", "").startswith(prefixes)


def replace_sources(sources: list[dict], drop: Callable[[dict], bool], new: list[dict]) -> list[dict]:
    """The manifest sources with those ``drop`` selects replaced by ``new``, where the first of them stood
    (appended when none did), so that scripts adding sources can rerun in any order with the same result."""
    at = next((i for i, s in enumerate(sources) if drop(s)), len(sources))
    kept = [s for s in sources[:at] if not drop(s)]
    return [*kept, *new, *(s for s in sources[at:] if not drop(s))]


def write(corpus: Path, records: list[dict], ours: Callable[[dict], bool], entries: list[dict]) -> None:
    """Write ``records`` back with the manifest's entries that ``ours`` selects replaced by ``entries``."""
    path = corpus / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"sources": []}
    manifest["sources"] = replace_sources(manifest.get("sources", []), ours, entries)
    write_corpus(records, corpus, manifest)


def sources_of(rec: dict) -> list[dict]:
    """A record's source entries (one dict or a list of them)."""
    src = rec.get("source")
    return src if isinstance(src, list) else [src] if isinstance(src, dict) else []


def run(main: Callable[[], int]) -> int:
    """A script's exit status: a corpus that cannot be read is its records' errors and 1, not a traceback."""
    try:
        return main()
    except CorpusStepError as e:
        print(e, file=sys.stderr)
        return 1


def report(label: str, rows: list[str], sep: str = "; ") -> None:
    """One line of what a step left: ``label (n): a; b`` on stderr."""
    print(f"{label} ({len(rows)}): {sep.join(rows) or 'none'}", file=sys.stderr)
