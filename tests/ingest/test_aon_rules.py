"""Rules prose sections from saved Archives of Nethys rules pages (MihanEntalpo/pathfinder-2-ui)."""

import gzip
import json

from gmprep.ingest.aon_rules import (
    RulesSection,
    add_rules_prose,
    entry_ids,
    is_prose_id,
    merge,
    parse_rules_page,
    read_transcription,
    write_transcription,
)
from gmprep.ingest.corpus import corpus_dir
from gmprep.kg.models import Node
from gmprep.kg.names import NameIndex

# Generated pages of the saved pages' shape (docs/aonprd/Rules.aspx-ID=2263&NoRedirect=1.htm, a chapter page, and
# Rules.aspx-ID=2375.htm, one section's page @ 5d599caf): site menu, breadcrumbs, nested <div class="rule">
# sections whose headings link to their own page, a source line on the chapter and on the own page only, a
# table, a list, a sidebar, an embedded action stat block and the footer. The text is made up for the test.
_MENU = """<html><head><script>var x = "<div class='rule'>";</script></head><body><div class="menutitle"><h1>
Archives of Nethys</h1></div><div class="main" id="main"><h1 style="text-align:center" class="hide-on-print">
<a href="Rules.aspx.htm">Rules Index</a> | <a href="GMScreen.aspx.htm">GM Screen</a></h1><hr class="hide-on-print" />"""
_FOOTER = """</div><div class="footer">Archives of Nethys is not affiliated with anyone in this test.</div></body></html>"""


def _rule(level: int, ident: int, title: str, body: str, source: str = "", children: str = "") -> str:
    src = (f'<div class="sources"><strong>Source</strong> <a href="Sources.aspx-ID=216.htm" class="link '
           f'link-source">{source}</a></div>') if source else ""
    return (f'<div class="rule"><h{level} class="title"><a href="Rules.aspx-ID={ident}.htm" '
            f'tppabs="https://2e.aonprd.com/Rules.aspx?ID={ident}">{title}</a> </h{level}>{src}<div>{body}</div>'
            f"{children}</div>")


_STEP = _rule(3, 12, "Pushing Together",
              "Two allies on opposite sides of a foe <b>push together</b>.<br /><br />Both must be able to act."
              '<div class="calledAction"><h3 class="title"><a href="Actions.aspx-ID=1.htm">Shove</a></h3>'
              "<b>Source</b> <i>Player Core pg. 1</i><hr />An embedded action stat block.</div>"
              '<div class="sidebars"><div class="sidebar-nofloat"><h2>Tiny Pushers</h2><div class="sidebar-content">'
              "Tiny creatures push only in their own square.</div></div></div>")
_CHAPTER = _MENU + _rule(
    1, 10, "Chapter 9: Test Rules", "This chapter is a test.", "Player Core pg. 500",
    _rule(2, 11, "Moving Things", "Things move.<h2>Move Table</h2><table class=\"inner\"><tr><td><b>Size</b></td>"
          "<td><b>Penalty</b></td></tr><tr><td>Small</td><td>-1</td></tr><tr><td>Large</td><td>-2</td></tr></table>"
          "<ul><li>First point.</li><li>Second <i>point</i>.</li></ul>", children=_STEP)
    + _rule(2, 13, "Golarion and the Inner Sea", "Setting prose left out.")
    + _rule(2, 14, "Resting", "Rest heals.")) + _FOOTER
_OWN = _MENU + """<div class="rule-ancestors hide-on-print"><span class="rule-ancestor">Player Core</span>
<span class="rule-ancestor"><a href="Rules.aspx-ID=10.htm">Chapter 9: Test Rules</a></span>
<span class="rule-ancestor"><a href="Rules.aspx-ID=11.htm">Moving Things</a></span></div>
<div class="sibling-navigation hide-on-print"><a href="Rules.aspx-ID=11.htm">&lt;&lt; Moving Things</a></div>""" + \
    _STEP.replace("<h3", "<h1").replace("</h3> <div", "</h1> <div").replace(
        '</a> </h3><div>Two', '</a> </h1><div class="sources"><strong>Source</strong> <a class="link">Player Core '
        'pg. 502</a></div><div>Two') + _FOOTER
_LEGACY = _MENU + _rule(1, 99, "Flanking", "Old text.", "Core Rulebook pg. 476") + _FOOTER


def test_chapter_page_gives_nested_sections_with_parents_and_markdown():
    secs = parse_rules_page(_CHAPTER, "docs/aonprd/Rules.aspx-ID=10&NoRedirect=1.htm", "c0ffee")
    assert [(s.aon_id, s.title, s.parents) for s in secs] == [
        (10, "Chapter 9: Test Rules", []),
        (11, "Moving Things", ["Chapter 9: Test Rules"]),
        (12, "Pushing Together", ["Chapter 9: Test Rules", "Moving Things"]),
        (14, "Resting", ["Chapter 9: Test Rules"]),
    ]  # the setting section is left out
    assert [(s.book, s.page, s.page_printed) for s in secs[:2]] == [("Player Core", 500, True), ("Player Core", None, False)]
    moving = secs[1].text
    assert "| Size | Penalty |\n|---|---|\n| Small | -1 |\n| Large | -2 |" in moving
    assert "**Move Table**" in moving and "- First point." in moving and "- Second point." in moving
    push = secs[2].text
    assert push.startswith("Two allies on opposite sides of a foe **push together**.\n\nBoth must be able to act.")
    assert "**Tiny Pushers**\n\nTiny creatures push only in their own square." in push
    assert "embedded action" not in push and "Shove" not in push
    assert all("Archives of Nethys" not in s.text and "Rules Index" not in s.text for s in secs)


def test_own_page_takes_breadcrumbs_and_its_source_line():
    (sec,) = parse_rules_page(_OWN, "docs/aonprd/Rules.aspx-ID=12.htm", "c0ffee")
    assert (sec.aon_id, sec.title, sec.book, sec.page, sec.page_printed) == (12, "Pushing Together", "Player Core", 502, True)
    assert sec.parents == ["Chapter 9: Test Rules", "Moving Things"]
    assert "Moving Things" not in sec.text and "&lt;" not in sec.text


def test_other_books_give_nothing():
    assert parse_rules_page(_LEGACY, "docs/aonprd/Rules.aspx-ID=99.htm", "c0ffee") == []


def test_merge_keeps_one_section_per_id_with_the_nearest_printed_page():
    chapter = parse_rules_page(_CHAPTER, "docs/aonprd/Rules.aspx-ID=10&NoRedirect=1.htm", "c0ffee")
    own = parse_rules_page(_OWN, "docs/aonprd/Rules.aspx-ID=12.htm", "c0ffee")
    merged = {s.aon_id: s for s in merge(chapter + own)}
    assert sorted(merged) == [10, 11, 12, 14]
    # 11 prints no page: the chapter's, printed before it; 14 follows 12, whose own page prints 502
    assert [(merged[i].page, merged[i].page_printed) for i in (10, 11, 12, 14)] == [
        (500, True), (500, False), (502, True), (502, False)]
    assert merged[12].parents == ["Chapter 9: Test Rules", "Moving Things"]


def test_transcription_round_trip_and_entries(tmp_path):
    secs = merge(parse_rules_page(_CHAPTER, "docs/aonprd/Rules.aspx-ID=10&NoRedirect=1.htm", "c0ffee"))
    path = tmp_path / "rules.jsonl.gz"
    write_transcription(secs, path)
    first = path.read_bytes()
    write_transcription(read_transcription(path), path)
    assert path.read_bytes() == first
    assert [(s.aon_id, s.page, s.text) for s in read_transcription(path)] == [(s.aon_id, s.page, s.text) for s in secs]
    other = {"id": "pf2e:action:rest", "name": "Resting", "type": "action", "fields": {}}
    records, clash = add_rules_prose([other], secs)
    assert clash == [] and records[0] is other
    rest = records[-1]
    assert rest["id"] == "pf2e:rule:player-core--resting" and rest["book"] == "Pathfinder Player Core"
    assert rest["section"] == ["Chapter 9: Test Rules", "Resting"] and rest["page"] == "500"
    assert rest["source"]["url"] == "https://2e.aonprd.com/Rules.aspx?ID=14"
    again, _ = add_rules_prose(records, secs)
    assert again == records  # a rerun replaces its own entries with the same


def test_same_title_twice_in_a_book_gets_distinct_ids():
    a = RulesSection(1, "Treasure", "GM Core", 10, False, ["Chapter 1"], "short", "p", "c")
    b = RulesSection(2, "Treasure", "GM Core", 50, True, ["Chapter 2", "Rewards"], "longer text", "p", "c")
    c = RulesSection(3, "Treasure", "GM Core", 60, False, ["Chapter 2", "Rewards"], "x", "p", "c")
    assert entry_ids([a, b, c]) == {2: "pf2e:rule:gm-core--treasure", 1: "pf2e:rule:gm-core--chapter-1--treasure",
                                     3: "pf2e:rule:gm-core--rewards--treasure"}
    assert is_prose_id("pf2e:rule:gm-core--treasure") and not is_prose_id("pf2e:rule:gm-screen--treasure")


def test_prose_sections_are_not_hover_names():
    def node(nid: str, name: str, typ: str, **fields) -> Node:
        return Node(node_id=nid, source_id=nid, kind="entry", name=name, type=typ, fields=fields)

    idx = NameIndex.build([node("pf2e:condition:dying", "Dying", "condition"),
                           node("pf2e:rule:player-core--dying", "Dying", "rule", hover_name=False),
                           node("pf2e:rule:player-core--flanking", "Flanking", "rule", hover_name=False)])
    found = {m.node_id for m in idx.find_mentions("She is Dying 2 after the Flanking attack.")}
    assert found == {"pf2e:condition:dying"}


def _bundled_rules() -> dict[str, dict]:
    with gzip.open(corpus_dir() / "rules.jsonl.gz", "rt") as fh:
        return {r["id"]: r for r in map(json.loads, fh)}


def test_bundled_corpus_has_the_core_rules_prose():
    rules = _bundled_rules()
    flank = rules["pf2e:rule:player-core--flanking"]
    assert (flank["name"], flank["book"], flank["page"]) == ("Flanking", "Pathfinder Player Core", "425")
    assert "opposite sides" in flank["text"] and flank["section"] == ["Chapter 8: Playing the Game", "Movement", "Flanking"]
    assert flank["source"]["path"].startswith("docs/aonprd/Rules.aspx-ID=")
    mapen = rules["pf2e:rule:player-core--multiple-attack-penalty"]
    assert mapen["page"] == "402" and "–5 penalty" in mapen["text"]
    assert any(i.startswith("pf2e:rule:gm-core--") for i in rules)
    assert sum(i.startswith("pf2e:rule:gm-screen--") for i in rules) == 56  # the GM-screen pages stay
    setting = {"Chapter 3: Age of Lost Omens", "Golarion and the Inner Sea", "Example of Play"}
    assert not any(setting & set(r["section"]) for r in rules.values())


def test_wiki_links_resolve_to_the_named_entry_before_a_prose_section(tmp_path):
    from gmprep.kg.store import Store

    def node(nid: str, typ: str, **fields) -> Node:
        return Node(node_id=nid, source_id=nid, kind="entry", name="Perception", type=typ, origin="corpus:pf2e",
                    fields=fields)

    with Store.open(tmp_path) as store:  # the prose section first, as the rules file loads before the skills
        store.replace_origin("corpus:pf2e", [node("pf2e:rule:player-core--perception", "rule", hover_name=False),
                                             node("pf2e:skill:perception", "skill")], [], "test")
        assert store.resolve_name("perception") == "pf2e:skill:perception"
