#!/usr/bin/env python3
"""Derive the other games' quote table: sampled nine-word shingles of Pathfinder 1e's, D&D 5e SRD's and Starfinder
1e's rules text that Pathfinder 2e's text (the bundled store's entries and the pre-Remaster Pf2eTools data) never
uses, written to ``core/agents/data/other-game-quotes.npz`` (``core/agents/quotes.py`` reads it).

A forum post that quotes its rule ("Clever Feint: As a standard action, you can fake out an enemy ...") is asking
that game's rule, however many of the held books' words it shares. Nine words in a row are never shared by chance:
on the tuning questions no Pathfinder 2e question has one with these texts. Shingles are kept when their hash is
divisible by ``SAMPLE`` (the table stays a few megabytes); a quote of 20 words (12 shingles) keeps one with
probability 1 - (3/4)^12 = 0.97. The sources are the same as ``scripts/fit_other_edition_reader.py``'s.

    M=/work/.mirror; .venv/bin/python scripts/derive_other_game_quotes.py \
        --pf1 $M/jasontankapps+pathfinder-data-1-e/repo --dnd5e $M/5e-bits+5e-database/repo \
        --sf1 $M/Obsidian-TTRPG-Community+Starfinder-SRD-Markdown/repo --pf2tools $M/Git-GoR+Pf2eTools/repo \
        --store STORE
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from derive_other_systems_terms import git_head  # noqa: E402
from fit_other_edition_reader import dnd5e_docs, pf1_docs, pf2tools_docs, sf1_docs, store_docs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from core.agents.quotes import GAMES, KEY_BITS, SAMPLE, SHINGLE, sampled_shingles  # noqa: E402  (the runtime's own reading)

OUT = ROOT / "core" / "agents" / "data" / "other-game-quotes.npz"
REPOS = {"pf1": "jasontankapps/pathfinder-data-1-e", "dnd5e": "5e-bits/5e-database",
         "sf1": "Obsidian-TTRPG-Community/Starfinder-SRD-Markdown"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pf1", required=True)
    p.add_argument("--dnd5e", required=True)
    p.add_argument("--sf1", required=True)
    p.add_argument("--pf2tools", required=True)
    p.add_argument("--store", required=True)
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)

    held: set[int] = set()
    for doc in store_docs(args.store) + pf2tools_docs(args.pf2tools):
        held |= {h for h, _ in sampled_shingles(doc)}
    tables: dict[str, np.ndarray] = {}
    sources = {"pf1": (pf1_docs, args.pf1), "dnd5e": (dnd5e_docs, args.dnd5e), "sf1": (sf1_docs, args.sf1)}
    for key in GAMES:
        read, repo = sources[key]
        kept: set[int] = set()
        for doc in read(repo):
            kept |= {h for h, _ in sampled_shingles(doc)}
        # stored as the first value and the gaps of the sorted set: small numbers, which compress
        values = np.array(sorted(kept - held), dtype=np.uint64)
        gaps = np.diff(values)
        assert gaps.size == 0 or int(gaps.max()) < 2**32, "a gap too wide for uint32"
        tables[key] = gaps.astype(np.uint32)
        tables[f"{key}_start"] = values[:1]
        print(f"{key}: {len(values)} sampled shingles")
    licences = {"pf1": "OGL 1.0a", "dnd5e": "CC-BY-4.0", "sf1": "OGL 1.0a"}
    manifest = {"shingle": SHINGLE, "sample": SAMPLE, "key_bits": KEY_BITS, "made_by": "scripts/derive_other_game_quotes.py",
                "about": "hashes of sampled word shingles only: no text of these sources is kept",
                "sources": {k: {"repository": REPOS[k], "commit": git_head(sources[k][1]), "licence": licences[k]}
                            for k in GAMES},
                "pf2e_side": {"store": "the bundled store's entries (ORC / OGL, the held books)",
                              "pf2tools": {"repository": "Git-GoR/Pf2eTools", "commit": git_head(args.pf2tools),
                                           "licence": "OGL 1.0a"}}}
    np.savez_compressed(args.out, manifest=np.array(json.dumps(manifest)), **tables)
    print(f"-> {args.out} ({args.out.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
