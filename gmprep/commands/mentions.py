"""``gmprep mentions FILE... [--json]``: the rule mentions the language server would hover.

Runs the same scan as the server's hovers (``kg.note_scan.NoteScanner``, with the workspace's
``hover`` settings from ``gmprep.toml`` in the current folder), so anyone can audit a folder of
notes: one JSON line per file, ``{"file", "mentions": [{"file", "line", "character",
"end_character", "text", "id", "confidence"}]}`` with 0-based LSP lines and UTF-16 characters.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from gmprep.commands import settings_from_args
from gmprep.common.errors import GmprepError


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``mentions``."""
    p = sub.add_parser("mentions", help="list the rule mentions the language server would hover in notes")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="markdown notes (folders: their *.md)")
    p.add_argument("--json", action="store_true", help="one JSON object per file")
    p.add_argument("--all", action="store_true", help="also list candidates below the hover threshold")
    p.set_defaults(func=run)


def _files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out += sorted(p.rglob("*.md"))
        elif p.is_file():
            out.append(p)
        else:
            raise GmprepError(f"no such file: {p}")
    return out


def file_mentions(scanner, path: Path, text: str) -> list[dict]:
    """The mentions of one note as LSP-positioned records."""
    from gmprep.kg.note_scan import lsp_position
    from gmprep.kg.prose import line_starts

    starts = line_starts(text)
    out = []
    result = scanner.scan(text)
    for m in result.mentions:
        line, char = lsp_position(text, starts, m.start)
        end_line, end_char = lsp_position(text, starts, m.end)
        rec = {
            "file": str(path), "line": line, "character": char, "end_character": end_char, "text": m.text,
            "id": m.node_id, "confidence": m.confidence,
        }
        if end_line != line:
            rec["end_line"] = end_line
        if m.alternatives:
            rec["alternatives"] = m.alternatives
        out.append(rec)
    return out


def run(args: argparse.Namespace) -> int:
    """Entry point of ``gmprep mentions``."""
    from gmprep.kg.note_scan import NoteScanner, load_scorer
    from gmprep.server.state import RulesBook

    # the hover settings of the workspace the command runs in (its gmprep.toml), as the server reads them
    hover = settings_from_args(args).hover  # a bad value in gmprep.toml is one line, not a traceback
    if args.all:
        hover = hover.model_copy(update={"strictness": "loose"})
    files = _files(args.files)
    names = RulesBook.from_corpus(hover.other_books).names  # the server's own name index
    scanner = NoteScanner(names, hover, load_scorer())
    for alias in scanner.unknown_aliases:
        print(f"gmprep.toml: hover.aliases: the target of {alias!r} names no entry; left out", file=sys.stderr)
    if args.all:
        scanner.threshold = 0.0
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise GmprepError(f"cannot read {path}: {exc}") from None
        found = file_mentions(scanner, path, text)
        if args.json:
            print(json.dumps({"file": str(path), "mentions": found}, ensure_ascii=False))
        else:
            for r in found:
                # one line per mention: a name written across lines (and a quote's markers) reads as one
                text = re.sub(r"[ \t]*\r?\n[\s>]*", " ", r["text"])
                print(f"{r['file']}:{r['line'] + 1}:{r['character'] + 1}: {text} -> {r['id']} ({r['confidence']:.2f})")
    return 0
