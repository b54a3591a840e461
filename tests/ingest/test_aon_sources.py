"""Archives of Nethys source pages -> the names other books list (ingest/aon_sources.py)."""

from __future__ import annotations

from gmprep.ingest.aon_sources import (
    parse_adventure_groups,
    parse_class_page,
    parse_publication,
    parse_rules_page,
    parse_source_page,
    read_publications_tsv,
    read_tsv,
    write_publications,
    write_tsv,
)

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


VOLUME_PAGE = """# Pathfinder #151: The Show Must Go On - Sources - Archives of Nethys: Pathfinder 2nd Edition Database

---

# [Pathfinder #151: The Show Must Go On](./Sources.aspx-ID=21.md)

Product Page Paizo Store
Release Date 1/30/2020
Product Line Adventure Paths
Source Group [Extinction Curse](../Setting/Setting.aspx-Group=3.md)

## Feats [1]

Juggle
"""

ADVENTURES_PAGE = """# Setting - Archives of Nethys: Pathfinder 2nd Edition Database

# [Adventures](./Setting.aspx-Adventure=true.md) | [Articles](../Article/Articles.aspx.md) | [Scenarios](./Setting.aspx-Group=40.md)

## [Abomination Vaults](./Setting.aspx-Group=6.md) | [Book of the Dead](./Setting.aspx-Group=17.md) | [Kingmaker](./Setting.aspx-Group=23.md)

---
"""


def test_a_source_page_gives_its_publication_and_the_adventure_path_it_belongs_to(tmp_path):
    pub = parse_publication(VOLUME_PAGE, "p.md", "abc")
    assert pub is not None
    assert (pub.title, pub.line, pub.group) == ("Pathfinder #151: The Show Must Go On", "Adventure Paths",
                                                "Extinction Curse")
    assert parse_publication(PAGE).group == ""  # a book of no group
    assert parse_publication("# Sources\n") is None
    # the Adventures page's groups, not its navigation
    groups = parse_adventure_groups(ADVENTURES_PAGE)
    assert [(g.title, g.group) for g in groups] == [("Abomination Vaults", "Abomination Vaults"),
                                                   ("Book of the Dead", "Book of the Dead"), ("Kingmaker", "Kingmaker")]
    path = tmp_path / "p.tsv"
    assert write_publications([pub, *groups, pub], path) == 4
    assert sorted(read_publications_tsv(path), key=lambda p: p.title) == sorted([pub, *groups], key=lambda p: p.title)


RULES_PAGE = """# Chapter 4: Variant Rules - Rules - Archives of Nethys: Pathfinder 2nd Edition Database

Source HTML: `docs/aonprd/Rules.aspx-ID=1297&NoRedirect=1.htm`

# [Rules Index](./Rules.aspx.md) | [GM Screen](../GMScreen/GMScreen.aspx.md)

---

# Chapter 4: Variant Rules

Source Gamemastery Guide pg. 181

While the rules presented in the Core Rulebook are designed ...

## Feats and Features

### [Dual-Class PCs](./Rules.aspx-ID=1327.md)

Source [Core Rulebook pg. 453](../Source/Sources.aspx-ID=1.md)

### Alignment Damage
"""


def test_a_rules_page_heads_its_sections_under_the_book_of_the_source_above_them():
    rows = parse_rules_page(RULES_PAGE, "knowledge/Rules/Rules.aspx-ID=1297&NoRedirect=1.md", "abc")
    assert [(r.book, r.name) for r in rows] == [
        ("Gamemastery Guide", "Chapter 4: Variant Rules"),  # the page's title, under its first source
        ("Gamemastery Guide", "Feats and Features"),
        ("Gamemastery Guide", "Dual-Class PCs"),  # a linked heading, unwrapped
        ("Core Rulebook", "Alignment Damage"),  # below a later source line: that book's
    ]
    assert {r.category for r in rows} == {"Rules Sections"} and rows[0].path.endswith("NoRedirect=1.md")
    assert parse_rules_page("# A page\n\n## No source line\n") == []
