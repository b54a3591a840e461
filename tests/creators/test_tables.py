"""The data file against printed values: rows typed from the books' tables as published elsewhere."""

from __future__ import annotations

import gzip
import json

import pytest

from gmprep.core.creators import tables
from gmprep.ingest.corpus import corpus_dir

# GM Core p. 117, Table 2-5: Armor Class, as printed on Archives of Nethys (Rules.aspx?ID=1010)
AC_PRINTED = """-1 18 15 14 12|0 19 16 15 13|1 19 16 15 13|2 21 18 17 15|3 22 19 18 16|4 24 21 20 18|5 25 22 21 19
6 27 24 23 21|7 28 25 24 22|8 30 27 26 24|9 31 28 27 25|10 33 30 29 27|11 34 31 30 28|12 36 33 32 30
13 37 34 33 31|14 39 36 35 33|15 40 37 36 34|16 42 39 38 36|17 43 40 39 37|18 45 42 41 39|19 46 43 42 40
20 48 45 44 42|21 49 46 45 43|22 51 48 47 45|23 52 49 48 46|24 54 51 50 48"""


def test_armor_class_every_row_as_printed():
    for row in AC_PRINTED.replace("\n", "|").split("|"):
        lvl, *vals = (int(x) for x in row.split())
        assert [tables.cell("armor-class", lvl, c) for c in ("extreme", "high", "moderate", "low")] == vals, lvl


# GM Core p. 115, Table 2-2: Perception, as printed on Archives of Nethys (Rules.aspx?ID=1003)
PERCEPTION_PRINTED = """-1 9 8 5 2 0|0 10 9 6 3 1|1 11 10 7 4 2|2 12 11 8 5 3|3 14 12 9 6 4|4 15 14 11 8 6|5 17 15 12 9 7
6 18 17 14 11 8|7 20 18 15 12 10|8 21 19 16 13 11|9 23 21 18 15 12|10 24 22 19 16 14|11 26 24 21 18 15
12 27 25 22 19 16|13 29 26 23 20 18|14 30 28 25 22 19|15 32 29 26 23 20|16 33 30 28 25 22|17 35 32 29 26 23
18 36 33 30 27 24|19 38 35 32 29 26|20 39 36 33 30 27|21 41 38 35 32 28|22 43 39 36 33 30|23 44 40 37 34 31
24 46 42 38 36 32"""


def test_perception_every_row_as_printed():
    for row in PERCEPTION_PRINTED.replace("\n", "|").split("|"):
        lvl, *vals = (int(x) for x in row.split())
        assert [tables.cell("perception", lvl, c) for c in ("extreme", "high", "moderate", "low", "terrible")] == vals, lvl


def test_checked_pages():
    checked = {tid: t["page"] for tid, t in tables.data()["building"].items() if t["page_checked"]}
    assert checked == {"perception": "115", "armor-class": "117", "saving-throws": "118", "strike-damage": "120",
                       "spell-dc": "122", "spell-attack": "122"}
    assert tables.building_citation("armor-class").label() == "Table 2-5: Armor Class (Pathfinder GM Core, p. 117)"
    assert tables.building_citation("hit-points").page is None  # estimated page is not shown as a citation


# Rows as printed in a second, independent transcription of GM Core's tables (Daomephsta/ttrpg_scribe
# @ 6a60932e, creature/statistics.py; `scripts/build_creature_tables.py --cross-check-git` compares all 1066
# cells it shares with the data file: no differences)
@pytest.mark.parametrize("tid,level,expected", [
    ("perception", 3, {"extreme": 14, "high": 12, "moderate": 9, "low": 6, "terrible": 4}),
    ("perception", 24, {"extreme": 46, "high": 42, "moderate": 38, "low": 36, "terrible": 32}),
    ("saving-throws", 10, {"extreme": 24, "high": 22, "moderate": 19, "low": 16, "terrible": 14}),
    ("skills", 3, {"extreme": 13, "high": 10, "moderate": 9, "low": [5, 7]}),
    ("skills", -1, {"extreme": 8, "high": 5, "moderate": 4, "low": [1, 2]}),
    ("hit-points", 3, {"high": [53, 59], "moderate": [42, 48], "low": [31, 37]}),
    ("hit-points", 24, {"high": [617, 633], "moderate": [492, 508], "low": [367, 383]}),
    ("strike-attack-bonus", 23, {"extreme": 44, "high": 42, "moderate": 40, "low": 35}),
    ("attribute-modifiers", -1, {"extreme": None, "high": 3, "moderate": 2, "low": 0}),
    ("attribute-modifiers", 24, {"extreme": 13, "high": 12, "moderate": 9, "low": 7}),
    ("strike-damage", 4, {"extreme": {"dice": "2d10+7", "mean": 18}, "high": {"dice": "2d8+5", "mean": 14},
                          "moderate": {"dice": "2d6+5", "mean": 12}, "low": {"dice": "2d4+4", "mean": 9}}),
    ("resistances-weaknesses", 0, {"maximum": 3, "minimum": 1}),
])
def test_rows_as_printed(tid, level, expected):
    assert {c: tables.cell(tid, level, c) for c in expected} == expected


def test_every_building_table_has_book_page_and_every_level():
    for tid, t in tables.data()["building"].items():
        assert t["book"] == "Pathfinder GM Core" and t["page"], tid
        assert sorted(int(k) for k in t["levels"]) == list(range(-1, 25)), tid
        assert tables.building_citation(tid).label().startswith("Table 2-")


def _rule(entry_id: str) -> dict:
    with gzip.open(corpus_dir() / "rules.jsonl.gz", "rt", encoding="utf-8") as fh:
        return next(d for d in map(json.loads, fh) if d["id"] == entry_id)


def test_encounter_tables_match_the_corpus_pages():
    budget_text = _rule("pf2e:rule:gm-screen--encounter-budget")["text"]
    for threat, (b, adj) in {"trivial": (40, 10), "low": (60, 20), "moderate": (80, 20), "severe": (120, 30), "extreme": (160, 40)}.items():
        row = tables.data()["encounter"]["encounter-budget"]["threats"][threat]
        assert (row["budget"], row["per_character"]) == (b, adj)
        assert f"| {threat.capitalize()} | {b}" in budget_text
    xp_text = _rule("pf2e:rule:gm-screen--xp-awards")["text"]
    for delta, xp in {-4: 10, -3: 15, -2: 20, -1: 30, 0: 40, 1: 60, 2: 80, 3: 120, 4: 160}.items():
        assert tables.creature_xp(5 + delta, 5) == xp
        assert f"{xp} XP |" in xp_text
    assert tables.budget_citation().page == "75"


def test_table_markdown_as_printed():
    md = tables.table_markdown("skills", [3])
    assert "| 3 | +13 | +10 | +9 | +7 to +5 |" in md and md.endswith("Source: Table 2-3: Skills (Pathfinder GM Core)")
    assert "| 3 | 59 to 53 | 48 to 42 | 37 to 31 |" in tables.table_markdown("hit-points", [3])
    assert "| 0 | — | +3 | +2 | +0 |" in tables.table_markdown("attribute-modifiers", [0])
    assert tables.table_markdown("armor-class").count("\n| ") == 1 + 26  # header + levels -1..24
