"""``gmprep eval hover``: hover accuracy on labelled prep notes, through the real language server.

Starts ``gmprep lsp`` as a subprocess, opens every ``*.md`` note of the folder, asks for a hover at
each labelled mention and compares the entry id the hover cites with the gold id (a ``null`` gold
must get no hover at all). Prints ``{"mentions", "accuracy", "invented", "p50_ms", "p95_ms", ...}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from pathlib import Path

from pydantic import BaseModel, Field

from gmprep.common.errors import GmprepError

_ID = re.compile(r"`([a-z0-9]+:[a-z0-9-]+:[^`\s]+)`")


class HoverCase(BaseModel):
    """One labelled mention."""

    file: str
    line: int
    character: int
    text: str
    gold: str | None


class HoverResult(BaseModel):
    """What the server answered for one case."""

    case: HoverCase
    got: str | None
    ms: float


class HoverReport(BaseModel):
    """Totals of a hover evaluation."""

    mentions: int
    accuracy: float
    invented: int
    p50_ms: float
    p95_ms: float
    resolvable: int
    resolvable_exact: float
    null_mentions: int
    null_no_hover: float
    wrong: list[dict] = Field(default_factory=list)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``gmprep eval hover``."""
    p.add_argument("--notes", type=Path, required=True, help="folder of X.md notes with X.md.json labels")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--hovers-out", type=Path, help="also write one JSON line per hover (score.py format)")
    p.add_argument("--server", nargs="+", help="server command (default: this python -m gmprep lsp --stdio)")


def load_cases(folder: Path) -> list[HoverCase]:
    """Every labelled mention of the folder."""
    if not folder.is_dir():
        raise GmprepError(f"notes folder {folder} does not exist")
    cases = []
    for note in sorted(folder.glob("*.md")):
        labels = note.with_name(note.name + ".json")
        if not labels.exists():
            continue
        for m in json.loads(labels.read_text(encoding="utf-8"))["mentions"]:
            cases.append(HoverCase(file=note.name, **{k: m[k] for k in ("line", "character", "text", "gold")}))
    if not cases:
        raise GmprepError(f"no labelled notes (X.md + X.md.json) in {folder}")
    return cases


def cited_id(hover) -> str | None:
    """The entry id a hover cites (its first backquoted id), None for no hover."""
    if hover is None:
        return None
    contents = hover.contents
    value = getattr(contents, "value", None) if not isinstance(contents, str) else contents
    m = _ID.search(value or "")
    return m.group(1) if m else None


async def run_hovers(folder: Path, cases: list[HoverCase], server_cmd: list[str], store: str | None) -> list[HoverResult]:
    """Open each note in a real server and hover every case."""
    from lsprotocol import types as lsp
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("gmprep-eval-hover", "1")
    await client.start_io(*server_cmd)
    try:
        options = {"storeDir": store} if store else {}
        await client.initialize_async(
            lsp.InitializeParams(
                process_id=None, capabilities=lsp.ClientCapabilities(),
                root_uri=folder.resolve().as_uri(), initialization_options=options,
            )
        )
        client.initialized(lsp.InitializedParams())
        await _wait_names(client)
        results: list[HoverResult] = []
        for name in sorted({c.file for c in cases}):
            path = (folder / name).resolve()
            uri = path.as_uri()
            client.text_document_did_open(
                lsp.DidOpenTextDocumentParams(
                    text_document=lsp.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=path.read_text(encoding="utf-8"))
                )
            )
            for case in (c for c in cases if c.file == name):
                t0 = time.perf_counter()
                hover = await client.text_document_hover_async(
                    lsp.HoverParams(
                        text_document=lsp.TextDocumentIdentifier(uri=uri),
                        position=lsp.Position(line=case.line, character=case.character),
                    )
                )
                ms = (time.perf_counter() - t0) * 1000
                results.append(HoverResult(case=case, got=cited_id(hover), ms=ms))
        await client.shutdown_async(None)
        client.exit(None)
        return results
    finally:
        await client.stop()


async def _wait_names(client, timeout: float = 60.0) -> None:
    """Wait until the server's name index is loaded, so hover latency is the warm latency."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = await client.protocol.send_request_async("gmprep/status", {})
        if getattr(status, "namesReady", False):
            return
        await asyncio.sleep(0.1)
    raise GmprepError("the language server did not load its name index in time")


def summarize(results: list[HoverResult]) -> HoverReport:
    """Accuracy over all mentions; the resolvable and null parts; latency percentiles."""
    resolvable = [r for r in results if r.case.gold is not None]
    nulls = [r for r in results if r.case.gold is None]
    exact = sum(r.got == r.case.gold for r in resolvable)
    silent = sum(r.got is None for r in nulls)
    ms = sorted(r.ms for r in results)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    return HoverReport(
        mentions=len(results),
        accuracy=round((exact + silent) / len(results), 4),
        invented=len(nulls) - silent,
        p50_ms=round(statistics.median(ms), 2),
        p95_ms=round(p95, 2),
        resolvable=len(resolvable),
        resolvable_exact=round(exact / len(resolvable), 4) if resolvable else 1.0,
        null_mentions=len(nulls),
        null_no_hover=round(silent / len(nulls), 4) if nulls else 1.0,
        wrong=[
            {"file": r.case.file, "line": r.case.line, "text": r.case.text, "gold": r.case.gold, "got": r.got}
            for r in results if r.got != r.case.gold
        ],
    )


def run(args: argparse.Namespace) -> int:
    """Entry point of ``gmprep eval hover``."""
    cases = load_cases(args.notes)
    cmd = args.server or [sys.executable, "-m", "gmprep", "lsp", "--no-build", "--stdio"]
    results = asyncio.run(run_hovers(args.notes, cases, cmd, getattr(args, "store", None)))
    report = summarize(results)
    if args.hovers_out:
        with args.hovers_out.open("w", encoding="utf-8") as fh:
            for r in results:
                fh.write(json.dumps({"file": r.case.file, "line": r.case.line, "character": r.case.character, "id": r.got}) + "\n")
    if args.json:
        print(report.model_dump_json())
    else:
        print(
            f"hover accuracy {report.accuracy:.3f} over {report.mentions} mentions "
            f"(resolvable exact {report.resolvable_exact:.3f} of {report.resolvable}, "
            f"null without hover {report.null_no_hover:.3f} of {report.null_mentions}); invented {report.invented}; "
            f"latency p50 {report.p50_ms} ms, p95 {report.p95_ms} ms"
        )
        for w in report.wrong:
            print(f"  wrong: {w['file']}:{w['line']} {w['text']!r} gold {w['gold']} got {w['got']}")
    return 0
