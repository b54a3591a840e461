"""Specific magic weapons' base weapon and its statistics from saved Archives of Nethys item pages."""

import gzip
import json
from pathlib import Path

from gmprep.ingest import weapon_stats
from gmprep.ingest.aon_rules import RulesSection
from gmprep.ingest.aon_weapons import missing_bases, parse_weapon_page
from gmprep.ingest.corpus import corpus_dir
from gmprep.ingest.magic_weapons import (
    WeaponItemPage,
    add_magic_weapon_stats,
    base_in_text,
    parse_weapon_item_page,
    trait_rules,
)
from gmprep.ingest.weapon_stats import WeaponNote

DATA = Path(weapon_stats.__file__).resolve().parent / "data"

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


TRIDENT = WeaponNote("trident", {"damage": "1d8 P", "hands": "1", "range": "20 ft.", "reload": "", "type": "Melee",
                                 "category": "Martial", "group": "Spear", "source": "Player Core p. 279"},
                     "content/srd/pf2e/compendium/equipment/weapons/spear/trident.md", "07d0afbc")
STAFF = WeaponNote("staff", {"damage": "1d4 B", "hands": "1", "range": "", "reload": "", "type": "Melee",
                             "category": "Simple", "group": "Club", "source": "Player Core p. 277"},
                   "content/srd/pf2e/compendium/equipment/weapons/club/staff.md", "07d0afbc")
CROSSBOWS = [WeaponNote(s, {"damage": "1d6 P", "group": "Crossbow"}, f"weapons/crossbow/{s}.md", "c")
             for s in ("crossbow", "hand-crossbow")]
# docs/aonprd/Rules.aspx-ID=3207&NoRedirect=1.htm @ 5d599caf, the section's text as transcribed
ATTACKING_WITH_A_STAFF = RulesSection(3217, "Attacking with a Staff", "GM Core", 270, False,
                                      ["Chapter 5: Treasure Trove", "Trappings of Power", "Staves"],
                                      "Staves are also staff weapons. They can be etched with fundamental runes but "
                                      "not property runes.", "docs/aonprd/Rules.aspx-ID=3207&NoRedirect=1.htm",
                                      "5d599caf")
# docs/aonprd/Weapons.aspx-ID=356.htm @ 5d599caf, heading, traits, source and stat block verbatim (links abridged)
FIST = """<h1 class="title"><a href ="PFS.aspx.htm" tppabs="https://2e.aonprd.com/PFS.aspx"><span style="float:left;">\
</span></a><a href="Weapons.aspx-ID=356.htm" tppabs="https://2e.aonprd.com/Weapons.aspx?ID=356">Fist</a></h1>\
<span class="trait"><a href="#">Agile</a></span><br /><b>Source</b> <a href="Sources.aspx-ID=216.htm" tppabs="https://\
2e.aonprd.com/Sources.aspx?ID=216" target="_blank" class="external-link"><i>Player Core pg. 277</i></a><br /><b>Favored \
Weapon</b> <u><a href="Deities.aspx-ID=286.htm">Irori</u></a><br /><b>Price</b> &mdash;; <b>Damage</b> 1d4 B; <b>Bulk\
</b> &mdash;<br /><b>Hands</b> 1<br /><b>Type</b> Melee; <b>Category</b> Unarmed; <b>Group</b> <u><a href="#">\
Brawling</a></u><br /><hr />"""


def _item(name: str, text: str, **fields: object) -> dict:
    return {"id": f"pf2e:equipment:{name.lower().replace(' ', '-')}", "name": name, "type": "equipment",
            "book": "Pathfinder Player Core", "page": None, "traits": fields.pop("traits", []),
            "text": f"**Item 5**\n\n**Price** 275 gp; **Usage** held-in-one-hand; **Bulk** 1\n\n{text}",
            "fields": {"price": "275 gp", "usage": "held-in-one-hand", **fields}, "source": {"repo": "r"}}


def test_the_base_an_items_own_text_names_as_its_magic_weapon():
    notes = {"trident": TRIDENT, "crossbow": CROSSBOWS[0], "handcrossbow": CROSSBOWS[1]}
    assert base_in_text(_item("Tiger Fork", "The tiger fork is a *+1 trident* with the disarm trait."), notes) == \
        "trident"
    assert base_in_text(_item("X", "This *+1 striking ghost touch hand crossbow* has lenses."), notes) == \
        "hand crossbow"  # the longest name, not "crossbow"
    assert base_in_text(_item("X", "A plain wooden rod.\n\nAs a *+1 trident*, it ..."), notes) is None  # 2nd paragraph
    assert base_in_text(_item("X", "It is a *+1 trident*.", usage="worngloves"), notes) is None  # not held
    assert base_in_text(_item("X", "It is a *+1 trident*.", item_type="shield"), notes) is None  # a shield's boss


def test_items_without_a_base_line_take_their_texts_base_or_their_traits_rule_and_a_rerun_changes_nothing():
    (rule,) = trait_rules([ATTACKING_WITH_A_STAFF])
    assert (rule.trait, rule.base, rule.source["url"]) == ("staff", "staff", "https://2e.aonprd.com/Rules.aspx?ID=3217")
    fork = _item("Tiger Fork", "The tiger fork is a *+1 trident* with the disarm trait.")
    staff = _item("Staff of Fire", "This staff resembles a blackened length of ashen wood.", traits=["staff"])
    rod = _item("Rod", "A rod.", traits=["magical"])
    out, report = add_magic_weapon_stats([fork, staff, rod], [], [TRIDENT, STAFF], [rule])
    assert (report.from_text, report.from_rule, report.stats_added) == (["Tiger Fork"], ["Staff of Fire"], 2)
    assert (out[0]["fields"]["base_weapon"], out[0]["fields"]["damage_die"], out[0]["fields"]["range"]) == \
        ("trident", "d8", 20)
    assert "; **Base Weapon** staff; **Damage** 1d4 bludgeoning; **Hands** 1;" in out[1]["text"]
    assert out[1]["source"][1] == rule.source and out[1]["source"][2]["path"] == STAFF.path
    assert out[2] is rod
    assert add_magic_weapon_stats(out, [], [TRIDENT, STAFF], [rule])[0] == out
    assert trait_rules([]) == []  # without the rules section, staves get no base


def test_saved_base_weapon_page_gives_the_fist_a_note_for_the_handwraps():
    parsed = parse_weapon_page(FIST, "docs/aonprd/Weapons.aspx-ID=356.htm", "5d599caf")
    assert parsed is not None
    note, url = parsed
    assert (note.slug, url, note.repo) == ("fist", "https://2e.aonprd.com/Weapons.aspx?ID=356",
                                           "MihanEntalpo/pathfinder-2-ui")
    assert note.stats == {"damage": "1d4 B", "hands": "1", "range": "", "reload": "", "type": "Melee",
                          "category": "Unarmed", "group": "Brawling", "source": "Player Core pg. 277"}
    legacy = FIST.replace("</h1>", '</h1><h3 class="title legacy-content-warning">Legacy Content</h3>')
    assert parse_weapon_page(legacy, "docs/aonprd/Weapons.aspx-ID=356.htm", "c") is None
    assert parse_weapon_page(FIST.replace("Player Core pg.", "Guns & Gears pg."),
                             "docs/aonprd/Weapons.aspx-ID=356.htm", "c") is None  # not a corpus book
    assert missing_bases([GREATAXE], [parsed]) == [note] and missing_bases([note], [parsed]) == []
    page = WeaponItemPage("Handwraps of Mighty Blows", "GM Core pg. 290", "Fist",
                          "https://2e.aonprd.com/Equipment.aspx?ID=3086", "docs/aonprd/Equipment.aspx-ID=3086.htm", "c")
    wraps = {**_item("Handwraps of Mighty Blows", "As you invest these strips of cloth ...", usage="worngloves"),
             "page": "290"}
    (out,), report = add_magic_weapon_stats([wraps], [page], [GREATAXE, note])
    assert (out["fields"]["base_weapon"], out["fields"]["damage"], out["fields"]["category"]) == \
        ("fist", "1d4 bludgeoning", "unarmed")
    assert out["source"][-1] == {"repo": "MihanEntalpo/pathfinder-2-ui", "commit": "5d599caf",
                                 "path": "docs/aonprd/Weapons.aspx-ID=356.htm"}


def test_every_bundled_weapon_has_a_damage_die_but_the_blowguns_printed_flat_damage():
    with gzip.open(corpus_dir() / "equipment.jsonl.gz", "rt", encoding="utf-8") as fh:
        items = list(map(json.loads, fh))
    notes = weapon_stats.read_transcription(DATA / "xuartlek-transcribed" / "weapons.tsv")
    bases = {n.slug.replace("-", "") for n in notes if n.stats["damage"]}  # not ammunition
    weapons = [r for r in items if r["fields"].get("item_type") == "weapon" or "staff" in (r.get("traits") or [])
               or r["id"].rsplit(":", 1)[-1].replace("-", "") in bases]
    without = [r["name"] for r in weapons if not r["fields"].get("damage_die")]
    assert without == ["Blowgun"], without
    assert next(r for r in items if r["name"] == "Blowgun")["fields"]["damage"] == "1 piercing"  # as printed
    assert len(weapons) >= 178
    by_name = {r["name"]: r for r in items}
    for name, base, die in (("Handwraps of Mighty Blows", "fist", "d4"), ("Tiger Fork", "trident", "d8"),
                            ("Blackaxe", "greataxe", "d12"), ("Chalice of Justice", "longsword", "d8"),
                            ("Staff of Fire", "staff", "d4"), ("Bounty's Light", "staff", "d4")):
        assert (by_name[name]["fields"]["base_weapon"], by_name[name]["fields"]["damage_die"]) == (base, die), name
    staves = [r for r in items if "staff" in (r.get("traits") or [])]
    assert len(staves) == 55
    rule_url = "https://2e.aonprd.com/Rules.aspx?ID=3217"
    assert any(s.get("url") == rule_url for s in by_name["Staff of Fire"]["source"])
