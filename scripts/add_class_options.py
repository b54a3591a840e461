"""Add the options of class features (arcane theses and schools, druidic orders, hunter's edges, research fields)
and the familiar and master abilities to the bundled corpus, from AoN option notes.

Source: the kmdavis/xuartlek Obsidian vault, whose ``content/srd/pf2e/compendium/character/<list>.md`` notes are
imported from the Archives of Nethys (ORC content, see ``ingest/class_options.py``). With a checkout of the vault
(``--vault DIR``) the notes are parsed directly; without one the script reads
``ingest/data/xuartlek-transcribed/options/``, the notes' sections of the four books copied with path and commit.
Run it after ``scripts/add_class_features.py`` (the options link to the features that offer them). A rerun
changes nothing.

Usage: python scripts/add_class_options.py [--vault XUARTLEK_CHECKOUT] [--corpus ingest/data/pf2e]
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from gmprep.ingest import corpus_step
from gmprep.ingest.class_options import add_class_options, read_transcription, read_vault
from gmprep.ingest.creature_speed import REPO

TRANSCRIPTION = Path(__file__).resolve().parents[1] / "ingest" / "data" / "xuartlek-transcribed" / "options"
WHAT = "options of class features "  # this script's manifest entry starts so


def main() -> int:
    args = corpus_step.parser(__doc__, "vault", "a kmdavis/xuartlek checkout").parse_args()
    notes, what = corpus_step.read_checkout_or(args, TRANSCRIPTION, read_vault, read_transcription,
                                               "per note, see ingest/data/xuartlek-transcribed/options/")
    records, report = corpus_step.transform(args.corpus, lambda recs: add_class_options(recs, notes))
    kinds = Counter(c.split(":", 1)[0] for c in report.created)
    counts = ", ".join(f"{n} {k.replace('-', ' ')}" for k, n in sorted(kinds.items()))
    corpus_step.write(args.corpus, records, corpus_step.owned_by(REPO, WHAT), [{
        "repo": REPO, "commit": what,
        "what": f"{WHAT}and familiar abilities of Player Core and Player Core 2: {len(report.created)} entries "
                f"({counts}) with the rules text and page of the vault's Archives of Nethys option notes (ORC "
                "content): class options as class-feature entries linked to their class and to the feature that "
                "offers them, familiar and master abilities as rule entries linked to Player Core's Familiar "
                "Abilities or Master Abilities; by scripts/add_class_options.py",
    }])
    print(f"{len(notes)} option notes; created {len(report.created)} ({counts})", file=sys.stderr)
    corpus_step.report("not hover names (name of another entry)", report.not_hover_names, ", ")
    corpus_step.report("skipped", report.skipped)
    return 0


if __name__ == "__main__":
    raise SystemExit(corpus_step.run(main))
