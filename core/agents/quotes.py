"""Does the question quote another game's rules text? Nine words in a row that Pathfinder 1e's, D&D 5e SRD's or
Starfinder 1e's rules print and Pathfinder 2e's text never uses (``data/other-game-quotes.npz``, made by
``scripts/derive_other_game_quotes.py``).

A forum post often quotes the rule it asks about ("Clever Feint: As a standard action, you can fake out an enemy
..."). A quoted rule of another game is that game's rule, however many of the held books' words the post shares (the
other-edition reader, ``core/agents/edition.py``, weighs words; a quote is stronger evidence than any word). The table
keeps one shingle in ``SAMPLE`` (by hash) so it stays a few megabytes; a quote of 20 words keeps at least one with
probability 0.97. Plain Python and numpy at run time.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data" / "other-game-quotes.npz"
SHINGLE = 9  # words in a row: on the tuning questions no Pathfinder 2e question shares one with these texts
SAMPLE = 4  # one shingle in four is kept (by hash)
KEY_BITS = 40  # the stored part of a shingle's hash: a chance match is about one in 600,000 lookups
GAMES = ("pf1", "dnd5e", "sf1")
GAME_NAMES = {"pf1": "Pathfinder 1st Edition", "dnd5e": "D&D 5th Edition", "sf1": "Starfinder 1st Edition"}
_WORD = re.compile(r"[a-z0-9]+")


def sampled_shingles(text: str) -> list[tuple[int, int]]:
    """``(key, index of the first word)`` of the kept shingles of ``text``: lower-case words (letters and digits; the
    rest, punctuation included, separates them), nine in a row, each hashed (BLAKE2b, stable across runs) and kept
    when the hash is divisible by ``SAMPLE``."""
    words = _WORD.findall(text.lower())
    out = []
    for i in range(len(words) - SHINGLE + 1):
        h = int.from_bytes(hashlib.blake2b(" ".join(words[i:i + SHINGLE]).encode(), digest_size=8).digest(), "big")
        if h % SAMPLE == 0:
            out.append(((h // SAMPLE) & ((1 << KEY_BITS) - 1), i))
    return out


@dataclass
class Quote:
    game: str  # the game's display name
    words: str  # the first quoted shingle, as the text writes it
    count: int  # kept shingles found, all games


@lru_cache(maxsize=1)
def _tables() -> dict[str, np.ndarray]:
    with np.load(DATA) as z:
        # each game's sorted keys, stored as the first one and the gaps between them (small numbers compress)
        return {k: np.cumsum(np.concatenate([z[f"{k}_start"], z[k].astype(np.uint64)])) for k in GAMES
                if k in z.files}


def available() -> bool:
    return DATA.exists()


def manifest() -> dict:
    with np.load(DATA) as z:
        return json.loads(str(z["manifest"]))


def find(text: str) -> Quote | None:
    """The other game ``text`` quotes most (by kept shingles found), or None when it quotes none."""
    if not available():
        return None
    tables = _tables()
    shingles = sampled_shingles(text)
    if not shingles:
        return None
    keys = np.array([k for k, _ in shingles], dtype=np.uint64)
    found: dict[str, list[int]] = {}
    for game, table in tables.items():
        pos = np.searchsorted(table, keys)
        hit = (pos < len(table)) & (table[np.minimum(pos, len(table) - 1)] == keys)
        if hit.any():
            found[game] = [shingles[i][1] for i in np.flatnonzero(hit)]
    if not found:
        return None
    best = max(found, key=lambda g: (len(found[g]), -GAMES.index(g)))
    words = _WORD.findall(text.lower())
    first = min(found[best])
    quoted = words[first:first + SHINGLE]
    # the words as the question writes them ("you can't cast a spell of this type")
    m = re.search(r"[^a-z0-9]+".join(map(re.escape, quoted)), text, re.IGNORECASE)
    return Quote(game=GAME_NAMES[best], words=m.group(0) if m else " ".join(quoted),
                 count=sum(len(v) for v in found.values()))
