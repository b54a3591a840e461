"""Check a statblock's numbers against GM Core's Building Creatures tables for its stated level.

Reads the corpus's markdown form (``**Creature 3**``, ``**Perception** +9``, ``**Skills** Athletics +9``,
``**Str** +4, ...``, ``**AC** 19; **Fort** +11, **Ref** +7, **Will** +5``, ``**HP** 45``,
``**Melee strike** Club +12 (...), **Damage** 1d10+6 bludgeoning``, ``**Arcane Innate Spells** DC 20,
attack +12``) and the looser forms GMs write (no bold, "Melee [one-action] jaws +10 [+5/+0]",
"Level 3", "HP 45", "AC 19").

A number is flagged only when it lies outside every column of its table at that level: above the
top column (extreme, or high for HP) or below the lowest printed one. Three exceptions the book makes:
attribute modifiers may go down to -5 ("terrible", GM Core, Attribute Modifiers), skills have no lower bound
(an untrained skill is simply left off), and Strike damage has none either (creatures that "don't
care about their Strikes" use "the low damage value, or even less", GM Core p. 120). Strike damage compares the
expression's average (d4 = 2.5 ... d12 = 6.5, plus flat and extra dice, as GM Core p. 120 says).
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from gmprep.core.creators import tables
from gmprep.core.creators.models import StatIssue

_LEVEL_RES = [
    re.compile(r"\*\*Creature\s+([+-]?\d+)\*\*", re.I),
    re.compile(r"\bCreature\s+([+-]?\d+)\b"),
    re.compile(r"^\s*(?:[-*]\s*)?\**Level\**\s*:?\s*([+-]?\d+)\b", re.I | re.M),
]
_NUM = r"([+\-\u2013\u2212]?\d+)"
_ATTRS = ("str", "dex", "con", "int", "wis", "cha")
_DICE = re.compile(r"(\d+)d(\d+)(?:\s*([+\-\u2013\u2212])\s*(\d+))?")


def _int(s: str) -> int:
    return int(s.replace("\u2013", "-").replace("\u2212", "-"))


def statblock_level(text: str) -> int | None:
    for rx in _LEVEL_RES:
        if m := rx.search(text):
            return _int(m.group(1))
    return None


def _find_label(text: str, label: str) -> re.Match | None:
    """The statistic after ``label``: the bold form (``**AC** 19``) wherever it is, else the plain form
    at a line start or after ``;``/``,`` (``AC 19; Fort +11``), never inside prose ("hitting AC 13")."""
    bold = re.compile(r"\*\*" + label + r":?\*\*\s*:?\s*" + _NUM, re.I)
    if m := bold.search(text):
        return m
    plain = re.compile(r"(?:^[ \t]*(?:[-*+][ \t]+)?|[;,][ \t]*)" + label + r"\b:?[ \t]*" + _NUM, re.I | re.M)
    return plain.search(text)


def extract_numbers(text: str) -> list[tuple[str, str, int, int, int]]:
    """(field, table id, value, start, end) for every number the tables cover."""
    out: list[tuple[str, str, int, int, int]] = []

    def add(field: str, tid: str, m: re.Match, group: int = 1) -> None:
        out.append((field, tid, _int(m.group(group)), m.start(group), m.end(group)))

    for label, field, tid in (("Perception", "perception", "perception"), ("AC", "ac", "armor-class"),
                              ("Fort", "fort", "saving-throws"), ("Ref", "ref", "saving-throws"),
                              ("Will", "will", "saving-throws"), ("HP", "hp", "hit-points")):
        if m := _find_label(text, label):
            add(field, tid, m)
    for attr in _ATTRS:
        if m := _find_label(text, attr.capitalize()):
            add(attr, "attribute-modifiers", m)
    if m := re.search(r"^[ \t]*(?:[-*+][ \t]+)?\**Skills\**\s*:?\**\s*([^\n]+)", text, re.M):
        base = m.start(1)
        for s in re.finditer(r"([A-Z][A-Za-z' ]*?(?:\([^)]*\))?)\s+" + _NUM, m.group(1)):
            name = s.group(1).strip()
            out.append((f"skill:{name}", "skills", _int(s.group(2)), base + s.start(2), base + s.end(2)))
    strike = re.compile(  # at a line start: "**Melee strike** Club +12", "- **Melee** [one-action] jaws +10"
        r"^[ \t]*(?:[-*+][ \t]+)?\**(Melee|Ranged)(?: strike)?\**\s*(?:\[[^\]\n]*\]\s*|\(\[[^\]\n]*\]\)\s*)?(?P<name>[A-Za-z][A-Za-z' \-]*?)\s+" + _NUM.replace("(", "(?P<atk>", 1)
        + r"(?P<rest>[^\n]*)", re.I | re.M)
    for m in strike.finditer(text):
        name = m.group("name").strip()
        out.append((f"strike:{name}", "strike-attack-bonus", _int(m.group("atk")), m.start("atk"), m.end("atk")))
        if d := re.search(r"\**Damage\**\s*:?\**\s*([^\n]*)", m.group("rest")):
            dice = list(_DICE.finditer(d.group(1)))  # the main expression and any extra dice ("plus 1d6 fire")
            if dice:
                total = 0.0
                for x in dice:
                    flat = _int(x.group(3) + x.group(4)) if x.group(3) else 0
                    total += int(x.group(1)) * (int(x.group(2)) + 1) / 2 + flat
                at = m.start("rest") + d.start(1)
                out.append((f"damage:{name}", "strike-damage", int(total), at + dice[0].start(), at + dice[-1].end()))
    for m in re.finditer(r"Spells\**\s*:?\s*\**\s*DC\s+(\d+)(?:\s*,\s*attack\s+" + _NUM + ")?", text):
        out.append(("spell_dc", "spell-dc", int(m.group(1)), m.start(1), m.end(1)))
        if m.group(2):
            out.append(("spell_attack", "spell-attack", _int(m.group(2)), m.start(2), m.end(2)))
    return out


_LABELS = {"ac": "AC", "hp": "HP", "fort": "Fortitude", "ref": "Reflex", "will": "Will", "perception": "Perception",
           "spell_dc": "spell DC", "spell_attack": "spell attack"}


def _label(field: str) -> str:
    if field in _LABELS:
        return _LABELS[field]
    if field in _ATTRS:
        return field.capitalize()
    kind, _, name = field.partition(":")
    return {"skill": f"{name}", "strike": f"{name} Strike", "damage": f"{name} damage"}.get(kind, field)


def allowed_range(tid: str, level: int) -> tuple[int | None, int | None]:
    """The lowest and highest value the book allows for a table at a level (None: unbounded)."""
    lo, hi = tables.table_range(tid, level)
    if tid == "attribute-modifiers":
        return (-5, hi)
    if tid in ("skills", "strike-damage"):
        return (None, hi)
    return (lo, hi)


def check_statblock(markdown_text: str, level: int | None = None) -> list[StatIssue]:
    """Every number off its table for the statblock's level (``level`` overrides the stated one)."""
    lvl = level if level is not None else statblock_level(markdown_text)
    if lvl is None or not -1 <= lvl <= 24:
        return []
    issues = []
    for field, tid, value, start, end in extract_numbers(markdown_text):
        lo, hi = allowed_range(tid, lvl)
        if (lo is None or value >= lo) and (hi is None or value <= hi):
            continue
        cols = [(c, r) for c in tables.columns(tid) if (r := tables.cell_range(tid, lvl, c))]
        top_c, (top_lo, top_hi) = cols[0]
        bot_c, (bot_lo, _) = cols[-1]
        where = tables.column_of(tid, lvl, value)
        if hi is not None and value > hi:
            fix = top_hi
            nxt = f"; {cols[1][0]} is {_fmt(tid, cols[1][1])}" if len(cols) > 1 else ""
            msg = f"{_label(field)} {_val(tid, value)} is above {top_c} ({_fmt(tid, (top_lo, top_hi))}) for level {lvl}{nxt}"
        else:
            fix = bot_lo if lo is None or tid != "attribute-modifiers" else lo
            msg = f"{_label(field)} {_val(tid, value)} is below {bot_c} ({_fmt(tid, cols[-1][1])}) for level {lvl}"
        msg += f" ({tables.building_citation(tid).label()})"
        if tid == "strike-damage":  # replace the expression with the printed one of the nearest column
            fix_text = str(tables.cell(tid, lvl, top_c if value > top_hi else bot_c)["dice"])
        else:
            fix_text = f"{fix:+d}" if _signed(tid) else str(fix)
        issues.append(StatIssue(
            field=field, value=value, level=lvl, column=where,
            expected_range=(lo if lo is not None else bot_lo, hi if hi is not None else top_hi),
            message=msg, fix_value=fix, fix_text=fix_text, start=start, end=end, citation=tables.building_citation(tid)))
    return sorted(issues, key=lambda i: i.start)


def _signed(tid: str) -> bool:
    return tid not in ("armor-class", "hit-points", "spell-dc", "strike-damage")


def _val(tid: str, v: int) -> str:
    if tid == "strike-damage":
        return f"(average {v})"
    return f"{v:+d}" if _signed(tid) else str(v)


def _fmt(tid: str, r: tuple[int, int]) -> str:
    a, b = r
    if a == b:
        return _val(tid, a) if tid != "strike-damage" else f"average {a}"
    return f"{_val(tid, a)} to {_val(tid, b)}" if tid != "strike-damage" else f"average {a} to {b}"


_HEADING = re.compile(r"^(#{1,6})[ \t]+[^\n]*$", re.M)
_STAT_LABELS = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?\**(?:AC|HP|Perception|Fort|Melee|Ranged)\b", re.I | re.M)


class StatblockSpan(BaseModel):
    """A statblock found in a note: its char span and level."""

    start: int
    end: int
    level: int
    name: str | None = None  # its heading's text ("Bog Hag"), when it has one


def note_creatures(document: str, spans: list[StatblockSpan] | None = None) -> dict[str, int]:
    """The creatures a note stats itself (``find_statblocks`` with a heading; ``spans``: already found): name key ->
    level, for its encounter blocks to count ("- 2 bog hags" beside a "## Bog Hag" statblock of Creature 3)."""
    from gmprep.kg.names import name_key

    out: dict[str, int] = {}
    for span in find_statblocks(document) if spans is None else spans:
        if span.name and (key := " ".join(name_key(span.name))):
            out.setdefault(key, span.level)
    return out


def find_statblocks(document: str) -> list[StatblockSpan]:
    """Statblocks in a markdown note: sections (split at headings) that state a level ("Creature 3",
    "Level 3", or a parent section's) and hold at least two statistic lines (AC, HP, Perception, ...).
    A section without its own level inherits the level of the nearest enclosing section that has one."""
    cuts = [m.start() for m in _HEADING.finditer(document)]
    bounds = list(zip([0, *cuts], [*cuts, len(document)], strict=True))
    out: list[StatblockSpan] = []
    stack: list[tuple[int, int | None]] = []  # (heading depth, level) of enclosing sections
    for start, end in bounds:
        section = document[start:end]
        h = _HEADING.match(section)
        depth = len(h.group(1)) if h else 0
        while stack and stack[-1][0] >= depth:
            stack.pop()
        own = statblock_level(section)
        level = own if own is not None else next((lv for _, lv in reversed(stack) if lv is not None), None)
        stack.append((depth, own))
        if level is not None and len(_STAT_LABELS.findall(section)) >= 2:
            title = re.sub(r"[*_`]|\[\[|\]\]", "", h.group(0)[len(h.group(1)):]).strip() if h else ""
            out.append(StatblockSpan(start=start, end=end, level=level, name=title or None))
    return out


def check_note(document: str, spans: list[StatblockSpan] | None = None) -> list[StatIssue]:
    """``check_statblock`` over every statblock of a note (``spans``: already found), offsets relative to the
    document."""
    issues: list[StatIssue] = []
    for span in find_statblocks(document) if spans is None else spans:
        for issue in check_statblock(document[span.start:span.end], span.level):
            issues.append(issue.model_copy(update={"start": issue.start + span.start, "end": issue.end + span.start}))
    return issues
