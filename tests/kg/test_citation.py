"""``Citation`` is the one owner of how a source is written ("Book, p. N"); every hover, answer,
conversation export and CLI listing goes through it, so the formats are tested here once."""

from __future__ import annotations

import pytest

from gmprep.kg.models import Citation, Hit, Node


def _cite(book: str | None, page: str | None) -> Citation:
    return Citation(source_id="pf2e:condition:prone", name="Prone", type="condition", book=book, page=page)


@pytest.mark.parametrize(("book", "page", "where"), [
    ("Player Core", "83", "Player Core, p. 83"),  # a numeric page
    ("GM Core", "192-195", "GM Core, pp. 192-195"),  # a page range
    ("GM Core", "192\u2013195", "GM Core, pp. 192\u2013195"),  # an en-dash range as a book prints it
    ("Player Core", None, "Player Core"),  # page unknown
    ("Player Core", "", "Player Core"),
    ("notes/session-3.md", "line 12", "notes/session-3.md, line 12"),  # a page that is not a number
    (None, None, "no book"),
    (None, "5", "no book, p. 5"),
])
def test_where_writes_each_kind_of_page(book, page, where):
    assert _cite(book, page).where() == where


def test_label_and_the_hit_and_node_views_agree():
    node = Node(node_id="pf2e:condition:prone", source_id="pf2e:condition:prone", kind="entry", name="Prone",
                type="condition", book="Player Core", page="434")
    hit = Hit(source_id=node.source_id, node_id=node.node_id, name="Prone", type="condition", book="Player Core",
              page="434", score=1.0, text="")
    assert Citation.from_node(node).label() == "Prone (Player Core, p. 434) [pf2e:condition:prone]"
    assert hit.citation() == Citation.from_hit(hit).label() == Citation.from_node(node).label()


def test_the_creators_table_citations_write_pages_the_same_way():
    from gmprep.core.creators.models import Citation as TableCitation

    assert TableCitation(id="t", name="Armor Class", book="GM Core", page="112-113").label() == \
        "Armor Class (GM Core, pp. 112-113)"
    assert TableCitation(id="t", name="Budget", book="GM Core", page=None).label() == "Budget (GM Core)"
