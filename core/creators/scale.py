"""A Monster Core creature moved to another level, keeping its shape ("scale the ogre warrior to level 6").

Each number of the creature's own stat block is read against GM Core's Building Creatures table for it at the
creature's level (``statblock.extract_numbers``, ``tables.column_of``: the Ogre Warrior's AC 17 is high for level 3),
and written as the same column at the new level, at the same place within the column's range (an HP value in the
upper half of moderate stays there). A value beyond the table's edge keeps its distance from the edge column; an
attribute below the table (an ogre's Int -2) is the creature's own and stays. Strike damage keeps its dice and types,
each expression moved by the ratio of its column's mean at the two levels; an ability's DCs move as Spell DCs (Table
2-11) and its damage as moderate Strike damage. Size, traits, senses, languages, Speed, the Strikes' names and traits,
and the abilities' words are the creature's; its spells are the book's (their ranks are said, not changed).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from gmprep.core.creators import tables
from gmprep.core.creators.models import Citation
from gmprep.core.creators.statblock import extract_numbers

_DICE = re.compile(r"\b(\d+)d(\d+)(?:([+-])(\d+))?")
_ABILITY_DC = re.compile(r"\bDC (\d+)")
_ABILITY_DAMAGE = re.compile(r"\b\d+d\d+(?:[+-]\d+)?(?= (?!persistent)(?:[a-z]+ )?damage\b)")


class ScaledCreature(BaseModel):
    """A Monster Core creature's stat block moved to another level."""

    name: str
    base_level: int
    level: int
    text: str
    changes: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)


def _ranges(tid: str, level: int) -> list[tuple[str, tuple[int, int]]]:
    return [(c, r) for c in tables.columns(tid) if (r := tables.cell_range(tid, level, c))]


def rescale(tid: str, old: int, new: int, value: int) -> tuple[int, str]:
    """``value`` of table ``tid`` at level ``old`` as the same column (and place within it) at level ``new``, with
    the column read; beyond the table, the edge column and the same distance from it."""
    cols = _ranges(tid, old)
    target = dict(_ranges(tid, new))
    for c, (lo, hi) in cols:
        if lo <= value <= hi and c in target:
            lo2, hi2 = target[c]
            return (lo2 + round((value - lo) / (hi - lo) * (hi2 - lo2)) if hi > lo else lo2), c
    # between two columns: the same place between them at the new level (the nearer one named)
    both = [(c, r) for c, r in cols if c in target]
    for (c1, (lo1, _)), (c2, (_, hi2)) in zip(both, both[1:], strict=False):  # c1 above c2 (extreme first)
        if hi2 < value < lo1:
            frac = (value - hi2) / (lo1 - hi2)
            placed = target[c2][1] + frac * (target[c1][0] - target[c2][1])
            return round(placed), c1 if frac >= 0.5 else c2
    # beyond the edges: the edge column, and the same distance from it
    c, (lo, hi) = min(both, key=lambda x: min(abs(value - x[1][0]), abs(value - x[1][1])))
    edge = lo if value < lo else hi
    lo2, hi2 = target[c]
    return (lo2 if value < lo else hi2) + (value - edge), c


def _scaled_dice(expr: str, factor: float, target: float | None = None) -> str:
    """``expr`` ("2d8+5 piercing plus 1d6 fire") with its mean times ``factor``: each expression's dice count times
    ``factor`` (at least one), and the main one's modifier (the expression that has one, else the first) what brings
    the whole to the new mean (``target`` when given, else the old mean times ``factor``); its dice and the words
    between kept."""
    found = list(_DICE.finditer(expr))
    if not found:
        return expr
    def mean(count: int, die: int) -> float:
        return count * (die + 1) / 2
    old = sum(mean(int(m.group(1)), int(m.group(2))) + int((m.group(3) or "+") + (m.group(4) or "0")) for m in found)
    counts = [max(1, round(int(m.group(1)) * factor)) for m in found]
    if not any(m.group(3) for m in found):  # dice alone ("6d6 mental damage"): only their counts move
        return _DICE.sub(lambda m: f"{max(1, round(int(m.group(1)) * factor))}d{m.group(2)}", expr)
    main = next(i for i, m in enumerate(found) if m.group(3))
    rest = sum(mean(c, int(m.group(2))) + (int(m.group(3) + m.group(4)) if m.group(3) else 0)
               for i, (c, m) in enumerate(zip(counts, found, strict=True)) if i != main)
    goal = target + 0.5 if target is not None else old * factor  # the checker reads a mean's integer part
    flat = int(goal - rest - mean(counts[main], int(found[main].group(2))))
    parts: list[str] = []
    at = 0
    for i, (c, m) in enumerate(zip(counts, found, strict=True)):
        own = flat if i == main else (int(m.group(3) + m.group(4)) if m.group(3) else 0)
        parts += [expr[at: m.start()], f"{c}d{m.group(2)}" + (f"{own:+d}" if own else "")]
        at = m.end()
    return "".join(parts) + expr[at:]


def _mean(tid: str, level: int, column: str) -> float:
    r = tables.cell_range(tid, level, column)
    return float(r[0]) if r else 0.0


def scale_creature(node, level: int) -> ScaledCreature:
    """``node`` (a Monster Core creature) at ``level``, each statistic in the column it has at its own level."""
    if node.level is None:
        raise ValueError(f"{node.name} has no level to scale from")
    # the tables run from level -1 to 24: a level-25 creature is read at 24 (its numbers beyond the edge columns keep
    # their distance from them)
    old, text = max(tables.CREATURE_MIN_LEVEL, min(node.level, 24)), node.text or ""
    if not -1 <= level <= 24:
        raise ValueError(f"level {level} is outside the tables' levels -1 to 24")
    edits: list[tuple[int, int, str]] = []
    read: dict[str, str] = {}
    for field, tid, value, start, end in extract_numbers(text):
        if tid == "attribute-modifiers":
            lo = min(r[0] for _, r in _ranges(tid, old))
            if value < lo:
                continue  # below the table: the creature's own weakness (an ogre's Intelligence)
        if tid == "strike-damage":
            new, column = rescale(tid, old, level, value)
            edits.append((start, end, _scaled_dice(text[start:end], new / max(1, value), new)))
        else:
            new, column = rescale(tid, old, level, value)
            edits.append((start, end, f"{new:+d}" if text[start] in "+-" else str(new)))
        read.setdefault(field, column)
    taken = [(s, e) for s, e, _ in edits]

    def free(s: int, e: int) -> bool:
        return all(e <= a or s >= b for a, b in taken)

    for m in _ABILITY_DC.finditer(text):
        if free(m.start(1), m.end(1)):
            new, _ = rescale("spell-dc", old, level, int(m.group(1)))
            edits.append((m.start(1), m.end(1), str(new)))
    damage_factor = _mean("strike-damage", level, "moderate") / max(1.0, _mean("strike-damage", old, "moderate"))
    for m in _ABILITY_DAMAGE.finditer(text):
        if free(m.start(), m.end()):
            edits.append((m.start(), m.end(), _scaled_dice(m.group(0), damage_factor)))
    header = re.search(r"\*\*Creature (-?\d+)\*\*", text)
    if header:
        edits.append((header.start(1), header.end(1), str(level)))
    for s, e, new_text in sorted(edits, reverse=True):
        text = text[:s] + new_text + text[e:]
    shown = ", ".join(f"{f.removeprefix('skill:').removeprefix('strike:')}{' damage' if f.startswith('damage:') else ''}"
                      .removeprefix("damage:") + f" {c}" for f, c in list(read.items())[:12])
    changes = [f"level {node.level} -> {level}", f"each statistic in the column it has at level {old} ({shown}"
               + (", ..." if len(read) > 12 else "") + ")",
               "Strike damage by its column's mean, dice and types kept; ability DCs as Spell DCs, ability damage as "
               "moderate Strike damage"]
    if re.search(r"Spells\*\*", text):
        changes.append("spells as the book lists them: choose ones of the new level's ranks if needed")
    tids = sorted({tid for _, tid, _, _, _ in extract_numbers(node.text or "")} | {"spell-dc"})
    cites = [Citation(id=node.source_id or node.node_id, name=node.name, book=node.book or "", page=node.page),
             *(tables.building_citation(t) for t in tids)]
    return ScaledCreature(name=node.name, base_level=node.level, level=level, text=text, changes=changes, citations=cites)


def named_whole(req, resolver):
    """The Monster Core creature a creature request names whole ("ogre warrior" at level 6) and says nothing else of
    (no role, traits or tradition), which is then scaled rather than built from a role; else None. One owner for the
    CLI and the chat."""
    if resolver is None or req.role is not None or req.traits or req.tradition or not hasattr(resolver, "resolve"):
        return None
    node = resolver.resolve(req.concept)
    return node if node is not None and node.level is not None and node.text else None


def render_scaled_markdown(s: ScaledCreature) -> str:
    return (f"### {s.name} (level {s.level})\n\n<!-- scaled from Monster Core's level {s.base_level}: "
            f"{'; '.join(s.changes)} -->\n\n{s.text}\n\nNumbers: " + "; ".join(c.label() for c in s.citations) + "\n")
