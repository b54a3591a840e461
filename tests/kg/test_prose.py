"""Markdown as prose (kg.prose): what is read, what is masked, and that every kept character sits
exactly where it is in the document (UTF-16, CRLF, front matter included)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gmprep.ingest.corpus import load_corpus
from gmprep.kg.names import NameIndex
from gmprep.kg.note_scan import NoteScanner, lsp_position
from gmprep.kg.prose import MASK, front_matter_end, line_starts, parse_chunk, split_chunks


@pytest.fixture(scope="module")
def names():
    return NameIndex.build(n for n in load_corpus().nodes if n.kind == "entry")


def masked(text: str) -> str:
    """The whole note's masked text, chunk by chunk, as the scanner builds it."""
    fm = front_matter_end(text)
    out = []
    for a, b in split_chunks(text):
        out.append(parse_chunk(text[a:b], front_matter=(a == 0 and fm > 0)).text)
    return "".join(out)


def visible(text: str) -> str:
    return " ".join(masked(text).replace(MASK, " ").split())


def check_aligned(text: str) -> str:
    m = masked(text)
    assert len(m) == len(text)
    for a, b in zip(text, m, strict=True):
        assert b == MASK or a == b  # every kept character is the document's own
        assert (a == "\n") == (b == "\n")  # line breaks never move
    return m


@pytest.mark.parametrize(
    ("note", "seen", "unseen"),
    [
        ('<div class="trip">\n  <span>frightened 2</span>\n</div>\n\nThe troll is frightened 2.\n',
         ["troll is frightened 2"], ["div", "span", "class"]),
        ("Use `Trip` here.\n\n```\nfrightened 3\n```\n\n    indented code Stride\n", ["Use", "here"],
         ["Trip", "frightened", "Stride"]),
        ("---\ntitle: Fireball notes\ntags: [trip]\n---\n# Heading Trip\n", ["Heading Trip"], ["title", "Fireball", "tags"]),
        ("+++\ntitle = 'Fireball'\n+++\nSee Stride.\n", ["See Stride."], ["Fireball"]),
        ("See [the Trip rules](https://example.com/trip-rules \"Trip\") and <https://x.org/fireball>.\n",
         ["See [the Trip rules] and"], ["example", "fireball"]),
        ("A [[Fireball Notes|fireball]] and [[Stride]] and ![[map.png]] and ![alt Trip](img/trip.png).\n",
         ["A fireball and Stride and and ."], ["Notes", "map", "alt", "img"]),
        ("Mail gm@fireball.com or www.trip.org/stride now.\n", ["Mail or now."], ["gm", "trip", "stride"]),
        ("Inline <b class='fireball'>bold</b> html and \\*stars\\* &amp; more.\n", ["Inline bold html and stars more."],
         ["class", "amp"]),
        ("| Name | Note |\n|---|---|\n| Trip | `code` *Stride* |\n", ["Name", "Trip", "*Stride*"], ["code", "---"]),
        ("> quote with *Trip*\n> lazy line\n\n- item one\n  continued\n1. numbered Stride\n",
         ["quote with *Trip*", "lazy line", "item one", "continued", "numbered Stride"], []),
    ],
)
def test_what_is_read_and_what_is_not(note, seen, unseen):
    check_aligned(note)
    v = visible(note)
    for s in seen:
        assert s in v, (s, v)
    for s in unseen:
        assert s not in v, (s, v)


def test_crlf_and_utf16_offsets_map_exactly():
    note = "---\r\ntitle: x\r\n---\r\n# Cast 🐉 *fireball*\r\n\r\nThe 🐲 troll is frightened 2.\r\n"
    m = check_aligned(note)
    i = m.index("frightened 2")
    assert note[i:i + 12] == "frightened 2"
    starts = line_starts(note)
    line, char = lsp_position(note, starts, i)
    assert line == 5
    # the dragon is one Python character and two UTF-16 units
    assert char == len("The 🐲 troll is ") + 1


def test_headings_regions_and_emphasis_are_reported():
    chunk = "## Ambush at the *Bridge*\n\n- **Trip** the goblin\n\n| a |\n|---|\n| [Stride](x) |\n"
    fm = 0
    regions, bold, links, headings = [], [], [], []
    for a, b in split_chunks(chunk):
        p = parse_chunk(chunk[a:b], front_matter=fm > 0)
        regions += [(r.in_heading, r.in_list_item, r.in_table_cell, chunk[a + r.start:a + r.end]) for r in p.regions]
        bold += [chunk[a + s:a + e] for s, e in p.bold]
        links += [chunk[a + s:a + e] for s, e in p.links]
        headings += [(lvl, t) for _, lvl, t in p.headings]
    assert (True, False, False, "Ambush at the *Bridge*") in regions
    assert (False, True, False, "**Trip** the goblin") in regions
    assert bold == ["Trip"] and links == ["Stride"]
    assert headings == [(2, "Ambush at the Bridge")]


def test_chunks_cut_at_blank_lines_but_not_inside_fences_comments_or_continuations():
    note = "a\n\n```\nx\n\ny\n```\n\n<!--\nc\n\nd\n-->\n\n- item\n\n  more of item\n\nb\n"
    chunks = [note[a:b] for a, b in split_chunks(note)]
    assert "".join(chunks) == note
    assert chunks[0] == "a\n\n"
    assert chunks[1] == "```\nx\n\ny\n```\n\n"
    assert chunks[2] == "<!--\nc\n\nd\n-->\n\n"
    assert chunks[3] == "- item\n\n  more of item\n\n"
    assert chunks[4] == "b\n"


def test_directives_are_found_in_html_blocks_and_inline():
    note = "<!-- gmprep-ignore-next-line -->\nTrip\n\ntext <!-- gmprep-ignore --> more\n\n<!-- gmprep-ignore-end -->\n"
    kinds = []
    for a, b in split_chunks(note):
        kinds += [k for _, k in parse_chunk(note[a:b]).directives]
    assert kinds == ["ignore-next-line", "ignore", "ignore-end"]


# Pieces of markdown (and of broken markdown) a note may hold, glued at random: whatever the mix,
# the masked text keeps every kept character in its place and every found name is the document's text.
_PIECES = [
    "Trip", "frightened 2", "*fireball*", "**Stride**", "the troll", " ", "\n", "\r\n", "\n\n", "- ", "1. ", "> ",
    "# ", "| a | b |\n|---|---|\n| Trip | x |\n", "```\n", "~~~", "`", "``", "<div>", "</div>", "<!--", "-->",
    "<!-- gmprep-ignore -->", "<!-- gmprep-ignore-next-line -->\n", "[", "]", "(", ")", "[[", "]]", "|", "![",
    "https://x.org/a_b", "a@b.co", "\\*", "&amp;", "&#x1F409;", "🐉", "é", "\t", "---\n", "+++\n", "    ",
    "[ref]: https://r.org\n", "[t][ref]", "<http://y.z>", "_", "~~", "Hunted Prey", "elven",
]


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_any_mix_of_markdown_maps_exactly(pieces):
    text = "".join(pieces)
    check_aligned(text)


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_mentions_are_the_documents_own_text(names, pieces):
    text = "".join(pieces)
    for m in NoteScanner(names).scan(text).mentions:
        assert text[m.start:m.end] == m.text


def test_a_block_quote_is_one_chunk_until_a_blank_line():
    note = "> one line\n> and the next\n\n> a new quote\nlazy line\n"
    chunks = [note[a:b] for a, b in split_chunks(note)]
    assert chunks == ["> one line\n> and the next\n\n", "> a new quote\nlazy line\n"]


def test_a_long_quote_is_cut_at_its_empty_lines():
    # a 300-line quote is not one chunk to rescan on every keystroke: its paragraphs are
    note = "> first paragraph\n> goes on\n>\n> second paragraph\n"
    chunks = [note[a:b] for a, b in split_chunks(note)]
    assert chunks == ["> first paragraph\n> goes on\n>\n", "> second paragraph\n"]
