"""Add the 16 core classes' class features, with their rules text, to the bundled corpus from AoN class notes.

Source: the kmdavis/xuartlek Obsidian vault, whose ``content/srd/pf2e/compendium/character/classes/<class>.md``
notes are imported from the Archives of Nethys (ORC content, see ``ingest/class_features.py``). With a checkout of
the vault (``--vault DIR``) the notes are parsed directly; without one the script reads
``ingest/data/xuartlek-transcribed/classes/``, the notes' *Class Features* parts copied with path and commit.
Prints the class-feature counts per class and what was left out. A rerun changes nothing.

Usage: python scripts/add_class_features.py [--vault XUARTLEK_CHECKOUT] [--corpus ingest/data/pf2e]
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from gmprep.ingest import corpus_step
from gmprep.ingest.class_features import add_class_features, has_rules_text, read_transcription, read_vault
from gmprep.ingest.creature_speed import REPO

TRANSCRIPTION = Path(__file__).resolve().parents[1] / "ingest" / "data" / "xuartlek-transcribed" / "classes"
WHAT = "class features "  # this script's manifest entry starts so


def main() -> int:
    args = corpus_step.parser(__doc__, "vault", "a kmdavis/xuartlek checkout").parse_args()
    notes, what = corpus_step.read_checkout_or(args, TRANSCRIPTION, read_vault, read_transcription,
                                               "per note, see ingest/data/xuartlek-transcribed/classes/")
    records, report = corpus_step.transform(args.corpus, lambda recs: add_class_features(recs, notes))
    features = [r for r in records if r["type"] == "class-feature"]
    total = Counter(r["fields"].get("class") for r in features)
    with_text = Counter(r["fields"].get("class") for r in features if has_rules_text(r))
    from_notes = Counter(r["fields"].get("class") for r in features
                         if any(s.get("repo") == REPO for s in corpus_step.sources_of(r)))
    corpus_step.write(args.corpus, records, corpus_step.owned_by(REPO, WHAT), [{
        "repo": REPO, "commit": what,
        "what": f"{WHAT}of the 16 Player Core and Player Core 2 classes: {sum(from_notes.values())} class-feature "
                "entries with the rules text of the vault's Archives of Nethys class notes (ORC content; new "
                "entries, or placeholders replaced, or the journal's text completed), level from the "
                "class's level table, links to the class; the class entries' page; by scripts/add_class_features.py",
    }])
    print(f"{len(notes)} class notes; created {len(report.created)}, text added to {len(report.text_added)}, "
          f"linked to their class {report.linked_to_class}, class pages {len(report.class_pages)}", file=sys.stderr)
    print("class | class-feature entries | with rules text | from the class notes", file=sys.stderr)
    for note in sorted(notes, key=lambda n: n.cls):
        name = note.cls.title()
        print(f"{name} | {total[name]} | {with_text[name]} | {from_notes[name]}", file=sys.stderr)
    corpus_step.report("left out, name of another entry", report.name_taken, ", ")
    return 0


if __name__ == "__main__":
    raise SystemExit(corpus_step.run(main))
