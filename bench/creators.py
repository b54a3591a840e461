"""Inlay-hint latency of encounter blocks, through a real ``gmprep lsp`` over stdio.

    python bench/creators.py [--lines 300] [--blocks 10] [--rounds 30] [--json]

Generates a prep note of ``--lines`` lines (prose lines from bench/lsp.py's generator, with rule
names) holding ``--blocks`` encounter blocks of the three forms (heading + list, fenced, one line),
opens it and times ``textDocument/inlayHint`` over the whole note:

* ``inlay_hints_same_version``: the note unchanged (the editor re-asks on scroll and focus);
* ``inlay_hints_after_edit``: right after a ``didChange`` (alternately a character typed on a prose
  line and on a creature line of one block, which then names no creature until fixed): the server
  handles the change first (mentions, diagnostics), then the hints, as while typing.

Baselines of the same run: ``baseline_hover_after_edit`` (the same edits, then a hover on a rule
name: what any request pays after a change), hovers on the unchanged note, and the
``gmprep/status`` round trip. ``in_process`` splits an edit's cost without the protocol: the
creators' analysis of the new version beside the rule-mention scan every request after an edit
waits for. Target (issue 14): inlay hints p95 < 30 ms on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from collections.abc import Sized
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp import make_note, summary  # noqa: E402  (bench/lsp.py: the prose generator, percentiles)

CREATURES = [
    "goblin warriors", "goblin war chanter", "elite wolf", "zombie shamblers", "weak ghoul stalker",
    "forest troll", "cave bear", "skeleton guards", "giant rat", "kobold scout", "harpy", "wight",
]


def encounter_block(i: int, rng: random.Random) -> tuple[list[str], int]:
    """One block, its form chosen by ``i``; 2-4 creature groups for a party of 3-5 at level 1-6.
    Returns its lines and the index of its first creature line."""
    size, level = rng.randint(3, 5), rng.randint(1, 6)
    picks = rng.sample(CREATURES, rng.randint(2, 4))
    items = [f"{rng.randint(1, 3)} {c}" if not c.startswith(("elite", "weak")) else c for c in picks]
    form = i % 3
    after = ["The creatures fight to the last.", ""]  # a paragraph: the prose's list items start a new list
    if form == 0:
        return [f"## Encounter {i} ({size} PCs, level {level})", "", *[f"- {x}" for x in items], "", *after], 2
    if form == 1:
        return ["```encounter", f"party: {size} PCs, level {level}", *items, "```", "", *after], 2
    return [f"Encounter ({size} PCs, level {level}): {', '.join(items)}", "", *after], 0


def make_creators_note(lines: int, blocks: int, seed: int = 0) -> tuple[list[str], list[int], list[tuple[int, int, int]]]:
    """(note lines, line of one creature per block, (line, col, len) of rule names in the prose)."""
    rng = random.Random(seed)
    block_lines = [encounter_block(i, rng) for i in range(blocks)]
    prose_needed = max(0, lines - sum(len(b) for b, _ in block_lines))
    prose, spots = make_note(prose_needed, seed)
    prose_lines = prose.splitlines()
    step = max(1, len(prose_lines) // (blocks + 1))
    out: list[str] = []
    creature_lines: list[int] = []
    name_spots: list[tuple[int, int, int]] = []
    by_line: dict[int, list[tuple[int, int]]] = {}
    for line, col, length in spots:
        by_line.setdefault(line, []).append((col, length))
    k = 0
    for i, text in enumerate(prose_lines):
        if i and i % step == 0 and k < blocks:
            bl, first_creature = block_lines[k]
            creature_lines.append(len(out) + first_creature)
            out += bl
            k += 1
        for col, length in by_line.get(i, []):
            name_spots.append((len(out), col, length))
        out.append(text)
    return out, creature_lines, name_spots


async def timed(coro) -> tuple[float, object]:
    t0 = time.perf_counter()
    result = await coro
    return (time.perf_counter() - t0) * 1000, result


async def bench(args) -> dict:
    lines, creature_lines, spots = make_creators_note(args.lines, args.blocks)
    text = "\n".join(lines) + "\n"
    workdir = Path(args.workdir or ".").resolve()
    uri = (workdir / "bench-creators.md").as_uri()
    ident = lsp.TextDocumentIdentifier(uri=uri)
    client = LanguageClient("gmprep-bench", "1")
    await client.start_io(sys.executable, "-m", "gmprep", "lsp", "--no-build", "--stdio")
    await client.initialize_async(lsp.InitializeParams(process_id=None, capabilities=lsp.ClientCapabilities(),
                                                       root_uri=workdir.as_uri()))
    client.initialized(lsp.InitializedParams())
    while not getattr(await client.protocol.send_request_async("gmprep/status", {}), "namesReady", False):
        await asyncio.sleep(0.1)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text)))
    whole = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=len(lines), character=0))
    hint_params = lsp.InlayHintParams(text_document=ident, range=whole)
    first_ms, first = await timed(client.text_document_inlay_hint_async(hint_params))
    n_hints = len(first) if isinstance(first, Sized) else 0
    same, edited, hovers, status, hover_edited = [], [], [], [], []
    version = 1
    rng = random.Random(2)
    prose_lines = [i for i, t in enumerate(lines) if t.startswith("Plain prose")]
    for rnd in range(args.rounds + 1):  # round 0 warms up and is not counted
        s, e, h, b, he = [], [], [], [], []
        for _ in range(5):
            ms, _ = await timed(client.text_document_inlay_hint_async(hint_params))
            s.append(ms)
        for k in range(8):
            version += 1
            # typing: a character added to a prose line, or to a creature line of one block; then the
            # hints (or, as the baseline, a hover) of the new version
            line = rng.choice(prose_lines) if k % 2 == 0 else creature_lines[rng.randrange(len(creature_lines))]
            at = lsp.Position(line=line, character=len(lines[line]))
            lines[line] += "s" if k % 2 else " x"
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(start=at, end=at), text="s" if k % 2 else " x")],
            ))
            if (k // 2) % 2 == 0:
                ms, _ = await timed(client.text_document_inlay_hint_async(hint_params))
                e.append(ms)
            else:
                sl, sc, sn = spots[rng.randrange(len(spots))]
                ms, _ = await timed(client.text_document_hover_async(lsp.HoverParams(
                    text_document=ident, position=lsp.Position(line=sl, character=sc + sn // 2))))
                he.append(ms)
        for line, col, length in rng.sample(spots, min(10, len(spots))):
            ms, _ = await timed(client.text_document_hover_async(lsp.HoverParams(
                text_document=ident, position=lsp.Position(line=line, character=col + length // 2))))
            h.append(ms)
            ms, _ = await timed(client.protocol.send_request_async("gmprep/status", {}))
            b.append(ms)
        if rnd:
            same += s
            edited += e
            hover_edited += he
            hovers += h
            status += b
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {
        "note_lines": len(lines),
        "encounter_blocks": args.blocks,
        "hints_per_request": n_hints,
        "first_inlay_hints_after_open_ms": round(first_ms, 3),
        "inlay_hints_same_version": summary(same),
        "inlay_hints_after_edit": summary(edited),
        "baseline_hover_after_edit": summary(hover_edited),
        "baseline_hover": summary(hovers),
        "baseline_status_roundtrip": summary(status),
    }


def in_process(args) -> dict:
    """The same note and edits without the protocol: what each edit costs the creators' analysis
    (blocks found, changed blocks evaluated, statblocks checked) beside what it costs the rule-mention
    scan that every request after an edit waits for (the existing baseline)."""
    from gmprep.server.creators import Creators
    from gmprep.server.state import ServerState

    lines, creature_lines, _ = make_creators_note(args.lines, args.blocks)
    state = ServerState()
    state.load_book()
    creators = Creators(state)
    creators.resolver()
    rng = random.Random(3)
    prose_lines = [i for i, t in enumerate(lines) if t.startswith("Plain prose")]
    analysis, scan, analysis_cpu, scan_cpu = [], [], [], []
    for version in range(1, 8 * args.rounds + 2):
        k = version % 2
        line = rng.choice(prose_lines) if k == 0 else creature_lines[rng.randrange(len(creature_lines))]
        lines[line] += "s" if k else " x"
        text = "\n".join(lines) + "\n"
        t0, c0 = time.perf_counter(), time.thread_time()
        state.docs.get("bench", version, text, state.names)
        t1, c1 = time.perf_counter(), time.thread_time()
        creators.analyse("bench", version, text)
        t2, c2 = time.perf_counter(), time.thread_time()
        if version > 1:  # the first one fills the caches
            scan.append((t1 - t0) * 1000)
            analysis.append((t2 - t1) * 1000)
            scan_cpu.append((c1 - c0) * 1000)
            analysis_cpu.append((c2 - c1) * 1000)
    # wall time includes waiting for a core when the machine is busy; the thread's CPU time does not
    return {"creators_analysis_per_edit": summary(analysis), "baseline_mention_scan_per_edit": summary(scan),
            "creators_analysis_per_edit_cpu": summary(analysis_cpu),
            "baseline_mention_scan_per_edit_cpu": summary(scan_cpu)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lines", type=int, default=300)
    p.add_argument("--blocks", type=int, default=10)
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--workdir", type=Path, help="folder for the generated note's URI (nothing is written)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    report = asyncio.run(bench(args))
    report["in_process"] = in_process(args)
    report["load_average_1min"] = round(os.getloadavg()[0], 1)  # other work on the machine meanwhile
    print(json.dumps(report) if args.json else json.dumps(report, indent=2))
    worst = max(report["inlay_hints_same_version"]["p95_ms"], report["inlay_hints_after_edit"]["p95_ms"])
    print(f"target: inlay hints p95 < 30 ms -> {'met' if worst < 30 else 'NOT met'} (worst p95 {worst} ms)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
