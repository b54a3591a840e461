"""Add weapon damage die, hands, range, reload, category, group and page to the bundled corpus from AoN notes.

Source: the kmdavis/xuartlek Obsidian vault, whose ``content/srd/pf2e/compendium/equipment/weapons/<group>/<slug>.md``
notes are imported from the Archives of Nethys (ORC content, see ``ingest/weapon_stats.py``). With a checkout
of the vault (``--vault DIR``) the notes are parsed directly; without one the script reads
``ingest/data/xuartlek-transcribed/weapons.tsv``, the notes' stat bullets and source line copied verbatim
with path and commit. Entries that already have a group or page keep them. Prints what stays unmatched.

Usage: python scripts/add_weapon_stats.py [--vault XUARTLEK_CHECKOUT] [--corpus ingest/data/pf2e]
"""

from __future__ import annotations

import sys
from pathlib import Path

from gmprep.ingest import corpus_step
from gmprep.ingest.creature_speed import REPO
from gmprep.ingest.weapon_stats import add_weapon_stats, read_transcription, read_vault

TRANSCRIPTION = Path(__file__).resolve().parents[1] / "ingest" / "data" / "xuartlek-transcribed" / "weapons.tsv"
WHAT = "weapon "  # this script's manifest entry starts so (scripts/add_creature_speed.py's: "creature ")


def main() -> int:
    args = corpus_step.parser(__doc__, "vault", "a kmdavis/xuartlek checkout").parse_args()
    notes, what = corpus_step.read_checkout_or(args, TRANSCRIPTION, read_vault, read_transcription,
                                               "per note, see ingest/data/xuartlek-transcribed/weapons.tsv")
    records, report = corpus_step.transform(args.corpus, lambda recs: add_weapon_stats(recs, notes))
    # base weapons only: a specific weapon (fields.base_weapon, scripts/add_magic_weapon_stats.py) cites its
    # base's note too, and counting it would make this entry depend on which script ran last
    ours = [r for r in records if r["type"] == "equipment" and not r["fields"].get("base_weapon")
            and any(s.get("repo") == REPO for s in corpus_step.sources_of(r))]
    with_die = sum(bool(r["fields"].get("damage_die")) for r in ours)
    with_group = sum(bool(r["fields"].get("group")) for r in ours)
    with_page = sum(bool(r.get("page")) for r in ours)
    corpus_step.write(args.corpus, records, corpus_step.owned_by(REPO, WHAT), [{
        "repo": REPO, "commit": what,
        "what": f"{WHAT}damage die of {with_die} and group/category of {with_group} base weapons and ammunition "
                f"(fields.damage/damage_die/damage_type/hands/range/reload/category/group, stat text), Player Core "
                f"or Player Core 2 page of {with_page}, from the vault's Archives of Nethys weapon notes "
                "(ORC content), by scripts/add_weapon_stats.py",
    }])
    print(f"{report.notes} notes; stats added to {report.stats_added}, page to {report.page_added}; "
          f"with damage die {with_die}, group {with_group}, page {with_page}", file=sys.stderr)
    corpus_step.report("page of another book", report.other_book, ", ")
    corpus_step.report("notes no entry matched", report.unused, ", ")
    return 0


if __name__ == "__main__":
    raise SystemExit(corpus_step.run(main))
