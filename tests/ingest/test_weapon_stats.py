"""Weapon damage, group and page from the kmdavis/xuartlek weapon notes."""

import gzip
import json

from gmprep.ingest.corpus import corpus_dir
from gmprep.ingest.weapon_stats import WeaponNote, add_weapon_stats, parse_weapon_note, weapon_fields

# content/srd/pf2e/compendium/equipment/weapons/bow/shortbow.md @ 07d0afbc, verbatim, abridged
SHORTBOW = """---
cssclasses: pf2e,pf2e-weapon
source: "Player Core"
---

# Shortbow  *Weapon 0*

`Deadly d10`

- **Price**: 3 gp
- **Damage**: 1d6 P
- **Bulk**: 1
- **Hands**: 1+
- **Range**: 60 ft.
- **Reload**: 0
- **Type**: Ranged
- **Category**: Martial
- **Group**: Bow
- **Ammunition**: [[srd/pf2e/compendium/equipment/weapons/bow/arrows|Arrows]]

This smaller bow is made of a single piece of wood and favored by skirmishers and cavalry.

*Source: Player Core p. 280*
"""


def _note(slug: str, source: str, **stats: str) -> WeaponNote:
    return WeaponNote(slug, {"damage": "", "hands": "", "range": "", "reload": "", "type": "", "category": "",
                             "group": "", **stats, "source": source}, f"weapons/x/{slug}.md", "c0ffee")


def test_note_gives_foundry_weapon_fields():
    note = parse_weapon_note(SHORTBOW, "content/srd/pf2e/compendium/equipment/weapons/bow/shortbow.md", "07d0afbc")
    assert note is not None and note.slug == "shortbow" and note.book_page == ("Player Core", "280")
    assert weapon_fields(note.stats) == {
        "damage": "1d6 piercing", "damage_die": "d6", "damage_type": "piercing", "hands": "1+", "range": 60,
        "reload": "0", "category": "martial", "group": "bow", "item_type": "weapon"}
    # the blowgun's flat damage and ammunition, which has no damage or hands
    assert weapon_fields({"damage": "1 P"})["damage"] == "1 piercing"
    assert weapon_fields({"category": "Ammunition", "group": "Bow"}) == {"category": "ammunition", "group": "bow"}
    assert parse_weapon_note("# Rope\n\n- **Price**: 5 sp\n", "x/rope.md", "c") is None


def test_merge_adds_stat_line_page_and_source_and_keeps_existing_values():
    recs = [
        {"id": "pf2e:equipment:dwarven-war-axe", "name": "Dwarven War Axe", "type": "equipment", "book": "Pathfinder Player Core", "page": None,
         "text": "**Item 0** (sweep)\n\n**Price** 3 gp; **Bulk** 2\n\nAn axe.", "fields": {"price": "3 gp"},
         "source": {"repo": "bobrien87/pathfinder-2e"}},
        {"id": "pf2e:equipment:khopesh", "name": "Khopesh", "type": "equipment", "book": "Pathfinder Player Core 2", "page": None,
         "text": "**Price** 2 gp", "fields": {"group": "sword"}, "source": {"repo": "r"}},
    ]
    notes = [_note("dwarven-waraxe", "Player Core p. 279", damage="1d8 S", hands="1", category="Advanced",
                   group="Axe"),
             _note("khopesh", "Treasure Vault (Remastered) p. 27", damage="1d8 S", group="Sword"),
             _note("lance", "Player Core p. 278", damage="1d8 P", group="Spear")]
    out, report = add_weapon_stats(recs, notes)
    axe = out[0]
    assert axe["text"] == ("**Item 0** (sweep)\n\n**Price** 3 gp; **Bulk** 2; **Damage** 1d8 slashing; **Hands** 1; "
                           "**Category** advanced; **Group** axe\n\nAn axe.")
    assert axe["page"] == "279" and axe["fields"]["damage_die"] == "d8" and axe["fields"]["price"] == "3 gp"
    assert axe["source"][-1] == {"repo": "kmdavis/xuartlek", "commit": "c0ffee", "path": "weapons/x/dwarven-waraxe.md"}
    assert out[1] is recs[1]  # has a group already, and the note's page is of another book
    assert report.stats_added == 1 and report.page_added == 1 and report.unused == ["lance"]
    assert report.other_book == ["Khopesh (Treasure Vault (Remastered); entry: Pathfinder Player Core 2)"]


def test_bundled_weapons_have_damage_group_and_page():
    with gzip.open(corpus_dir() / "equipment.jsonl.gz", "rt") as fh:
        items = {r["id"]: r for r in map(json.loads, fh)}
    sword = items["pf2e:equipment:longsword"]
    assert (sword["fields"]["damage"], sword["fields"]["group"], sword["page"]) == ("1d8 slashing", "sword", "278")
    assert "; **Damage** 1d8 slashing; **Hands** 1; **Category** martial; **Group** sword\n\n" in sword["text"]
    bow = items["pf2e:equipment:shortbow"]
    assert (bow["fields"]["range"], bow["fields"]["reload"], bow["page"]) == (60, "0", "280")
    weapons = [r for r in items.values() if r["fields"].get("item_type") == "weapon"]
    assert len(weapons) >= 98 and all(w["fields"].get("damage") and w["fields"].get("group") for w in weapons)
