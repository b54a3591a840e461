"""``gmprep corpus build --from DIR``: rebuild the rules corpus from a checkout of the Foundry pf2e packs;
``gmprep corpus skills``: re-derive its skill index entries (``ingest/skills.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from gmprep.commands import print_report


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``corpus`` command group."""
    p = sub.add_parser("corpus", help="build the rules corpus from the Foundry VTT pf2e packs")
    csub = p.add_subparsers(dest="corpus_cmd", metavar="ACTION")
    b = csub.add_parser("build", help="convert packs/pf2e/<pack>/*.json into corpus files and a manifest")
    b.add_argument("--from", dest="source", type=Path, required=True,
                   help="a foundryvtt/pf2e checkout (scripts/fetch_foundry_packs.sh makes one) or its packs folder")
    b.add_argument("--out", type=Path, required=True, help="folder for the *.jsonl.gz files, stats.json, manifest.json")
    b.add_argument("--base", type=Path, help="corpus to merge into (default: the bundled corpus)")
    b.add_argument("--no-base", action="store_true", help="write only what the packs give")
    b.add_argument("--commit", help="source commit to record (default: the checkout's git HEAD)")
    b.add_argument("--lang", type=Path, action="append", default=[],
                   help="extra Foundry language file for @Localize keys (static/lang/*.json are read anyway)")
    b.add_argument("--json", action="store_true", help="print the report as JSON")
    b.set_defaults(func=run_build)
    k = csub.add_parser("skills", help="re-derive the skill index entries (skills.jsonl) of a corpus folder")
    k.add_argument("--corpus", type=Path, help="corpus folder (default: the bundled corpus)")
    k.add_argument("--out", type=Path, help="where to write (default: in place)")
    k.set_defaults(func=run_skills)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_build(args: argparse.Namespace) -> int:
    """Convert, merge, write; print counts."""
    from gmprep.common.errors import GmprepError
    from gmprep.ingest.corpus import corpus_dir
    from gmprep.ingest.foundry.build import build

    if not args.source.is_dir():
        raise GmprepError(f"--from {args.source}: not a folder")
    base = None if args.no_base else (args.base or corpus_dir())
    report = build(args.source, args.out, base, commit=args.commit, lang_files=args.lang)
    if print_report(report, as_json=args.json):
        return 0
    kept = ", ".join(f"{k} {v}" for k, v in sorted(report.kept.items())) or "nothing"
    print(f"read {sum(report.packs.values())} documents from {len(report.packs)} packs at {report.source_commit}; "
          f"kept {kept}; {report.replaced} replaced, {report.added} added, Speed added to {report.speed_added} "
          f"creatures; {report.total} entries written to {report.out}")
    return 0


def run_skills(args: argparse.Namespace) -> int:
    """Derive the skill entries from the corpus's actions, Skill Actions table and feats; write the corpus."""
    from gmprep.common.errors import GmprepError
    from gmprep.ingest.corpus import corpus_dir
    from gmprep.ingest.skills import rederive

    folder = args.corpus or corpus_dir()
    if not folder.is_dir():
        raise GmprepError(f"--corpus {folder}: not a folder")
    count, errors = rederive(folder, args.out)
    for msg in errors:
        print(msg)
    print(f"{count} skill entries written to {args.out or folder}")
    return 0
