"""Add the 16 core classes' class features, with their rules text, to the bundled corpus from AoN class notes.

Source: the kmdavis/xuartlek Obsidian vault, whose ``content/srd/pf2e/compendium/character/classes/<class>.md``
notes are imported from the Archives of Nethys (ORC content, see ``ingest/class_features.py``). With a checkout of
the vault (``--vault DIR``) the notes are parsed directly; without one the script reads
``ingest/data/xuartlek-transcribed/classes/``, the notes' *Class Features* parts copied with path and commit.
Prints the class-feature counts per class and what was left out. A rerun changes nothing.

Usage: python scripts/add_class_features.py [--vault XUARTLEK_CHECKOUT] [--corpus ingest/data/pf2e]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from gmprep.ingest.class_features import add_class_features, has_rules_text, read_transcription, read_vault
from gmprep.ingest.corpus import corpus_dir, iter_records
from gmprep.ingest.creature_speed import REPO, replace_sources
from gmprep.ingest.foundry.build import write_corpus

TRANSCRIPTION = Path(__file__).resolve().parents[1] / "ingest" / "data" / "xuartlek-transcribed" / "classes"
WHAT = "class features "  # this script's manifest entry starts so


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
        notes, what = read_transcription(TRANSCRIPTION), "per note, see ingest/data/xuartlek-transcribed/classes/"
    errors: list[str] = []
    records, report = add_class_features(iter_records(args.corpus, errors), notes)
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    features = [r for r in records if r["type"] == "class-feature"]
    total = Counter(r["fields"].get("class") for r in features)
    with_text = Counter(r["fields"].get("class") for r in features if has_rules_text(r))
    from_notes = Counter(r["fields"].get("class") for r in features if any(
        s.get("repo") == REPO for s in (r["source"] if isinstance(r["source"], list) else [r["source"]])))
    path = args.corpus / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"sources": []}
    manifest["sources"] = replace_sources(manifest.get("sources", []), _ours, [{
        "repo": REPO, "commit": what,
        "what": f"{WHAT}of the 16 Player Core and Player Core 2 classes: {sum(from_notes.values())} class-feature "
                "entries with the rules text of the vault's Archives of Nethys class notes (ORC content; new "
                "entries, or placeholders replaced, or the journal's text completed), level from the "
                "class's level table, links to the class; the class entries' page; by scripts/add_class_features.py",
    }])
    write_corpus(records, args.corpus, manifest)
    print(f"{len(notes)} class notes; created {len(report.created)}, text added to {len(report.text_added)}, "
          f"linked to their class {report.linked_to_class}, class pages {len(report.class_pages)}", file=sys.stderr)
    print("class | class-feature entries | with rules text | from the class notes", file=sys.stderr)
    for note in sorted(notes, key=lambda n: n.cls):
        name = note.cls.title()
        print(f"{name} | {total[name]} | {with_text[name]} | {from_notes[name]}", file=sys.stderr)
    print(f"left out, name of another entry ({len(report.name_taken)}): {', '.join(report.name_taken) or 'none'}",
          file=sys.stderr)
    return 0


def _ours(source: dict) -> bool:
    return source.get("repo") == REPO and source.get("what", "").startswith(WHAT)


if __name__ == "__main__":
    raise SystemExit(main())
