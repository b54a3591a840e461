"""The printed tables as data (``ingest/data/pf2e/creature-building.json``), loaded once, with citations.

One owner for each rule the creators compute with: creature XP by level difference, the encounter
budget for a party size, the threat of an XP total, the elite/weak adjustments, and the Building
Creatures columns (the value of a column, the column of a value).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

from gmprep.core.creators.models import THREATS, Citation, Column, Threat

DATA_FILE = "creature-building.json"
COLUMNS: tuple[Column, ...] = ("extreme", "high", "moderate", "low", "terrible")


@lru_cache(maxsize=1)
def data() -> dict:
    """The whole data file."""
    text = resources.files("gmprep.ingest").joinpath("data", "pf2e", DATA_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def _cite(table: dict) -> Citation:
    return Citation(id=table.get("corpus_entry") or table["id"], name=table["name"], book=table["book"], page=table.get("page"))


# ---- encounters (GM Core p. 75; creature XP from the XP Awards table) ------------------------------
def budget_citation() -> Citation:
    return _cite(data()["encounter"]["encounter-budget"])


def xp_citation() -> Citation:
    return _cite(data()["encounter"]["creature-xp"])


def adjustments_citation() -> Citation:
    return _cite(data()["adjustments"])


def encounter_budget(party_size: int) -> dict[str, int]:
    """XP budget per threat for ``party_size`` characters: the 4-character budget plus the character
    adjustment for each character more (or less) than four; never below 0."""
    rows = data()["encounter"]["encounter-budget"]["threats"]
    return {t: max(0, rows[t]["budget"] + rows[t]["per_character"] * (party_size - 4)) for t in THREATS}


XP_MIN_DELTA, XP_MAX_DELTA = -4, 4
# the levels a creature can have (Monster Core's run from -1 to 25)
CREATURE_MIN_LEVEL, CREATURE_MAX_LEVEL = -1, 25


def creature_xp(creature_level: int, party_level: int) -> int:
    """XP of one creature for the party: the table's value for the level difference. Below party
    level - 4 the table gives nothing (0 XP); above party level + 4 it gives no value, so the
    + 4 value (160) is used and callers warn (see ``xp_outside_table``)."""
    delta = creature_level - party_level
    if delta < XP_MIN_DELTA:
        return 0
    table = data()["encounter"]["creature-xp"]["xp_by_level_delta"]
    return int(table[str(min(delta, XP_MAX_DELTA))])


def solo_level(party_size: int, party_level: int, threat: Threat) -> int | None:
    """The highest creature level, from the party's own to party level + 4, whose XP alone is ``threat`` for the party:
    a boss fought alone (party level + 3 for a severe fight of four, + 4 for an extreme one; "a boss so mighty it could
    defeat the entire party single-handedly", GM Core, Choosing Creatures). None when no level of the table is."""
    budget = encounter_budget(party_size)
    for delta in range(XP_MAX_DELTA, -1, -1):
        xp = creature_xp(party_level + delta, party_level)
        if xp <= budget[threat] and threat_for_xp(xp, budget) == threat:
            return party_level + delta
    return None


def threat_for_xp(xp: int, budget: dict[str, int]) -> Threat:
    """THE rule for an XP total between two budgets, used everywhere: the encounter's threat is the
    lowest threat whose budget the total does not exceed (each budget is read as a ceiling, as GM
    Core p. 75 prints the trivial row "40 or less"); 50 XP for four characters is low, 81 is severe.
    A total above the extreme budget is still extreme (callers add a warning)."""
    for t in THREATS:
        if t != "trivial" and budget[t] < budget["trivial"]:
            continue  # 1-character party: low's budget (0) falls under trivial's (10); skip that row
        if xp <= budget[t]:
            return t
    return "extreme"


# ---- elite / weak (Monster Core pp. 6-7) -------------------------------------------------------------
def adjusted_level(level: int, adjustment: str | None) -> int:
    """The level after an elite or weak adjustment (+1, or +2 from level -1 or 0; -1, or -2 from level 1)."""
    if not adjustment:
        return level
    rule = data()["adjustments"][adjustment]
    return level + int(rule["level_if"].get(str(level), rule["level"]))


def adjustment_modifier(adjustment: str | None) -> int:
    """+2 (elite) or -2 (weak) to AC, attack bonus, DCs, saves, Perception and skills; also Strike damage."""
    return int(data()["adjustments"][adjustment]["modifier"]) if adjustment else 0


def adjustment_hp(level: int, adjustment: str | None) -> int:
    """HP added (elite) or subtracted (weak), by the creature's starting level."""
    if not adjustment:
        return 0
    bands = data()["adjustments"][adjustment]["hp"]
    for band in bands:
        if band["min_level"] <= level <= band["max_level"]:
            return int(band["hp"])
    return int(bands[0]["hp"])  # weak below level 1 is not covered by the rule; its lowest band applies


# ---- Building Creatures (GM Core pp. 114-122) --------------------------------------------------------
def building_table(tid: str) -> dict:
    return data()["building"][tid]


def building_citation(tid: str) -> Citation:
    """The table's citation; the page only where it was checked against a published page (the data
    file keeps its estimate beside ``page_checked: false``); the table number locates it either way."""
    t = building_table(tid)
    return Citation(id=t["id"], name=t["name"], book=t["book"], page=t["page"] if t.get("page_checked") else None)


def cell(tid: str, level: int, column: str):
    """The printed cell: an int, a [low, high] range, a {dice, mean} damage cell, or None ("—")."""
    return building_table(tid)["levels"][str(level)].get(column)


def cell_range(tid: str, level: int, column: str) -> tuple[int, int] | None:
    """The lowest..highest value a cell allows (a damage cell: its mean)."""
    c = cell(tid, level, column)
    if c is None:
        return None
    if isinstance(c, dict):
        return (c["mean"], c["mean"])
    if isinstance(c, list):
        return (int(c[0]), int(c[1]))
    return (int(c), int(c))


def columns(tid: str) -> list[str]:
    return list(building_table(tid)["columns"])


def table_range(tid: str, level: int) -> tuple[int, int]:
    """The lowest and highest value of any column at ``level``."""
    spans = [r for c in columns(tid) if (r := cell_range(tid, level, c))]
    return (min(r[0] for r in spans), max(r[1] for r in spans))


def column_of(tid: str, level: int, value: int) -> str:
    """Where ``value`` falls at ``level``: a column name, "between high and moderate",
    "above extreme" or "below low"."""
    cols = [(c, r) for c in columns(tid) if (r := cell_range(tid, level, c))]
    for c, (lo, hi) in cols:
        if lo <= value <= hi:
            return c
    top, bottom = cols[0], cols[-1]
    if value > top[1][1]:
        return f"above {top[0]}"
    if value < bottom[1][0]:
        return f"below {bottom[0]}"
    for (c1, r1), (c2, r2) in zip(cols, cols[1:], strict=False):
        if r2[1] < value < r1[0]:
            return f"between {c1} and {c2}"
    return "off the table"


_UNSIGNED = ("armor-class", "hit-points", "spell-dc", "resistances-weaknesses", "strike-damage")


def _cell_text(c, signed: bool) -> str:
    def num(v: int) -> str:
        return f"{v:+d}" if signed else str(v)

    if c is None:
        return "—"
    if isinstance(c, dict):
        return f"{c['dice']} ({c['mean']})"
    if isinstance(c, list):
        return f"{num(c[1])} to {num(c[0])}" if c[0] != c[1] else num(c[0])
    return num(c)


def table_markdown(tid: str, levels: list[int] | None = None) -> str:
    """A building table (or some of its levels) as a markdown table with its citation, for hovers and answers."""
    t = building_table(tid)
    cols = columns(tid)
    rows = [f"| Level | {' | '.join(c.capitalize() for c in cols)} |", "|---" * (len(cols) + 1) + "|"]
    for lvl in levels if levels is not None else range(-1, 25):
        cells = t["levels"][str(lvl)]
        rows.append(f"| {lvl} | " + " | ".join(_cell_text(cells.get(c), tid not in _UNSIGNED) for c in cols) + " |")
    return "\n".join([f"**{t['name']}**", "", *rows, "", f"Source: {building_citation(tid).label()}"])
