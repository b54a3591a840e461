#!/usr/bin/env python3
"""The creature builder on NPC concepts that name no creature kind, for judging by hand (docs/creators.md, "A person of
no named kind borrows what people carry"): each concept at levels 1 and 5, the role ``infer_role`` gives it and the
abilities ``suggest_abilities`` lends, with their lenders.

    python bench/creators_people.py --store STORE [--levels 1 5] [CONCEPT ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

CONCEPTS = ["bandit boss", "bandit lackeys", "pirate boss", "pirate lieutenant", "cultist", "cultist boss", "city guard",
            "guard captain", "merchant", "noble", "street urchin", "court wizard", "temple priest", "assassin",
            "smuggler", "mercenary captain", "thieves guild boss", "sailor", "gladiator", "hunter"]


def main() -> int:
    from gmprep.core.creators.creature import infer_role, suggest_abilities
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
            role, tradition, built_as, _ = infer_role(CreatureRequest(concept=concept, level=level), resolver)
            req = CreatureRequest(concept=concept, level=level, role=role, tradition=tradition)
            abilities = suggest_abilities(req, resolver)
            print(f"{concept} L{level} [{role}; {built_as}]:", "; ".join(f"{a.name} [{a.source_name}]" for a in abilities))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
