"""Monster Core's elite and weak adjustments applied to a creature's own stat block ("an elite ogre warrior").

Monster Core (pp. 6-7, "Elite and Weak Adjustments"): an elite creature's AC, attack modifiers, DCs, saving throws,
Perception and skill modifiers rise by 2, the damage of its Strikes and other offensive abilities by 2 (by 4 for an
ability of limited uses), its Hit Points by an amount set by its starting level, and its level by 1 (by 2 from level -1
or 0); a weak creature's fall the same way. The numbers are the tables' (``tables.adjustment_*``); this module only
finds them in the printed stat block, which the corpus keeps as markdown lines ("**AC** 17; **Fort** +11 ...").
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from gmprep.core.creators import tables
from gmprep.core.creators.models import Adjustment, Citation

_SIGNED = re.compile(r"(?<![\w+-])([+-])(\d+)\b")
_DC = re.compile(r"\bDC (\d+)")
_ATTACK = re.compile(r"\battack ([+-])(\d+)")
_SKILL_MOD = re.compile(r"([+-])(\d+)( skill modifier)")
# a damage expression: dice with an optional modifier, then the damage type words before "damage" or the end
_DICE = re.compile(r"\b(\d+d\d+)(?:([+-])(\d+))?")
_STRIKE = re.compile(r"^\*\*(?:Melee|Ranged) strike\*\* ")
_ACTION = re.compile(r"\[(?:one|two|three)-actions?\]|\[reaction\]|\[free-action\]")
# an ability of limited uses: its damage moves by twice as much (Monster Core: "If the creature has limited uses of an
# ability, such as a breath weapon, increase the damage by 4 instead")
_LIMITED = re.compile(r"can't use [^.]* again|\*\*Frequency\*\*|\bonce per\b", re.I)


class AdjustedCreature(BaseModel):
    """A Monster Core creature with Monster Core's elite or weak adjustments, as a stat block to paste."""

    name: str
    adjustment: Adjustment
    base_level: int
    level: int
    text: str  # the adjusted stat block (markdown, as the corpus prints it)
    changes: list[str] = Field(default_factory=list)  # what moved, in words
    citations: list[Citation] = Field(default_factory=list)


def _signed(n: int) -> str:
    return f"{n:+d}"


def _move_signed(text: str, by: int) -> str:
    return _SIGNED.sub(lambda m: _signed(int(m.group(1) + m.group(2)) + by), text)


def _move_damage(expr: str, by: int) -> str:
    """``2d8+5`` -> ``2d8+7``; ``1d6`` -> ``1d6+2`` (a weak one's ``1d6-2``)."""
    m = _DICE.match(expr)
    if m is None:
        return expr
    flat = int((m.group(2) or "+") + (m.group(3) or "0")) + by
    return m.group(1) + (_signed(flat) if flat else "")


def _strike(line: str, by: int) -> str:
    """A Strike line with its attack modifier and its main damage moved: the damage with a flat modifier ("1d8 mental
    plus 2d8+5 piercing": the 2d8+5), else the first."""
    head, sep, damage = line.partition("**Damage** ")
    # the attack modifier is the one just before the action glyph ("Ogre Hook +12 ([one-action])"); a weapon's name may
    # carry a number of its own ("+1 Striking Longsword")
    head = re.sub(r"([+-])(\d+)(?= \(\[)", lambda m: _signed(int(m.group(1) + m.group(2)) + by), head, count=1)
    if sep:
        dice = list(_DICE.finditer(damage))
        main = next((d for d in dice if d.group(2)), dice[0] if dice else None)
        if main is not None:
            damage = damage[: main.start()] + _move_damage(main.group(0), by) + damage[main.end():]
    return head + sep + damage


def _ability(block: str, by: int) -> tuple[str, int]:
    """An ability's block with its DCs, attack modifiers and skill modifiers moved, and the first damage it deals
    (dice before "damage", not persistent damage) moved by ``by``, twice that for an ability of limited uses. Returns
    how much its damage moved (0: none)."""
    block = _DC.sub(lambda m: f"DC {int(m.group(1)) + by}", block)
    block = _ATTACK.sub(lambda m: f"attack {_signed(int(m.group(1) + m.group(2)) + by)}", block)
    block = _SKILL_MOD.sub(lambda m: _signed(int(m.group(1) + m.group(2)) + by) + m.group(3), block)
    dmg = re.search(r"\b(\d+d\d+(?:[+-]\d+)?)(?= (?!persistent)(?:[a-z]+ )?damage\b)", block)
    if dmg is None or not _ACTION.search(block.split("\n", 1)[0]):
        # only an ability the creature uses (an action, a reaction): a passive rider on its Strikes (the wolf's Pack
        # Attack: "1d4 extra damage") would add the Strikes' +2 a second time
        return block, 0
    step = by * (2 if _LIMITED.search(block) else 1)
    return block[: dmg.start()] + _move_damage(dmg.group(1), step) + block[dmg.end():], step


def adjust_creature(node, adjustment: Adjustment) -> AdjustedCreature:
    """``node`` (a Monster Core creature entry) with Monster Core's ``adjustment`` (elite or weak) applied."""
    if node.level is None:
        raise ValueError(f"{node.name} has no level to adjust")
    by = tables.adjustment_modifier(adjustment)
    hp = tables.adjustment_hp(node.level, adjustment)
    level = tables.adjusted_level(node.level, adjustment)
    out: list[str] = []
    damaged: list[str] = []
    for block in (node.text or "").split("\n\n"):
        first = block.lstrip()
        if first.startswith("**Creature "):
            block = re.sub(r"\*\*Creature -?\d+\*\*", f"**Creature {level}**", block, count=1)
        elif first.startswith(("**Perception**", "**Skills**")):
            block = _move_signed(block, by) if first.startswith("**Skills**") else \
                re.sub(r"(\*\*Perception\*\* )([+-])(\d+)", lambda m: m.group(1) + _signed(int(m.group(2) + m.group(3)) + by),
                       block, count=1)
        elif first.startswith("**AC**"):
            block = re.sub(r"(\*\*AC\*\* )(\d+)", lambda m: m.group(1) + str(int(m.group(2)) + by), block, count=1)
            block = re.sub(r"(\*\*(?:Fort|Ref|Will)\*\* )([+-])(\d+)",
                           lambda m: m.group(1) + _signed(int(m.group(2) + m.group(3)) + by), block)
        elif first.startswith("**HP**"):
            block = re.sub(r"(\*\*HP\*\* )(\d+)", lambda m: m.group(1) + str(max(1, int(m.group(2)) + hp)), block,
                           count=1)
        elif _STRIKE.match(first):
            block = _strike(block, by)
        elif not first.startswith(("**Languages**", "**Speed**", "**Str**")):
            name = re.match(r"\*\*([^*]+)\*\*", first)
            block, moved = _ability(block, by)
            if moved and name:
                owner = name.group(1) + ("'" if name.group(1).endswith("s") else "'s")
                damaged.append(f"{owner} damage {_signed(moved)}"
                               + (" (limited uses)" if abs(moved) > abs(by) else ""))
        out.append(block)
    changes = [f"level {node.level} -> {level}",
               f"AC, attack modifiers, DCs, saving throws, Perception and skills {_signed(by)}",
               f"HP {_signed(hp)} (starting level {node.level})",
               f"Strike damage {_signed(by)}", *damaged]
    cites = [Citation(id=node.source_id or node.node_id, name=node.name, book=node.book or "", page=node.page),
             tables.adjustments_citation()]
    return AdjustedCreature(name=f"{adjustment.capitalize()} {node.name}", adjustment=adjustment,
                            base_level=node.level, level=level, text="\n\n".join(out), changes=changes,
                            citations=cites)


def render_adjusted_markdown(a: AdjustedCreature) -> str:
    """The adjusted stat block under its name, what moved said in a comment and its sources in a line."""
    return (f"### {a.name}\n\n<!-- Monster Core's {a.adjustment} adjustments: {'; '.join(a.changes)} -->\n\n{a.text}\n\n"
            "Numbers: " + "; ".join(c.label() for c in a.citations) + "\n")
