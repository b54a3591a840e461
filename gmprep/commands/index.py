"""``gmprep index build|status``: build or inspect the knowledge-graph store."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gmprep.commands import print_report, settings_from_args
from gmprep.common.errors import GmprepError, StoreError


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``index`` command group."""
    p = sub.add_parser("index", help="build or inspect the index (graph, BM25, vectors)")
    isub = p.add_subparsers(dest="index_cmd", metavar="ACTION")
    b = isub.add_parser("build", help="ingest the bundled corpus (and notes) and embed what is new")
    b.add_argument("--notes", type=Path, help="folder of markdown notes/homebrew to index too")
    b.add_argument("--no-embed", action="store_true", help="graph and BM25 only, no vectors")
    b.add_argument("--json", action="store_true", help="print the build report as JSON")
    b.set_defaults(func=run_build)
    s = isub.add_parser("status", help="what the store holds and whether it is healthy")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=run_status)


def run_build(args: argparse.Namespace) -> int:
    """Build or update the store; problems found on the way are printed, then repaired."""
    from gmprep.ingest.pipeline import build_index

    settings = settings_from_args(args)
    if args.notes is not None and not args.notes.is_dir():
        raise GmprepError(f"notes folder {args.notes} does not exist")
    report = build_index(settings, notes_dir=args.notes, progress=not args.json, embed=not args.no_embed)
    if print_report(report, as_json=args.json):
        return 0
    print(
        f"index ready in {report.store_dir}: {report.entries} entries, {report.nodes_embedded} nodes embedded, "
        f"{len(report.notes_indexed)} notes indexed, {len(report.notes_removed)} removed ({report.seconds}s)"
    )
    return 0


def run_status(args: argparse.Namespace) -> int:
    """Print what the store holds and its health; exit 1 when it has any problem."""
    from gmprep.ingest.health import check_store

    check = check_store(settings_from_args(args).store_dir)
    if not check.exists:
        raise StoreError(check.problems[0])
    info = check.model_dump()
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        for key in ("store_dir", "entries", "nodes", "nodes_embedded", "build_state", "read_only"):
            print(f"{key}: {info[key]}")
        for problem in check.problems:
            print(f"problem: {problem}")
        if not check.problems:
            print("healthy")
    return 0 if check.usable else 1
