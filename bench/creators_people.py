#!/usr/bin/env python3
"""The creature builder on NPC concepts that name no creature kind, for judging by hand (docs/creators.md, "A person of
no named kind borrows what people carry"): each concept at levels 1 and 5, the role ``build_creature`` gives it (and the
class road map it follows) and its abilities, each with the entry it is cited to.

    python bench/creators_people.py --store STORE [--levels 1 5] [CONCEPT ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

CONCEPTS = ["bandit boss", "bandit lackeys", "pirate boss", "pirate lieutenant", "cultist", "cultist boss", "city guard",
            "guard captain", "merchant", "noble", "street urchin", "court wizard", "temple priest", "assassin",
            "smuggler", "mercenary captain", "thieves guild boss", "sailor", "gladiator", "hunter"]


def main() -> int:
    from gmprep.core.creators.creature import build_creature
    from gmprep.core.creators.models import CreatureRequest
    from gmprep.core.creators.resolver import CreatureResolver
    from gmprep.kg.store import Store

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--levels", type=int, nargs="+", default=[1, 5])
    ap.add_argument("concepts", nargs="*", default=CONCEPTS)
    args = ap.parse_args()
    store = Store.open(args.store, create=False)
    try:
        resolver = CreatureResolver.from_store(store)
    finally:
        store.close()
    for concept in args.concepts:
        for level in args.levels:
            sb = build_creature(CreatureRequest(concept=concept, level=level), resolver)
            built_as = sb.role_from + (f"; road map {sb.roadmap}" if sb.roadmap else "")
            print(f"{concept} L{level} [{sb.role}; {built_as}]:",
                  "; ".join(f"{a.name} [{a.source_name}]" for a in sb.abilities))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
