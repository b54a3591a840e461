"""Armor and shield statistics and pages from saved Archives of Nethys pages (MihanEntalpo/pathfinder-2-ui)."""

import gzip
import json

from gmprep.ingest.armor_stats import (
    ArmorPage,
    add_armor_stats,
    armor_fields,
    armor_stat_line,
    parse_armor_page,
)
from gmprep.ingest.corpus import corpus_dir

# docs/aonprd/Armor.aspx-ID=46.htm @ 5d599caf, the heading and stat block verbatim (trait links abridged)
CHAIN_MAIL = """<div class="main" id="main"><span><h1 class="title"><a href ="PFS.aspx.htm" \
tppabs="https://2e.aonprd.com/PFS.aspx"><span style="float:left;"><img alt="PFS Standard" src="PFS_Standard-2.png">\
</a></span><a href="Armor.aspx-ID=46.htm" tppabs="https://2e.aonprd.com/Armor.aspx?ID=46">Chain Mail</a></h1>\
<span class="trait"><a href="#">Flexible</a></span><span class="trait"><a href="#">Noisy</a></span><br />\
<b>Source</b> <a href="Sources.aspx-ID=216.htm" tppabs="https://2e.aonprd.com/Sources.aspx?ID=216" target="_blank" \
class="external-link"><i>Player Core pg. 273</i></a><br /><b>Price</b> 6 gp; <b>AC Bonus</b> +4; <b>Dex Cap</b> +1; \
<b>Check Penalty</b> -2; <b>Speed Penalty</b> -5 ft.<br /><b>Strength</b> +3; <b>Bulk</b> 2; <b>Category</b> Medium; \
<b>Group</b> <u><a href="#" tppabs="https://2e.aonprd.com/ArmorGroups.aspx?ID=1">Chain</a></u><hr />A suit of chain \
mail consists of several pieces of armor.</span>"""

# docs/aonprd/Shields.aspx-ID=20.htm @ 5d599caf, the stat block verbatim (heading abridged)
TOWER_SHIELD = """<h1 class="title"><a href="Shields.aspx-ID=20.htm" tppabs="https://2e.aonprd.com/Shields.aspx?ID=20">\
Tower Shield</a></h1><b>Source</b> <a href="Sources.aspx-ID=216.htm"><i>Player Core pg. 274</i></a><br />\
<b>Price</b> 10 gp; <b>AC Bonus</b> +2 (+4<sup>2</sup>); <b>Speed Penalty</b> -5 ft.<br /><b>Bulk</b> 4; \
<b>Hardness</b> 5; <b>HP (BT)</b> 20 (10)<hr />These massive shields can be used to provide cover."""

# docs/aonprd/Equipment.aspx-ID=2828.htm @ 5d599caf, the heading, source and base lines verbatim (links abridged)
STURDY_SHIELD = """<h1 class="title"><a href ="PFS.aspx.htm"></a>Sturdy Shield<span style="margin-left:auto; \
margin-right:0">Item 4+</span></h1><span class="trait">Magical</span><br /><b>Source</b> <a href="Sources.aspx-ID=218\
.htm"><i>GM Core pg. 234</i></a><br /><b>Usage</b> held in 1 hand; <b>Bulk</b> 1<br /><b>Base Shield</b> <u><a \
href="Shields.aspx-ID=19.htm" tppabs="https://2e.aonprd.com/Shields.aspx?ID=19">Steel Shield</a></u><hr />With a \
superior design."""


def _page(name: str, source: str, **stats: str) -> ArmorPage:
    cols = ("price", "ac_bonus", "dex_cap", "check_penalty", "speed_penalty", "strength", "bulk", "category",
            "group", "hardness", "hp_bt")
    return ArmorPage(name, source, {c: stats.get(c, "") for c in cols}, "https://2e.aonprd.com/Armor.aspx?ID=1",
                     f"docs/aonprd/{name}.htm", "c0ffee")


def test_saved_page_gives_foundry_armor_fields():
    page = parse_armor_page(CHAIN_MAIL, "docs/aonprd/Armor.aspx-ID=46.htm", "5d599caf")
    assert page is not None and page.name == "Chain Mail" and page.book_page == ("Player Core", "273")
    assert page.stats["speed_penalty"] == "-5 ft." and page.stats["group"] == "Chain"
    assert armor_fields(page.stats) == {
        "ac_bonus": 4, "dex_cap": 1, "check_penalty": -2, "speed_penalty": -5, "strength": 3, "category": "medium",
        "group": "chain", "item_type": "armor"}
    # "—" penalties are 0, as the Foundry packs store them; the Unarmored "—" Dex cap and Strength are left out
    assert armor_fields({"ac_bonus": "+0", "dex_cap": "—", "check_penalty": "—", "speed_penalty": "—",
                         "strength": "—", "category": "Unarmored", "group": "—"}) == {
        "ac_bonus": 0, "check_penalty": 0, "speed_penalty": 0, "category": "unarmored", "item_type": "armor"}
    assert parse_armor_page(CHAIN_MAIL, "docs/aonprd/Equipment.aspx-ID=46.htm", "c") is None


def test_shield_page_gives_hardness_hp_and_the_raised_bonus():
    page = parse_armor_page(TOWER_SHIELD, "docs/aonprd/Shields.aspx-ID=20.htm", "5d599caf")
    assert page is not None and page.stats["ac_bonus"] == "+2 (+4)" and page.stats["hp_bt"] == "20 (10)"
    fields = armor_fields(page.stats)
    assert fields == {"ac_bonus": 2, "ac_bonus_max": 4, "speed_penalty": -5, "hardness": 5, "hp": 20, "bt": 10,
                      "item_type": "shield"}
    assert armor_stat_line(fields) == "**AC Bonus** +2 (+4); **Speed Penalty** -5 ft.; **Hardness** 5; **HP (BT)** 20 (10)"


def test_specific_items_get_their_bases_statistics_and_their_own_durability():
    item = parse_armor_page(STURDY_SHIELD, "docs/aonprd/Equipment.aspx-ID=2828.htm", "5d599caf")
    assert item is not None and (item.name, item.base, item.source) == ("Sturdy Shield", "Steel Shield",
                                                                        "GM Core pg. 234")
    assert parse_armor_page(STURDY_SHIELD.replace("Base Shield", "Usage"), "docs/aonprd/Equipment.aspx-ID=2828.htm",
                            "c") is None  # an item page without a base
    steel = _page("Steel Shield", "Player Core pg. 274", ac_bonus="+2", speed_penalty="—", hardness="5",
                  hp_bt="20 (10)")
    plate = _page("Full Plate", "Player Core pg. 273", ac_bonus="+6", dex_cap="+0", check_penalty="-3",
                  speed_penalty="-10 ft.", strength="+4", category="Heavy", group="Plate")
    tideplate = ArmorPage("Tideplate", "GM Core pg. 231", {}, "u", "docs/aonprd/Equipment.aspx-ID=2810.htm", "c",
                          "Full Plate")
    recs = [
        {"id": "pf2e:equipment:sturdy-shield-minor", "name": "Sturdy Shield (Minor)", "type": "equipment",
         "book": "Pathfinder GM Core", "page": None, "fields": {}, "source": {"repo": "r"},
         "text": "**Price** 100 gp; **Bulk** 1\n\nThe shield has Hardness 8, HP 64, and BT 32."},
        {"id": "pf2e:equipment:tideplate", "name": "Tideplate", "type": "equipment", "book": "Pathfinder GM Core",
         "page": None, "fields": {}, "source": {"repo": "r"}, "text": "**Price** 1000 gp; **Bulk** 4\n\nWater."},
    ]
    out, _ = add_armor_stats(recs, [steel, plate, item, tideplate])
    shield, armor = out[0]["fields"], out[1]["fields"]
    assert (shield["base_shield"], shield["ac_bonus"], shield["hardness"], shield["hp"], shield["bt"]) == (
        "steel shield", 2, 8, 64, 32)
    assert out[0]["page"] is None  # the parent's page (234) is not the variant's
    assert (armor["base_armor"], armor["ac_bonus"], armor["strength"], armor["group"]) == ("full plate", 6, 4, "plate")
    assert out[1]["page"] == "231"
    assert out[1]["text"].startswith("**Price** 1000 gp; **Bulk** 4; **Base Armor** full plate; **AC Bonus** +6;")

def test_merge_adds_stat_line_page_and_source_and_keeps_existing_values():
    recs = [
        {"id": "pf2e:equipment:explorers-clothing", "name": "Explorer's Clothing", "type": "equipment",
         "book": "Pathfinder Player Core", "page": None, "text": "**Item 0** (comfort)\n\n**Price** 1 sp; **Bulk** L\n\nClothes.",
         "fields": {"price": "1 sp"}, "source": {"repo": "bobrien87/pathfinder-2e"}},
        {"id": "pf2e:equipment:full-plate", "name": "Full Plate", "type": "equipment", "book": "Pathfinder Player Core",
         "page": "273", "text": "**Price** 30 gp", "fields": {"ac_bonus": 6}, "source": {"repo": "r"}},
    ]
    pages = [_page("Explorer's Clothing", "Player Core pg. 273", ac_bonus="+0", dex_cap="+5", check_penalty="—",
                   speed_penalty="—", strength="—", category="Unarmored", group="Cloth"),
             _page("Full Plate", "Player Core pg. 273", ac_bonus="+6"),
             _page("Unarmored", "Player Core pg. 273", ac_bonus="+0")]
    out, report = add_armor_stats(recs, pages)
    clothes = out[0]
    assert clothes["text"] == ("**Item 0** (comfort)\n\n**Price** 1 sp; **Bulk** L; **AC Bonus** +0; **Dex Cap** +5; "
                               "**Check Penalty** —; **Speed Penalty** —; **Strength** —; **Category** unarmored; "
                               "**Group** cloth\n\nClothes.")
    assert clothes["page"] == "273" and clothes["fields"]["price"] == "1 sp"
    assert clothes["source"][-1] == {"repo": "MihanEntalpo/pathfinder-2-ui", "commit": "c0ffee",
                                     "path": "docs/aonprd/Explorer's Clothing.htm"}
    assert out[1] is recs[1]  # has an AC bonus and a page already
    assert report.stats_added == 1 and report.page_added == 1
    assert report.unused == ["Unarmored (Player Core pg. 273)"]
    again, report = add_armor_stats(out, pages)
    assert again == out and report.stats_added == report.page_added == 0


def test_bundled_armor_and_shields_have_the_player_core_statistics():
    with gzip.open(corpus_dir() / "equipment.jsonl.gz", "rt") as fh:
        items = {r["id"]: r for r in map(json.loads, fh)}
    keys = ("ac_bonus", "dex_cap", "check_penalty", "speed_penalty", "strength", "category", "group")

    def stats(slug: str) -> tuple:
        return tuple(items[f"pf2e:equipment:{slug}"]["fields"].get(k) for k in keys)

    # Player Core p. 273, Table 6-4: Armor
    assert stats("full-plate") == (6, 0, -3, -10, 4, "heavy", "plate")
    assert stats("chain-mail") == (4, 1, -2, -5, 3, "medium", "chain")
    assert stats("leather-armor") == (1, 4, -1, 0, 0, "light", "leather")
    assert stats("hide-armor") == (3, 2, -2, -5, 2, "medium", "leather")
    plate = items["pf2e:equipment:full-plate"]
    assert plate["page"] == "273"
    assert ("**Price** 30 gp; **Bulk** 4; **AC Bonus** +6; **Dex Cap** +0; **Check Penalty** -3; **Speed Penalty** "
            "-10 ft.; **Strength** +4; **Category** heavy; **Group** plate\n\n") in plate["text"]
    # Player Core p. 274, Table 6-5: Shields
    steel = items["pf2e:equipment:steel-shield"]["fields"]
    assert (steel["ac_bonus"], steel["hardness"], steel["hp"], steel["bt"]) == (2, 5, 20, 10)
    assert items["pf2e:equipment:steel-shield"]["page"] == "274"
    armor = [r for r in items.values() if r["fields"].get("item_type") == "armor"]
    shields = [r for r in items.values() if r["fields"].get("item_type") == "shield"]
    base = [r for r in armor + shields if not r["fields"].get("base_armor") and not r["fields"].get("base_shield")]
    assert len(base) == 16 and all(r["page"] and "ac_bonus" in r["fields"] for r in base)
    # GM Core specific items: the base's statistics; a shield's own Hardness, HP and BT (GM Core p. 235)
    tideplate = items["pf2e:equipment:tideplate"]["fields"]
    assert (tideplate["base_armor"], tideplate["ac_bonus"], tideplate["speed_penalty"]) == ("full plate", 6, -10)
    sturdy = items["pf2e:equipment:sturdy-shield-minor"]
    assert (sturdy["fields"]["hardness"], sturdy["fields"]["hp"], sturdy["fields"]["bt"]) == (8, 64, 32)
    assert sturdy["page"] == "235"
    assert len(armor) >= 20 and len(shields) >= 21
