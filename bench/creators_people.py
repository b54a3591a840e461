#!/usr/bin/env python3
"""The creature builder on NPC concepts that name no creature kind, for judging by hand (docs/creators.md, "A person of
no named kind borrows what people carry"): each concept at levels 1 and 5, the role ``build_creature`` gives it (and the
class road map it follows) and its abilities, each with the entry it is cited to.

    python bench/creators_people.py --store STORE [--levels 1 5] [--time] [--more] [CONCEPT ...]

``--time``: each build's wall time too, and at the end p50/p95 of the casters' builds (their spells are chosen: the
first one embeds the spell profiles, about 420 short texts) beside the others' (the baseline of the same run), and of
every Monster Core creature scaled to level 10 and made elite, and a hazard at every level.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

CONCEPTS = ["bandit boss", "bandit lackeys", "pirate boss", "pirate lieutenant", "cultist", "cultist boss", "city guard",
            "guard captain", "merchant", "noble", "street urchin", "court wizard", "temple priest", "assassin",
            "smuggler", "mercenary captain", "thieves guild boss", "sailor", "gladiator", "hunter"]
# concepts of named kinds, roles and classes (stop 53), with --more
MORE = ["goblin shaman", "orc warchief", "kobold trapmaker", "elf ranger", "halfling thief", "dragon cultist",
        "lich", "hag", "young red dragon", "werewolf", "bugbear brute", "gnoll hunter", "dwarf blacksmith",
        "corrupt tax collector", "druid of the grove", "vampire noble", "ghost", "ogre", "witch", "bard",
        "goblin boss", "kobold sniper", "human fighter", "troll", "giant spider", "skeleton archer", "zombie guard"]


def main() -> int:
    from gmprep.core.creators.creature import build_creature
    from gmprep.core.creators.models import CreatureRequest
    from gmprep.core.creators.resolver import CreatureResolver
    from gmprep.kg.store import Store

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--levels", type=int, nargs="+", default=[1, 5])
    ap.add_argument("--time", action="store_true", help="print each build's wall time and p50/p95 by kind")
    ap.add_argument("--more", action="store_true", help="the defaults and MORE: named kinds, role words, classes")
    ap.add_argument("concepts", nargs="*", default=CONCEPTS)
    args = ap.parse_args()
    if args.more:
        args.concepts = [*args.concepts, *MORE]
    store = Store.open(args.store, create=False)
    try:
        resolver = CreatureResolver.from_store(store)
    finally:
        store.close()
    times: dict[str, list[float]] = {"casters": [], "others": []}
    for concept in args.concepts:
        for level in args.levels:
            t0 = time.perf_counter()
            sb = build_creature(CreatureRequest(concept=concept, level=level), resolver)
            ms = (time.perf_counter() - t0) * 1000
            times["casters" if sb.spells else "others"].append(ms)
            built_as = sb.role_from + (f"; road map {sb.roadmap}" if sb.roadmap else "")
            print(f"{concept} L{level} [{sb.role}; {built_as}]:",
                  "; ".join(f"{a.name} [{a.source_name}]" for a in sb.abilities) + (f" ({ms:.0f} ms)" if args.time else ""))
    if args.time:
        # beside the builds (the baseline of the same run): every Monster Core creature scaled to level 10 and made
        # elite, and a hazard at every level; these read tables and rewrite text, no model
        from gmprep.core.creators.adjust import adjust_creature
        from gmprep.core.creators.hazards import build_hazard, hazard_request
        from gmprep.core.creators.scale import scale_creature

        whole = [n for n in resolver.creatures() if n.level is not None and n.text and n.level <= 24]
        for kind, fn in (("scaled", lambda n: scale_creature(n, 10)), ("elite", lambda n: adjust_creature(n, "elite"))):
            times[kind] = []
            for node in whole:
                t0 = time.perf_counter()
                fn(node)
                times[kind].append((time.perf_counter() - t0) * 1000)
        times["hazards"] = []
        for level in range(-1, 25):
            asked = hazard_request(level, "complex trap")
            assert asked is not None
            t0 = time.perf_counter()
            build_hazard(asked, resolver.hazard_rules)
            times["hazards"].append((time.perf_counter() - t0) * 1000)
        for kind, ms_list in times.items():
            if ms_list:
                q = sorted(ms_list)
                print(f"{kind}: n {len(q)}, first {ms_list[0]:.1f} ms, p50 {statistics.median(q):.1f} ms, "
                      f"p95 {q[min(len(q) - 1, int(0.95 * len(q)))]:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
