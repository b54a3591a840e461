"""``gmprep books``: generated rulebook PDFs (fpdf2) read back exactly, exports, and the store side.

The PDFs come from ``bench/books_pdf.py``, which lays the pages out itself and so knows where every
heading, sidebar, table and stat block landed: the tree and the pages are checked against that truth.
"""

from __future__ import annotations

import importlib.util
import random
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from gmprep.cli import main
from gmprep.common.errors import GmprepError
from gmprep.common.settings import Settings
from gmprep.ingest.books.markup import parse_html, parse_markdown
from gmprep.ingest.books.pdf import parse_pdf
from gmprep.ingest.books.store import add_book, list_books, remove_book
from gmprep.kg.store import Store

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("books_pdf", REPO / "bench" / "books_pdf.py")
gen = importlib.util.module_from_spec(_spec)
sys.modules["books_pdf"] = gen  # dataclasses look their module up while the class is made
_spec.loader.exec_module(gen)
Section, Chapter = gen.Section, gen.Chapter


def _chapters() -> list:
    rng = random.Random(3)
    conditions = gen.conditions_chapter(rng)
    conditions.sections[9].sidebar = "Fear Stacks?"  # under Frightened
    rules = Chapter("Playing the Game", [
        Section("Checks", 2, paragraphs=3, table=True, children=[
            Section("Multiple Attack Penalty", 3, paragraphs=2),
            Section("Degrees of Success", 3, paragraphs=2, sidebar="Rounding Off"),
        ]),
        Section("Sample Creatures", 2, paragraphs=1, statblock="Goblin Warrior"),
        Section("Afflictions", 2, paragraphs=4, children=[Section("Poison Stages", 3, paragraphs=3, table=True)]),
    ])
    return [conditions, rules]


@pytest.fixture(scope="module")
def book(tmp_path_factory) -> tuple[Path, dict]:
    """A two-column "Pathfinder Player Core" with page labels (i, ii, 1, 2 ...) and a metadata title."""
    path = tmp_path_factory.mktemp("books") / "player-core.pdf"
    truth = gen.write_book(path, "Pathfinder Player Core", _chapters())
    return path, truth


@pytest.fixture(scope="module")
def tree(book):
    return parse_pdf(book[0])


def _flat(tree) -> list[tuple[str, int, str | None]]:
    return [(s.title, s.level, s.page) for s in tree.walk() if s.kind == "heading"]


def test_pdf_tree_levels_and_pages_exactly(tree, book):
    _, truth = book
    assert tree.title == "Pathfinder Player Core"
    assert _flat(tree) == [(h["title"], h["level"], h["page"]) for h in truth["headings"]]
    # nesting follows the levels: the conditions are the sections of chapter 1
    assert [s.title for s in tree.sections] == ["Conditions", "Playing the Game"]
    assert [s.title for s in tree.sections[0].children if s.kind == "heading"] == gen.CONDITIONS
    checks = tree.sections[1].children[0]
    assert [c.title for c in checks.children if c.kind == "heading"] == ["Multiple Attack Penalty", "Degrees of Success"]


def test_pdf_reads_each_column_in_order(tree, book):
    """Every section's text starts with its own first words: columns are not interleaved."""
    _, truth = book
    by_title = {s.title: s for s in tree.walk()}
    for h in truth["headings"]:
        assert " ".join(by_title[h["title"]].text.split())[: len(h["starts"])] == h["starts"], h["title"]


def test_pdf_sidebars_are_their_own_nodes_under_their_section(tree, book):
    _, truth = book
    sidebars = [(s.title, s.page) for s in tree.walk() if s.kind == "sidebar"]
    assert sidebars == [(s["title"], s["page"]) for s in truth["sidebars"]]
    frightened = next(s for s in tree.walk() if s.title == "Frightened")
    side = [c for c in frightened.children if c.kind == "sidebar"]
    assert [c.title for c in side] == ["Fear Stacks?"]
    want = " ".join(truth["sidebars"][0]["text"].split())
    assert " ".join(side[0].text.split()) == want
    assert "Fear Stacks?" not in frightened.text  # the box's text is not also in the section


def test_pdf_tables_and_stat_blocks_stay_text_under_their_heading(tree, book):
    _, truth = book
    by_title = {s.title: s for s in tree.walk()}
    checks = by_title["Checks"].text
    for row in truth["tables"][0]["rows"]:
        assert " | ".join(row) in checks  # one table row per line, cells in order
    sample = by_title["Sample Creatures"]
    assert "GOBLIN WARRIOR | CREATURE" in sample.text and "Perception +" in sample.text
    assert not sample.children  # the stat block's name line is not a heading


def test_pdf_running_headers_and_footers_are_dropped(tree):
    for s in tree.walk():
        assert "Pathfinder Player Core" not in s.text
        assert not any(line.strip().isdigit() for line in s.text.splitlines())


def test_pdf_numbered_headings_footer_pages_and_title_page(tmp_path):
    """No /PageLabels and no metadata title: pages from the printed footers, title from the title page,
    "Chapter 2: ..." and "2.1 ..." numbering stripped from titles and kept apart."""
    path = tmp_path / "numbered.pdf"
    truth = gen.write_book(path, "Secrets of the Goblin Caves", _chapters(), numbered=True,
                           metadata_title=False, page_labels=False)
    tree = parse_pdf(path)
    assert tree.title == "Secrets of the Goblin Caves"
    assert _flat(tree) == [(h["title"], h["level"], h["page"]) for h in truth["headings"]]
    numbers = [s.number for s in tree.walk() if s.kind == "heading"]
    assert numbers[:3] == ["1", "1.1", "1.2"] and "2.1.2" in numbers


def test_bad_files_give_one_line_errors(tmp_path):
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4\nnot really a pdf")
    with pytest.raises(GmprepError, match="not a readable PDF"):
        parse_pdf(bad)
    scanned = tmp_path / "scanned.pdf"  # pages without a text layer (a scan): refused, with the reason
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.rect(10, 10, 100, 100, style="F")
    pdf.output(str(scanned))
    with pytest.raises(GmprepError, match="no text found"):
        parse_pdf(scanned)
    other = tmp_path / "book.docx"
    other.write_bytes(b"PK")
    assert main(["books", "add", str(other), "--store", str(tmp_path / "s")]) == 1


MARKDOWN = """# Pathfinder Player Core

Front matter.

## Conditions

Conditions change your state.

### Frightened

You're gripped by fear. **Frightened 2** means -2.

### Off-Guard

You take a -2 circumstance penalty to AC.

| Value | Penalty |
|---|---|
| 1 | -1 |

## 9.2 Playing the Game

Checks and so on.
"""

HTML = """<html><head><title>x</title><style>p{}</style></head><body>
<h1>Conditions</h1><p>Conditions change your state.</p>
<h2>Frightened</h2><p>You're gripped by fear.</p><p>Second paragraph.</p>
<h2>Off-Guard</h2><table><tr><th>Value</th><th>Penalty</th></tr><tr><td>1</td><td>-1</td></tr></table>
<h1>Playing the Game</h1><p>Checks.</p></body></html>"""


def test_markdown_and_html_exports_by_their_headings(tmp_path):
    md = tmp_path / "pc.md"
    md.write_text(MARKDOWN)
    t = parse_markdown(md)
    assert t.title == "Pathfinder Player Core" and t.preface == "Front matter."
    assert _flat(t) == [("Conditions", 1, None), ("Frightened", 2, None), ("Off-Guard", 2, None),
                        ("Playing the Game", 1, None)]
    off = t.sections[0].children[1]
    assert "| 1 | -1 |" in off.text and t.sections[1].number == "9.2"
    html = tmp_path / "pc.html"
    html.write_text(HTML)
    h = parse_html(html, title="Pathfinder Player Core")
    assert h.title == "Pathfinder Player Core"
    assert _flat(h) == _flat(t)
    assert h.sections[0].children[0].text == "You're gripped by fear.\nSecond paragraph."
    assert "Value | Penalty" in h.sections[0].children[1].text and "p{}" not in h.preface


@pytest.fixture()
def store_with_book(store_dir, book, tmp_path) -> Path:
    """A private copy of the built store with the generated Player Core added (embedded)."""
    target = tmp_path / "store"
    shutil.copytree(store_dir, target)
    report = add_book(Settings(store_dir=target), book[0], progress=False)
    assert report.nodes_embedded == report.nodes
    return target


@pytest.mark.slow
def test_books_add_gives_bundled_entries_their_page(store_with_book, book):
    _, truth = book
    page_of = {h["title"]: h["page"] for h in truth["headings"]}
    store = Store.open(store_with_book)
    try:
        for cid in ("frightened", "off-guard", "prone"):
            node = store.get(f"pf2e:condition:{cid}")
            assert node.page == page_of[node.name]
            assert node.book == "Pathfinder Player Core"
        # the book's own sections are searchable entries with book and page, linked to the entry
        hits = dict(store.bm25("Multiple Attack Penalty", k=5))
        section = store.get("userbook:pathfinder-player-core/playing-the-game/checks/multiple-attack-penalty")
        assert section.node_id in hits and section.page == page_of["Multiple Attack Penalty"]
        assert section.book == "Pathfinder Player Core" and section.path == ["Pathfinder Player Core", "Playing the Game", "Checks"]
        frightened = store.get("userbook:pathfinder-player-core/conditions/frightened")
        assert ("pf2e:condition:frightened", "ref") in store.neighbors(frightened.node_id, ["ref"])
        assert store.has_embeddings()
    finally:
        store.close()
    settings = Settings(store_dir=store_with_book)
    # a corpus re-ingest (a new gmprep) replaces the bundled nodes: the books' pages come back
    from gmprep.ingest.corpus import CORPUS_ORIGIN
    from gmprep.ingest.pipeline import build_index

    db = sqlite3.connect(store_with_book / "graph.db")
    with db:
        db.execute("UPDATE sources SET digest='stale' WHERE origin=?", (CORPUS_ORIGIN,))
    db.close()
    report = build_index(settings, progress=False, embed=False)
    assert report.corpus_reingested
    store = Store.open(store_with_book)
    try:
        assert store.get("pf2e:condition:frightened").page == page_of["Frightened"]
    finally:
        store.close()
    [info] = list_books(settings)
    assert info.name == "pathfinder-player-core" and info.matched >= 20 and info.pages == truth["pages"]
    remove_book(settings, "pathfinder-player-core")
    db = sqlite3.connect(store_with_book / "graph.db")
    # the bundled page (the corpus has Player Core pages for conditions) is back, not the removed book's
    assert db.execute("SELECT page FROM nodes WHERE node_id='pf2e:condition:frightened'").fetchone() == (
        _bundled_page("pf2e:condition:frightened"),)
    assert db.execute("SELECT count(*) FROM nodes WHERE origin LIKE 'books:%'").fetchone() == (0,)
    with pytest.raises(GmprepError, match="no book named"):
        remove_book(settings, "pathfinder-player-core")


@pytest.mark.slow
def test_books_cli_list_show(store_with_book, capsys):
    assert main(["books", "list", "--store", str(store_with_book)]) == 0
    assert "pathfinder-player-core\tPathfinder Player Core\tpdf" in capsys.readouterr().out
    assert main(["books", "show", "pathfinder-player-core", "--store", str(store_with_book)]) == 0
    out = capsys.readouterr().out
    assert "\n    Frightened  p. " in out and "[sidebar] Fear Stacks?" in out


def _bundled_page(node_id: str) -> str | None:
    import gzip
    import json

    from gmprep.ingest.corpus import corpus_dir

    with gzip.open(corpus_dir() / "conditions.jsonl.gz", "rt") as fh:
        return next(json.loads(line).get("page") for line in fh if json.loads(line)["id"] == node_id)


def _small_corpus(store_dir: Path) -> None:
    """A real store holding a handful of bundled-like entries (ids and books as the corpus has them)."""
    from gmprep.kg.models import Node

    def entry(nid: str, name: str, typ: str, book: str, page: str | None = None) -> Node:
        return Node(node_id=nid, source_id=nid, kind="entry", name=name, type=typ, book=book, page=page,
                    origin="corpus:pf2e")

    nodes = [
        entry("pf2e:condition:frightened", "Frightened", "condition", "Pathfinder Player Core"),
        entry("pf2e:condition:off-guard", "Off-Guard", "condition", "Pathfinder Player Core", page="999"),
        entry("pf2e:spell:shield", "Shield", "spell", "Pathfinder Player Core"),
        entry("pf2e:equipment:shield", "Shield", "equipment", "Pathfinder Player Core"),
        entry("pf2e:trait:exploration", "Exploration", "trait", "Pathfinder trait glossary"),
        entry("pf2e:rule:treasure", "Treasure", "rule", "Pathfinder GM Core", page="59"),
        entry("pf2e:condition:dying", "Dying", "condition", "Pathfinder Player Core"),
        # the book's own rules-prose section of that name (ingest/aon_rules.py)
        entry("pf2e:rule:player-core--dying", "Dying", "rule", "Pathfinder Player Core", page="411"),
    ]
    with Store.open(store_dir) as store:
        store.replace_origin("corpus:pf2e", nodes, [], "test")


MATCH_MD = """# Pathfinder Player Core

## Conditions

### Frightened

Fear.

### Off-Guard

Open to attack.

## Spells

### Shield

A spell.

## Exploration

Not the trait.

## Treasure

Loot.

## Dying

Near death.

## Equipment

### Shield

Ambiguous only without its chapter.
"""


def test_matching_by_name_and_chapter_and_restoring_pages(tmp_path):
    store_dir = tmp_path / "store"
    _small_corpus(store_dir)
    md = tmp_path / "pc.md"
    md.write_text(MATCH_MD)
    settings = Settings(store_dir=store_dir)
    report = add_book(settings, md, embed=False, progress=False)
    again = add_book(settings, md, embed=False, progress=False)  # re-adding replaces, never duplicates
    assert (again.nodes, again.matched) == (report.nodes, report.matched)
    with Store.open(store_dir) as store:
        refs = {src.split("/", 1)[1]: dst for src, dst, kind in store.db.execute(
            "SELECT src, dst, kind FROM edges WHERE origin='books:pathfinder-player-core' AND kind='ref'")}
        # Shield under Spells is the spell, under Equipment the item; "Exploration" is not the trait;
        # Treasure (a unique name) is linked but keeps GM Core's page: this book is not GM Core
        assert refs == {
            "conditions/frightened": "pf2e:condition:frightened", "conditions/off-guard": "pf2e:condition:off-guard",
            "spells/shield": "pf2e:spell:shield", "treasure": "pf2e:rule:treasure",
            "equipment/shield": "pf2e:equipment:shield",
            "dying": "pf2e:condition:dying",  # the condition, not the rules-prose section of the same name
        }
        assert store.get("pf2e:rule:treasure").page == "59"
        assert store.get("pf2e:condition:frightened").page is None  # markdown exports have no pages
    assert len(list_books(settings)) == 1
    remove_book(settings, "pathfinder-player-core")


def test_a_pdf_page_replaces_the_entrys_page_until_removed(tmp_path, book):
    path, truth = book
    store_dir = tmp_path / "store"
    _small_corpus(store_dir)
    settings = Settings(store_dir=store_dir)
    add_book(settings, path, embed=False, progress=False)
    page = next(h["page"] for h in truth["headings"] if h["title"] == "Off-Guard")
    with Store.open(store_dir) as store:
        assert store.get("pf2e:condition:off-guard").page == page != "999"
    remove_book(settings, "pathfinder-player-core")
    with Store.open(store_dir) as store:
        assert store.get("pf2e:condition:off-guard").page == "999"
