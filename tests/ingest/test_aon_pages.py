"""Condition and action page numbers from the saved Archives of Nethys pages of MihanEntalpo/pathfinder-2-ui."""

import gzip
import json

from gmprep.ingest.aon_pages import AonPage, add_pages, parse_aon_page
from gmprep.ingest.corpus import corpus_dir

# docs/aonprd/Conditions.aspx-ID=76.htm and Actions.aspx-ID=2295.htm @ 5d599caf, verbatim, abridged
FRIGHTENED = (
    '<h1 class="title"><a href="Conditions.aspx.htm" tppabs="https://2e.aonprd.com/Conditions.aspx"><u>Conditions '
    'Index</u></a></h1></span>\r\n<span><h1 class="title"><a href="Conditions.aspx-ID=76.htm" '
    'tppabs="https://2e.aonprd.com/Conditions.aspx?ID=76">Frightened</a></h1><b>Source</b> <a '
    'href="Sources.aspx-ID=216.htm" tppabs="https://2e.aonprd.com/Sources.aspx?ID=216" target="_blank" '
    "class=\"external-link\"><i>Player Core pg. 444</i></a><br />You're gripped by fear"
)
DROP_PRONE = (
    '<h1 class="title"><a href="Actions.aspx-ID=2295.htm" tppabs="https://2e.aonprd.com/Actions.aspx?ID=2295">'
    "Drop Prone</a>  <span class='action' title='Single Action' role='img' aria-label='Single Action'>"
    '[one-action]</span> </h1><span class="trait">Move</span><br /><b>Source</b> <a href="Sources.aspx-ID=216.htm" '
    'tppabs="https://2e.aonprd.com/Sources.aspx?ID=216" target="_blank" class="external-link"><i>Player Core pg. '
    "416</i></a><hr />You fall prone."
)

# docs/aonprd/Feats.aspx-ID=5227.htm, Spells.aspx-ID=1530.htm and Equipment.aspx-ID=2807.htm @ 5d599caf, the
# heading and source line verbatim (images, traits and links abridged)
TOUGHNESS = (
    '<h1 class="title"><a href="Feats.aspx-ID=5227.htm" tppabs="https://2e.aonprd.com/Feats.aspx?ID=5227">Toughness'
    '</a> <span style="margin-left:auto; margin-right:0">Feat 1</span></h1><span class="trait">General</span><br />'
    '<b>Source</b> <a href="Sources.aspx-ID=216.htm" target="_blank" class="external-link"><i>Player Core pg. 263'
    '</i></a><br /><br /><hr />Your body can withstand more punishment.<h2 class="title">Traits</h2>'
)
FIREBALL = (
    '<h1 class="title"><a href ="PFS.aspx.htm" tppabs="https://2e.aonprd.com/PFS.aspx"><span style="float:left;">'
    '</span></a>Fireball  <span class=\'action\' title=\'Two Actions\'>[two-actions]</span> <span style="margin-left:'
    'auto; margin-right:0">Spell 3</span></h1><span class="trait">Fire</span><br /><b>Source</b> <a href="Sources'
    '.aspx-ID=216.htm"><i>Player Core pg. 331</i></a><br /><b>Traditions</b> arcane, primal<hr />A roaring blast.'
)
LIONS_ARMOR = (
    '<h1 class="title"><a href ="PFS.aspx.htm"></a>Lion\'s Armor<span style="margin-left:auto; margin-right:0">'
    'Item 12+</span></h1><br /><b>Source</b> <a href="Sources.aspx-ID=218.htm"><i>GM Core pg. 230</i></a><br />'
    '<b>Usage</b> worn armor<hr />Various parts.<h2 class="title">Lion\'s Armor (Greater)<span style="margin-left:'
    'auto; margin-right:0">Item 19</span></h2><b>Source</b> <a href="Sources.aspx-ID=218.htm"><i>GM Core pg. 230'
    '</i></a><br /><b>Price</b> 30,500 gp<hr />The armor is +3.<h2 class="title">Traits</h2>'
)


def test_saved_page_gives_title_and_source_line():
    [page] = parse_aon_page(FRIGHTENED, "docs/aonprd/Conditions.aspx-ID=76.htm", "5d599caf")
    assert (page.kind, page.name, page.book_page) == ("condition", "Frightened",
                                                                            ("Player Core", "444"))
    assert page.url == "https://2e.aonprd.com/Conditions.aspx?ID=76"
    [action] = parse_aon_page(DROP_PRONE, "docs/aonprd/Actions.aspx-ID=2295.htm", "5d599caf")
    assert (action.title, action.name, action.source) == (
        "Drop Prone [one-action]", "Drop Prone", "Player Core pg. 416")
    # another page that holds the condition gives it too, but only in the corpus's books
    assert [p.name for p in parse_aon_page(FRIGHTENED, "docs/aonprd/Traits.aspx-ID=76.htm", "c")] == ["Frightened"]
    assert parse_aon_page(FRIGHTENED.replace("Player Core pg. 444", "Core Rulebook pg. 620"),
                          "docs/aonprd/Traits.aspx-ID=76.htm", "c") == []
    # a list page: each heading that links to an action, with the source line under it
    listing = parse_aon_page(DROP_PRONE.replace("h1", "h2") + FRIGHTENED.replace("h1", "h2"),
                             "docs/aonprd/Activities.aspx-Category=1.htm", "c")
    assert [(p.kind, p.name, p.source) for p in listing] == [("action", "Drop Prone", "Player Core pg. 416"),
                                                             ("condition", "Frightened", "Player Core pg. 444")]


def test_feat_spell_and_item_pages_and_their_variants():
    [feat] = parse_aon_page(TOUGHNESS, "docs/aonprd/Feats.aspx-ID=5227.htm", "5d599caf")
    assert (feat.kind, feat.title, feat.book_page) == ("feat", "Toughness", ("Player Core", "263"))
    [spell] = parse_aon_page(FIREBALL, "docs/aonprd/Spells.aspx-ID=1530.htm", "5d599caf")
    assert (spell.kind, spell.name, spell.source) == ("spell", "Fireball", "Player Core pg. 331")
    assert spell.url == "https://2e.aonprd.com/Spells.aspx?ID=1530"  # its heading has no link: the file's
    armor = parse_aon_page(LIONS_ARMOR, "docs/aonprd/Equipment.aspx-ID=2807.htm", "5d599caf")
    assert [(p.kind, p.name, p.source) for p in armor] == [
        ("equipment", "Lion's Armor", "GM Core pg. 230"), ("equipment", "Lion's Armor (Greater)", "GM Core pg. 230")]
    # outside the condition and action pages, only the corpus's books are kept
    assert parse_aon_page(TOUGHNESS.replace("Player Core pg. 263", "Core Rulebook pg. 266"),
                          "docs/aonprd/Feats.aspx-ID=5227.htm", "c") == []

def test_page_set_only_for_same_type_and_book_and_kept_when_present():
    def page(kind: str, title: str, source: str) -> AonPage:
        return AonPage(kind, title, source, "u", f"docs/aonprd/x-{title}.htm", "c0ffee")

    recs = [
        {"id": "pf2e:condition:frightened", "name": "Frightened", "type": "condition",
         "book": "Pathfinder Player Core", "page": None, "source": {"repo": "r"}},
        {"id": "pf2e:action:grab", "name": "Grab", "type": "action", "book": "Pathfinder Monster Core",
         "page": None, "source": {"repo": "r"}},
        {"id": "pf2e:action:aid", "name": "Aid", "type": "action", "book": "Pathfinder Player Core", "page": "9",
         "source": {"repo": "r"}},
        {"id": "pf2e:spell:fear", "name": "Frightened", "type": "spell", "book": "Pathfinder Player Core",
         "page": None, "source": {"repo": "r"}},
    ]
    out, report = add_pages(recs, [page("condition", "Frightened", "Player Core pg. 444"),
                                   page("action", "Grab [one-action]", "Core Rulebook pg. 1"),
                                   page("action", "Aid [reaction]", "Player Core pg. 416"),
                                   page("condition", "Frightened", "Core Rulebook pg. 620")])
    assert out[0]["page"] == "444" and out[0]["source"][-1]["repo"] == "MihanEntalpo/pathfinder-2-ui"
    assert out[1]["page"] is None and report.other_book == [
        "Grab (Core Rulebook pg. 1; entry: Pathfinder Monster Core)"]
    assert out[2]["page"] == "9" and out[3]["page"] is None and report.page_added == 1
    assert report.unmatched == ["action: Grab (Pathfinder Monster Core)"]


def test_bundled_conditions_and_basic_actions_have_pages():
    def load(name: str) -> dict[str, dict]:
        with gzip.open(corpus_dir() / name, "rt") as fh:
            return {r["id"]: r for r in map(json.loads, fh)}

    conditions = load("conditions.jsonl.gz")
    assert conditions["pf2e:condition:frightened"]["page"] == "444"
    assert conditions["pf2e:condition:off-guard"]["page"] == "445"
    player_core = [c for c in conditions.values() if c["book"] == "Pathfinder Player Core"]
    assert len(player_core) == 42 and all(c["page"] for c in player_core)
    actions = load("actions.jsonl.gz")
    assert (actions["pf2e:action:strike"]["page"], actions["pf2e:action:demoralize"]["page"]) == ("418", "240")
    assert actions["pf2e:action:invest-an-item"]["page"] == "219"  # GM Core
    assert sum(bool(a.get("page")) for a in actions.values()) >= 120
    feats, spells, items = load("feats.jsonl.gz"), load("spells.jsonl.gz"), load("equipment.jsonl.gz")
    assert feats["pf2e:feat:toughness"]["page"] == "263" and spells["pf2e:spell:fireball"]["page"] == "331"
    assert items["pf2e:equipment:lions-armor-greater"]["page"] == "230"
    assert sum(bool(f.get("page")) for f in feats.values()) >= 1000
    assert sum(bool(s.get("page")) for s in spells.values()) >= 450
