"""Add weapon damage die, hands, range, reload, category, group and page to the bundled corpus from AoN notes.

Source: the kmdavis/xuartlek Obsidian vault, whose ``content/srd/pf2e/compendium/equipment/weapons/<group>/<slug>.md``
notes are imported from the Archives of Nethys (ORC content, see ``ingest/weapon_stats.py``). With a checkout
of the vault (``--vault DIR``) the notes are parsed directly; without one the script reads
``ingest/data/xuartlek-transcribed/weapons.tsv``, the notes' stat bullets and source line copied verbatim
with path and commit. Entries that already have a group or page keep them. Prints what stays unmatched.

Usage: python scripts/add_weapon_stats.py [--vault XUARTLEK_CHECKOUT] [--corpus ingest/data/pf2e]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from gmprep.ingest.corpus import corpus_dir, iter_records
from gmprep.ingest.creature_speed import REPO, replace_sources
from gmprep.ingest.foundry.build import write_corpus
from gmprep.ingest.weapon_stats import add_weapon_stats, read_transcription, read_vault

TRANSCRIPTION = Path(__file__).resolve().parents[1] / "ingest" / "data" / "xuartlek-transcribed" / "weapons.tsv"
WHAT = "weapon "  # this script's manifest entry starts so (scripts/add_creature_speed.py's: "creature ")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", type=Path, help="a kmdavis/xuartlek checkout (default: the transcription)")
    ap.add_argument("--corpus", type=Path, default=corpus_dir())
    args = ap.parse_args()
    if args.vault:
        commit = subprocess.run(["git", "-C", str(args.vault), "rev-parse", "HEAD"], capture_output=True,
                                text=True).stdout.strip() or "unknown"
        notes, what = read_vault(args.vault, commit), f"checkout at {commit}"
    else:
        notes, what = read_transcription(TRANSCRIPTION), "per note, see ingest/data/xuartlek-transcribed/weapons.tsv"
    errors: list[str] = []
    records, report = add_weapon_stats(iter_records(args.corpus, errors), notes)
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    # base weapons only: a specific weapon (fields.base_weapon, scripts/add_magic_weapon_stats.py) cites its
    # base's note too, and counting it would make this entry depend on which script ran last
    ours = [r for r in records if r["type"] == "equipment" and not r["fields"].get("base_weapon")
            and any(s.get("repo") == REPO for s in _sources(r))]
    with_die = sum(bool(r["fields"].get("damage_die")) for r in ours)
    with_group = sum(bool(r["fields"].get("group")) for r in ours)
    with_page = sum(bool(r.get("page")) for r in ours)
    path = args.corpus / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"sources": []}
    manifest["sources"] = replace_sources(manifest.get("sources", []), _ours, [{
        "repo": REPO, "commit": what,
        "what": f"{WHAT}damage die of {with_die} and group/category of {with_group} base weapons and ammunition "
                f"(fields.damage/damage_die/damage_type/hands/range/reload/category/group, stat text), Player Core "
                f"or Player Core 2 page of {with_page}, from the vault's Archives of Nethys weapon notes "
                "(ORC content), by scripts/add_weapon_stats.py",
    }])
    write_corpus(records, args.corpus, manifest)
    print(f"{report.notes} notes; stats added to {report.stats_added}, page to {report.page_added}; "
          f"with damage die {with_die}, group {with_group}, page {with_page}", file=sys.stderr)
    print(f"page of another book ({len(report.other_book)}): {', '.join(report.other_book) or 'none'}",
          file=sys.stderr)
    print(f"notes no entry matched ({len(report.unused)}): {', '.join(report.unused) or 'none'}", file=sys.stderr)
    return 0


def _ours(source: dict) -> bool:
    return source.get("repo") == REPO and source.get("what", "").startswith(WHAT)


def _sources(rec: dict) -> list[dict]:
    src = rec.get("source")
    return src if isinstance(src, list) else [src] if isinstance(src, dict) else []


if __name__ == "__main__":
    raise SystemExit(main())
