"""Specific magic weapons' base weapon and its statistics from saved Archives of Nethys item pages."""

import gzip
import json

from gmprep.ingest.corpus import corpus_dir
from gmprep.ingest.magic_weapons import WeaponItemPage, add_magic_weapon_stats, parse_weapon_item_page
from gmprep.ingest.weapon_stats import WeaponNote

# docs/aonprd/Equipment.aspx-ID=2869.htm @ 5d599caf, the heading, source, usage and base lines verbatim (links abridged)
RETRIBUTION_AXE = """<h1 class="title"><a href ="PFS.aspx.htm" tppabs="https://2e.aonprd.com/PFS.aspx"></a></span>\
Retribution Axe<span style="margin-left:auto; margin-right:0">Item 3</span></h1><span class="trait"><a href="#">\
Magical</a></span><br /><b>Source</b> <a href="Sources.aspx-ID=218.htm" tppabs="https://2e.aonprd.com/Sources.aspx?\
ID=218" target="_blank" class="external-link"><i>GM Core pg. 242</i></a><br /><b>Price</b> 60 gp<br /><b>Usage</b> \
held in 2 hands; <b>Bulk</b> 2<br /><b>Base Weapon</b> <u><a href="Weapons.aspx-ID=376.htm" tppabs="https://2e.\
aonprd.com/Weapons.aspx?ID=376">Greataxe</a></u><hr />The blade of this <i>+1 greataxe</i> bears a design."""

GREATAXE = WeaponNote("greataxe", {"damage": "1d12 S", "hands": "2", "range": "", "reload": "", "type": "Melee",
                                   "category": "Martial", "group": "Axe", "source": "Player Core p. 278"},
                      "content/srd/pf2e/compendium/equipment/weapons/axe/greataxe.md", "07d0afbc")


def test_item_page_gives_name_source_and_base_weapon():
    page = parse_weapon_item_page(RETRIBUTION_AXE, "docs/aonprd/Equipment.aspx-ID=2869.htm", "5d599caf")
    assert page == WeaponItemPage("Retribution Axe", "GM Core pg. 242", "Greataxe",
                                  "https://2e.aonprd.com/Equipment.aspx?ID=2869",
                                  "docs/aonprd/Equipment.aspx-ID=2869.htm", "5d599caf")
    assert parse_weapon_item_page(RETRIBUTION_AXE.replace("Base Weapon", "Usage"),
                                  "docs/aonprd/Equipment.aspx-ID=2869.htm", "c") is None  # no base weapon
    assert parse_weapon_item_page(RETRIBUTION_AXE, "docs/aonprd/Weapons.aspx-ID=376.htm", "c") is None


def test_specific_weapon_gets_its_bases_statistics_not_its_price_and_a_rerun_changes_nothing():
    page = parse_weapon_item_page(RETRIBUTION_AXE, "docs/aonprd/Equipment.aspx-ID=2869.htm", "5d599caf")
    assert page is not None
    rec = {"id": "pf2e:equipment:retribution-axe", "name": "Retribution Axe", "type": "equipment",
           "book": "Pathfinder GM Core", "page": None, "text": "**Item 3**\n\n**Price** 60 gp; **Bulk** 2\n\nThe blade",
           "fields": {"price": "60 gp", "bulk": "2"}, "source": {"repo": "r", "commit": "c", "path": "p"}}
    (out,), report = add_magic_weapon_stats([rec], [page], [GREATAXE])
    assert report.stats_added == 1 and report.page_added == 1 and out["page"] == "242"
    assert out["fields"] == {"price": "60 gp", "bulk": "2", "base_weapon": "greataxe", "damage": "1d12 slashing",
                             "damage_die": "d12", "damage_type": "slashing", "hands": "2", "category": "martial",
                             "group": "axe", "item_type": "weapon"}
    assert out["text"].split("\n\n")[1] == ("**Price** 60 gp; **Bulk** 2; **Base Weapon** greataxe; **Damage** "
                                            "1d12 slashing; **Hands** 2; **Category** martial; **Group** axe")
    assert [s["path"] for s in out["source"]] == ["p", page.path, GREATAXE.path]
    again, report = add_magic_weapon_stats([out], [page], [GREATAXE])
    assert again == [out] and report.stats_added == 0


def test_bundled_corpus_has_gm_core_specific_weapons_with_their_bases_die():
    with gzip.open(corpus_dir() / "equipment.jsonl.gz", "rt", encoding="utf-8") as fh:
        by_name = {r["name"]: r for r in map(json.loads, fh)}
    expected = {"Retribution Axe": ("greataxe", "d12", "242"), "Caterwaul Sling": ("sling", "d6", "242"),
                "Sky Hammer": ("warhammer", "d8", "242"), "Storm Flash (Greater)": ("rapier", "d6", "243"),
                "Serithtial": ("bastard sword", "d8", "302")}
    for name, (base, die, page) in expected.items():
        rec = by_name[name]
        assert (rec["fields"]["base_weapon"], rec["fields"]["damage_die"], rec["page"]) == (base, die, page), name
        assert f"**Base Weapon** {base}; **Damage** 1{die}" in rec["text"], name
    sling = by_name["Caterwaul Sling"]["fields"]
    assert (sling["range"], sling["reload"], sling["price"]) == (50, "1", "155 gp")  # the base's range, its own price
