"""Add creature Speed and Monster Core page numbers to the bundled corpus from AoN statblock notes.

Source: the kmdavis/xuartlek Obsidian vault, whose ``content/srd/pf2e/bestiary/monster-core/<type>/<Name>.md``
notes are imported from the Archives of Nethys (ORC content, see ``ingest/creature_speed.py``). With a
checkout of the vault (``--vault DIR``) the notes are parsed directly; without one the script reads
``ingest/data/xuartlek-transcribed/monster-core.tsv``, the notes' ``speed:`` and ``sourcebook:`` lines copied
verbatim with path and commit (the vault could not be cloned where this corpus was built). Creatures that
already have a Speed or page keep it. Creatures the vault has no note for (Monster Core variants such as the
seven sinspawn, Player Core's phantasmal minion) then take the Speed of their foundryvtt/pf2e pack actor,
transcribed (``system.attributes.speed``, with file and commit) in
``ingest/data/foundry-transcribed/creature-speed.tsv``. Prints what stays unmatched.

Usage: python scripts/add_creature_speed.py [--vault XUARTLEK_CHECKOUT] [--corpus ingest/data/pf2e]
"""

from __future__ import annotations

import sys
from pathlib import Path

from gmprep.ingest import corpus_step
from gmprep.ingest.creature_speed import (
    FOUNDRY_REPO,
    REPO,
    add_pack_speeds,
    add_speed_and_pages,
    read_pack_speeds,
    read_transcription,
    read_vault,
)

DATA = Path(__file__).resolve().parents[1] / "ingest" / "data"
TRANSCRIPTION = DATA / "xuartlek-transcribed" / "monster-core.tsv"
PACK_SPEEDS = DATA / "foundry-transcribed" / "creature-speed.tsv"
PACK_WHAT = "creature Speed of "  # this script's foundryvtt/pf2e manifest entry starts so


def main() -> int:
    args = corpus_step.parser(__doc__, "vault", "a kmdavis/xuartlek checkout").parse_args()
    notes, what = corpus_step.read_checkout_or(args, TRANSCRIPTION, read_vault, read_transcription,
                                               "per note, see ingest/data/xuartlek-transcribed")
    records, report = corpus_step.transform(args.corpus, lambda recs: add_speed_and_pages(recs, notes))
    pack_speeds = read_pack_speeds(PACK_SPEEDS)
    records, from_packs = add_pack_speeds(records, pack_speeds)
    creatures = [r for r in records if r["type"] == "creature"]
    with_speed = sum(bool((r.get("fields") or {}).get("speed")) for r in creatures)
    with_page = sum(bool(r.get("page")) for r in creatures)
    from_notes = sum(any(s.get("repo") == REPO for s in corpus_step.sources_of(r)) for r in creatures)
    from_pack = sum(any(s.get("repo") == FOUNDRY_REPO and s.get("path", "").endswith(f"/{p.slug}.json")
                        for p in pack_speeds for s in corpus_step.sources_of(r)) for r in creatures)
    ours = [{
        "repo": REPO, "commit": what,
        "what": f"creature Speed (fields.speed/speeds, **Speed** line) of {from_notes} and Monster Core page of "
                f"{with_page} creatures, from the vault's Archives of Nethys statblock notes (ORC content), "
                "by scripts/add_creature_speed.py",
    }, {
        "repo": FOUNDRY_REPO, "commit": "per file, see ingest/data/foundry-transcribed/creature-speed.tsv",
        "what": f"{PACK_WHAT}{from_pack} creatures the vault has no note for, from their pathfinder-monster-core "
                "and pathfinder-bestiary pack actors' system.attributes.speed (publication.license ORC), "
                "by scripts/add_creature_speed.py",
    }]
    corpus_step.write(args.corpus, records, _ours, ours)
    print(f"{report.notes} notes; Speed added to {report.speed_added}, page to {report.page_added}; creatures with "
          f"Speed {with_speed}/{len(creatures)}, with page {with_page}/{len(creatures)}", file=sys.stderr)
    corpus_step.report("no note for", report.unmatched, ", ")
    corpus_step.report("notes no creature matched", report.unused, ", ")
    corpus_step.report("Speed from Foundry pack actors", from_packs, ", ")
    corpus_step.report("still without Speed", [r["name"] for r in creatures if not (r.get("fields") or {}).get("speed")], ", ")
    return 0


def _ours(source: dict) -> bool:
    """This script's manifest entries (scripts/add_weapon_stats.py's xuartlek entry starts with "weapon ")."""
    what = source.get("what", "")
    return (source.get("repo") == REPO and what.startswith("creature ")) or (
        source.get("repo") == FOUNDRY_REPO and what.startswith(PACK_WHAT))


if __name__ == "__main__":
    raise SystemExit(corpus_step.run(main))
