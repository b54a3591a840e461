"""Spells for a creature that casts like a PC: its top three ranks and its cantrips filled as GM Core's Building Creatures
says, from the spells the rules gmprep holds.

GM Core, Spells: "lean hard into the creature's theme ... Consider selecting about three-quarters of the spells based on
relevance to the theme and the remainder for other things. However, make sure the spells aren't all the same"; "A
damaging spell 2 ranks below the highest rank ... is still potentially useful, but beyond that, don't bother. Spells that
have the incapacitation trait should be in the highest spell slot". Prepared and Spontaneous Spells: "Choose the
magical tradition ... sticking close to it [its spell list] will make your creature's connection to that tradition
more clear"; "You can often fill just the top three ranks of spells, pick cantrips".

The corpus's spell entries carry no tradition, so a tradition's list is read off Monster Core's stat blocks: the
spells its creatures cast under "**<Tradition> ... Spells**" (about 120-170 spells and 17-23 cantrips a tradition),
each with how many casters cast it, the measure of "the remainder for other things" (the tradition's staples: Heal,
Detect Magic). The theme is ``concept.closeness`` of the concept to each spell's name and traits, as for creatures.
"""

from __future__ import annotations

import re
from collections import Counter

from gmprep.core.creators import concept
from gmprep.core.creators.models import SpellRank

# the rules entry whose guidance this follows, cited on the statblock
SPELLS_ID = "pf2e:rule:gm-core--spells"
# "about three-quarters of the spells based on relevance to the theme"
THEME_SHARE = 0.75

_BLOCK = re.compile(r"\*\*(Arcane|Divine|Occult|Primal) [A-Z][a-z]+ Spells\*\*[^\n]*\n((?:\*\*[^\n]*\n?)*)")
_RANK = re.compile(r"^\*\*([^*]+)\*\*\s*(?:\([^)]*\)\s*)?(.*)$")


def tradition_lists(creatures: list) -> dict[str, Counter[str]]:
    """Tradition -> spell name (lower-case) -> how many Monster Core creatures cast it under that tradition's heading
    ("**Occult Spontaneous Spells** DC 17 ... **1st** (2 slots) Bless, Courageous Anthem, ..."); a parenthesis after a
    name (at will, a heightened rank, "Arthropods Only") is not part of it."""
    out: dict[str, Counter[str]] = {}
    for node in creatures:
        for m in _BLOCK.finditer(node.text or ""):
            said: set[str] = set()
            for line in m.group(2).splitlines():
                r = _RANK.match(line.strip())
                if r is None:
                    continue
                for part in re.split(r",(?![^()]*\))", r.group(2)):
                    name = re.sub(r"\s*\([^)]*\)", "", part).strip().lower()
                    if name:
                        said.add(name)
            out.setdefault(m.group(1).lower(), Counter()).update(said)
    return out


def _incapacitation(node) -> bool:
    return "incapacitation" in {t.lower() for t in node.traits}


def _pick(pool: list, n: int, theme: dict[str, float], common: Counter[str], used: set[str]) -> list:
    """``n`` of ``pool`` not ``used``: the closest to the theme for ``THEME_SHARE`` of them (rounded, at least one),
    then the tradition's most cast for the rest."""
    left = [s for s in pool if s.node_id not in used]
    by_theme = sorted(left, key=lambda s: (-theme.get(s.node_id, 0.0), -common[s.name.lower()], s.name))
    themed = by_theme[:max(1, round(n * THEME_SHARE))] if n > 0 else []
    rest = sorted((s for s in left if s not in themed), key=lambda s: (-common[s.name.lower()], s.name))
    chosen = (themed + rest)[:n]
    used.update(s.node_id for s in chosen)
    return chosen


def choose_spells(theme_text: str, tradition: str, slots: list[tuple[int, int]], cantrips: int, spells: list,
                  lists: dict[str, Counter[str]]) -> list[SpellRank]:
    """The spells of the top three ranks of ``slots`` ((rank, slots), highest first), one a slot, and ``cantrips``
    cantrips, from ``spells`` (the corpus's spell entries) on the ``tradition``'s list (``tradition_lists``). A rank takes
    spells of its own rank first, then of the two ranks below (heightened; no further: GM Core's damaging spell "2 ranks
    below the highest rank ... is still potentially useful, but beyond that, don't bother"); an incapacitation spell only
    the highest rank; no spell twice."""
    common = lists.get(tradition, Counter())
    on_list = [s for s in spells if s.name.lower() in common and s.level is not None]
    theme = dict(zip((s.node_id for s in on_list), concept.closeness(theme_text, on_list), strict=True))
    used: set[str] = set()
    out: list[SpellRank] = []
    top = slots[0][0] if slots else 0
    for rank, n in slots[:3]:
        kind = [s for s in on_list if str(s.fields.get("spell_kind", "spell")) == "spell"
                and (rank == top or not _incapacitation(s))]
        own = [s for s in kind if s.level == rank]
        below = [s for s in kind if rank - 2 <= (s.level or 0) < rank]
        chosen = _pick(own, n, theme, common, used)
        chosen += _pick(below, n - len(chosen), theme, common, used)
        if chosen:
            out.append(SpellRank(rank=rank, names=[s.name for s in chosen], ids=[s.node_id for s in chosen]))
    if cantrips:
        pool = [s for s in on_list if str(s.fields.get("spell_kind", "")) == "cantrip"]
        chosen = _pick(pool, cantrips, theme, common, used)
        if chosen:
            out.append(SpellRank(rank=0, names=[s.name for s in chosen], ids=[s.node_id for s in chosen]))
    return out
