"""Markdown notes split by heading hierarchy; bad files give a message, not an exception."""

from gmprep.ingest.notes import find_notes, read_note

NOTE = """# House Rules

Intro text.

## Combat

### Critical Fumbles

On a natural 1 you drop your weapon. See [[Off-Guard]] and [the shop](shop.md).

## Downtime

Earn Income works as written.
"""


def test_split_by_headings(tmp_path):
    (tmp_path / "house.md").write_text(NOTE)
    load = read_note(tmp_path / "house.md", tmp_path)
    assert load.error is None
    by_name = {n.name: n for n in load.nodes}
    fumbles = by_name["Critical Fumbles"]
    assert fumbles.path == ["house.md", "House Rules", "Combat"]
    assert fumbles.parent_id == by_name["Combat"].node_id
    assert fumbles.page == "line 7" and fumbles.origin == "notes:house.md"
    assert "drop your weapon" in fumbles.text
    assert ("Off-Guard" in [t for _, t in load.wiki_targets])
    assert any(e.dst == "note:shop.md" and e.kind == "ref" for e in load.edges)
    assert any(e.kind == "next" and e.src == by_name["Combat"].node_id for e in load.edges)


def test_binary_huge_and_unreadable(tmp_path):
    (tmp_path / "bin.md").write_bytes(b"\x00\x01\x02")
    (tmp_path / "big.md").write_text("x" * 3_000_000)
    bad = tmp_path / "locked.md"
    bad.write_text("# Locked")
    bad.chmod(0)
    assert "binary" in read_note(tmp_path / "bin.md", tmp_path).error
    assert "too large" in read_note(tmp_path / "big.md", tmp_path).error
    import os

    if os.geteuid() != 0:  # root can read anything
        assert "cannot read" in read_note(bad, tmp_path).error
    bad.chmod(0o644)


def test_find_notes_skips_hidden(tmp_path):
    (tmp_path / ".gmprep").mkdir()
    (tmp_path / ".gmprep" / "x.md").write_text("# hidden")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "n.md").write_text("# n")
    assert [p.name for p in find_notes(tmp_path)] == ["n.md"]
