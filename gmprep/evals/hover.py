"""``gmprep eval hover``: hover accuracy on labelled prep notes, and precision/recall on real notes.

``--notes DIR``: starts ``gmprep lsp`` as a subprocess, opens every ``*.md`` note of the folder, asks
for a hover at each labelled mention and compares the entry id the hover cites with the gold id (a
``null`` gold must get no hover at all). Reports ``{"mentions", "accuracy", "invented", "p50_ms", ...}``.

``--real DIR --split tune|heldout|heldoutN|both``: precision, recall and F1 of the mentions hover would show
on real campaign notes other GMs wrote (``gmprep.evals.real_notes``; the notes are fetched by
``DIR/fetch.py``), with false positives counted by reason.
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


def _split_name(name: str) -> str:
    """argparse type of ``--split``: the split-name rule of ``gmprep.evals.real_notes``."""
    from gmprep.evals.real_notes import check_split

    try:
        return check_split(name)
    except GmprepError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``gmprep eval hover``."""
    p.add_argument("--notes", type=Path, help="folder of X.md notes with X.md.json labels")
    p.add_argument("--real", type=Path, help="labelled real notes (e.g. bench/data/real-notes)")
    p.add_argument("--split", type=_split_name, default="tune",
                   help="which part of --real to score: tune, heldout, heldout2, heldout3, ... or both (default: tune; "
                        "the held-out splits only to report, never to tune)")
    p.add_argument("--real-cache", type=Path, help="fetched texts of --real (default $GMPREP_REAL_NOTES or .cache/real-notes)")
    p.add_argument("--errors", action="store_true", help="with --real: list every false positive and miss")
    p.add_argument("--hover", action="append", default=[], metavar="KEY=VALUE",
                   help="with --real: override a hover setting for this run, e.g. context_model=false (repeatable)")
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
    if args.notes is None and args.real is None:
        raise GmprepError("give --notes DIR (labelled notes) and/or --real DIR (labelled real notes)")
    out: dict = {}
    if args.real is not None:
        from gmprep.evals.real_notes import evaluate

        reports = evaluate(args.real, args.split, args.real_cache, settings=_hover_settings(args.hover))
        out["real"] = {r.split: r.model_dump(exclude=set() if args.errors else {"false_positives", "missed"})
                       for r in reports}
        if not args.json:
            for r in reports:
                _print_real(r, args.errors)
    if args.notes is not None:
        report = _run_notes(args)
        out["notes"] = report.model_dump()
        if not args.json:
            _print_notes(report)
    if args.json:
        print(json.dumps(out if args.real is not None else out["notes"]))
    return 0


def _hover_settings(pairs: list[str]):
    """``["context_model=false"]`` -> HoverSettings with those values (pydantic converts); a bad key or
    value is a one-line error."""
    from pydantic import ValidationError

    from gmprep.common.settings import HoverSettings

    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key.strip() not in HoverSettings.model_fields:
            raise GmprepError(f"--hover takes KEY=VALUE with KEY one of {', '.join(HoverSettings.model_fields)}, not {pair!r}")
        values[key.strip()] = value.strip()
    try:
        return HoverSettings(**values)
    except ValidationError as exc:
        raise GmprepError(f"--hover: {exc.errors()[0]['msg']}") from exc


def _print_real(r, errors: bool) -> None:
    reasons = ", ".join(f"{k} {v}" for k, v in r.false_positives_by_reason.items()) or "none"
    print(
        f"real notes [{r.split}]: precision {r.precision:.3f} ({r.true_positives}/{r.predicted}), "
        f"recall {r.recall:.3f} of {r.gold} ({r.recall_in_store:.3f} of {r.gold_in_store} in the store), "
        f"F1 {r.f1:.3f} (in store {r.f1_in_store:.3f}); {r.docs} notes, {r.judged} judged spans; "
        f"false positives by reason: {reasons}"
    )
    if errors:
        for f in r.false_positives:
            print(f"  false positive: {f['doc']}@{f['start']} {f['text']!r} -> {f['id']} ({f['reason']})")
        for m in r.missed:
            print(f"  missed: {m['doc']}@{m['start']} {m['text']!r} {m['ids'] or '(absent from the store)'}")


def _run_notes(args: argparse.Namespace) -> HoverReport:
    cases = load_cases(args.notes)
    cmd = args.server or [sys.executable, "-m", "gmprep", "lsp", "--no-build", "--stdio"]
    results = asyncio.run(run_hovers(args.notes, cases, cmd, getattr(args, "store", None)))
    report = summarize(results)
    if args.hovers_out:
        with args.hovers_out.open("w", encoding="utf-8") as fh:
            for r in results:
                fh.write(json.dumps({"file": r.case.file, "line": r.case.line, "character": r.case.character, "id": r.got}) + "\n")
    return report


def _print_notes(report: HoverReport) -> None:
    print(
        f"hover accuracy {report.accuracy:.3f} over {report.mentions} mentions "
        f"(resolvable exact {report.resolvable_exact:.3f} of {report.resolvable}, "
        f"null without hover {report.null_no_hover:.3f} of {report.null_mentions}); invented {report.invented}; "
        f"latency p50 {report.p50_ms} ms, p95 {report.p95_ms} ms"
    )
    for w in report.wrong:
        print(f"  wrong: {w['file']}:{w['line']} {w['text']!r} gold {w['gold']} got {w['got']}")
