"""Archives of Nethys source pages -> the names other books list (ingest/aon_sources.py)."""

from __future__ import annotations

from gmprep.ingest.aon_sources import parse_class_page, parse_source_page, read_tsv, write_tsv

PAGE = """# Grand Bazaar - Sources - Archives of Nethys: Pathfinder 2nd Edition Database

Source HTML: `docs/aonprd/Sources.aspx-ID=100.htm`

---

# [Grand Bazaar](./Sources.aspx-ID=100.md)

Product Page Paizo Store
Release Date 10/13/2021
Product Line Lost Omens

## Ancestries [1]

[Poppet](../Ancestry/Ancestries.aspx-ID=49.md)

## Animal Companions [2]

Capybara, Terror Bird

## Monsters [3]

Golgopo, Karumzek, +7 with potential spoilers, click here to view all.

## Equipment [2]

[Shield Augmentation](../Equipment/Equipment.aspx-ID=1.md), Barricade Stone (Cube)
"""


def test_a_source_page_lists_its_entries_by_category_without_people_and_creatures():
    rows = parse_source_page(PAGE, "knowledge/Source/Sources.aspx-ID=100.md", "abc")
    got = [(r.category, r.name) for r in rows]
    assert got == [("Ancestries", "Poppet"), ("Animal Companions", "Capybara"), ("Animal Companions", "Terror Bird"),
                   ("Equipment", "Shield Augmentation"), ("Equipment", "Barricade Stone (Cube)")]
    assert {(r.book, r.line, r.path, r.commit) for r in rows} == {
        ("Grand Bazaar", "Lost Omens", "knowledge/Source/Sources.aspx-ID=100.md", "abc")}


def test_a_page_without_a_book_title_lists_nothing():
    assert parse_source_page("# Sources\n\n## Feats [1]\n\nPower Attack\n") == []


def test_the_catalogue_round_trips_and_is_byte_stable(tmp_path):
    rows = parse_source_page(PAGE)
    a, b = tmp_path / "a.tsv.gz", tmp_path / "b.tsv.gz"
    assert write_tsv(rows + rows, a) == len(rows)  # one row per book, category and name
    write_tsv(list(reversed(rows)), b)
    assert a.read_bytes() == b.read_bytes()
    assert sorted(read_tsv(a), key=lambda r: r.name) == sorted(rows, key=lambda r: r.name)


CLASS_PAGE = """# Psychic - Classes - Archives of Nethys: Pathfinder 2nd Edition Database

Source [Dark Archives (Remastered) pg. 9](../Source/Sources.aspx-ID=293.md)

# Roleplaying the Psychic

## During Combat Encounters...

# Class Features

## Attribute Boosts

## Unleash Psyche

### Unleash Psyche [free-action]

## Clarity of FocusLevel 5
"""


def test_a_class_page_lists_its_features_under_its_book():
    rows = parse_class_page(CLASS_PAGE, "knowledge/Class/Classes.aspx-ID=68.md", "abc")
    assert [r.name for r in rows] == ["Attribute Boosts", "Unleash Psyche", "Unleash Psyche", "Clarity of Focus"]
    assert {(r.book, r.category) for r in rows} == {("Dark Archives (Remastered)", "Class Features")}
    assert parse_class_page(CLASS_PAGE.replace("# Class Features", "# Other")) == []
