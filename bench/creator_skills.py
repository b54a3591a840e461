#!/usr/bin/env python3
"""The skill an NPC concept names by meaning (``concept.closest_skill``), on concepts with the skills a GM expects of
them (bench/data/creator-skills.jsonl: 22 tuning, 24 held-out, written before any measurement): for each split, how
often the closest skill is one expected, and how many the margin keeps and how many of those are right.

    python bench/creator_skills.py --store STORE [--verbose]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

DATA = Path(__file__).parent / "data" / "creator-skills.jsonl"


def main() -> int:
    import numpy as np

    from gmprep.core.creators import concept
    from gmprep.core.creators.resolver import CreatureResolver
    from gmprep.kg.embedder import shared_embedder
    from gmprep.kg.store import Store

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--verbose", action="store_true", help="each concept, its three closest skills and the lead")
    args = ap.parse_args()
    store = Store.open(args.store, create=False)
    try:
        resolver = CreatureResolver.from_store(store)
    finally:
        store.close()
    skills = [n for n in resolver.skills if n.name not in ("Lore", "Perception")]
    embedder = shared_embedder()
    vectors = np.asarray(embedder.encode([concept.skill_profile(n) for n in skills]), dtype=np.float32)
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    for split in ("tune", "heldout"):
        part = [r for r in rows if r["split"] == split]
        top_right = kept = kept_right = 0
        for r in part:
            scores = vectors @ np.asarray(embedder.encode_query(r["concept"]), dtype=np.float32)
            order = np.argsort(-scores)
            best = skills[int(order[0])].name
            shipped = concept.closest_skill(r["concept"], skills)
            top_right += best in r["skills"]
            kept += shipped is not None
            kept_right += shipped is not None and shipped[0] in r["skills"]
            if args.verbose:
                top = ", ".join(f"{skills[int(j)].name} {scores[j]:.3f}" for j in order[:3])
                print(f"  {split} {r['concept']!r} expects {'/'.join(r['skills'])}: {top}"
                      f"{' -> ' + shipped[0] if shipped else ''}")
        print(f"{split}: closest skill expected {top_right}/{len(part)}; kept at margin {concept.SKILL_MARGIN}: "
              f"{kept}/{len(part)}, right {kept_right}/{kept}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
