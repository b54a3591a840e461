"""The Pathfinder 1st Edition titles (``ingest/pf1_sources.py``) and the shipped list
(``core/agents/data/pf1-publications.tsv``, ``scripts/transcribe_pf1_sources.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from gmprep.ingest.aon_sources import read_publications_tsv
from gmprep.ingest.pf1_sources import LINE, parse_sources

DATA = Path(__file__).resolve().parents[2] / "core" / "agents" / "data"


def test_titles_groups_and_what_is_left_out():
    text = json.dumps({
        "unchained": {"title": "Pathfinder Unchained", "url": "u"},
        "row_pg": {"title": "Reign of Winter Player's Guide", "url": "u"},
        "km_pg": {"title": "Kingmaker Player's Guide", "url": "u"},
        "apg": {"title": "Advanced Player's Guide", "url": "u"},
        "blog": {"title": "Paizo Blog - Ultimate Cantrips", "url": "u"},
        "b3": {"title": "Bestiary 3 (2nd Edition)", "url": "u"},
    })
    rows = parse_sources(text, "json/sources.json", "c0ffee", known=["Advanced Player's Guide", "Kingmaker"])
    got = {(r.title, r.group) for r in rows}
    # a 2e title stays the 2e book's; an Adventure Path 2e also has keeps its guide's title, not the group
    assert got == {("Pathfinder Unchained", ""), ("Reign of Winter Player's Guide", "Reign of Winter"),
                   ("Kingmaker Player's Guide", "")}
    assert all(r.line == LINE and r.commit == "c0ffee" for r in rows)


def test_the_shipped_list_has_its_source_and_no_2e_title():
    pf1 = read_publications_tsv(DATA / "pf1-publications.tsv")
    pf2 = {t for r in read_publications_tsv(DATA / "other-publications.tsv") for t in (r.title, r.group) if t}
    assert len(pf1) > 400 and all(r.commit and r.path == "json/sources.json" for r in pf1)
    assert not {r.title for r in pf1} & pf2 and not {r.group for r in pf1 if r.group} & pf2
    assert {"Pathfinder Unchained", "Ultimate Combat"} <= {r.title for r in pf1}
