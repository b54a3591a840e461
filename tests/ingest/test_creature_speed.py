"""Creature Speed and Monster Core pages from the kmdavis/xuartlek statblock notes."""

import gzip
import json

from gmprep.ingest.corpus import corpus_dir
from gmprep.ingest.creature_speed import (
    PackSpeed,
    add_pack_speeds,
    add_speed_and_pages,
    note_name,
    parse_note,
    parse_speed,
    read_pack_speeds,
)

# the statblock of content/srd/pf2e/bestiary/monster-core/beast/Warg.md @ 403f22a8, verbatim, abridged
WARG = '''```statblock
layout: Basic Pathfinder 2e Layout
source: "MC"
name: "Warg"
level: "Creature 2"
hp: 36
health:
  - name: "HP"
    desc: "36"
speed: "40 feet"
attacks:
  - name: "Melee"
    desc: "⬻ jaws +11 __Damage__ 1d8+4 piercing plus Grab"
sourcebook: "_Monster Core_, page 341."
```
'''


def test_note_gives_speed_and_page():
    note = parse_note(WARG, "content/srd/pf2e/bestiary/monster-core/beast/Warg.md", "403f22a8")
    assert note and (note.name, note.speed, note.page) == ("Warg", "40 feet", "341")


def test_speed_text_and_movement_types():
    assert parse_speed('"25 feet, climb 20 feet, swim 20 feet"') == (
        "25 feet, climb 20 feet, swim 20 feet", {"land": 25, "climb": 20, "swim": 20})
    # special movement after a semicolon stays in the text; a fly-only creature has no land Speed
    assert parse_speed("20 feet; burrow 20 feet, earth glide") == (
        "20 feet; burrow 20 feet, earth glide", {"land": 20, "burrow": 20})
    assert parse_speed("fly 100 feet") == ("fly 100 feet", {"fly": 100})
    assert parse_speed("20 feet; burrow 20 feet (sand only), fly 50 feet")[1] == {"land": 20, "burrow": 20, "fly": 50}
    assert parse_speed("30 feet, fly , water walk")[0] == "30 feet, fly, water walk"
    assert parse_speed('"25 feet, [[srd/pf2e/compendium/spells/rank-4/air-walk|air walk]]"')[0] == "25 feet, air walk"


def test_foundry_variant_names_find_the_book_stat_block():
    assert note_name("Omen Dragon (Adult, Spellcaster)") == "Adult Omen Dragon"
    assert note_name("Omen Dragon (Young)") == "Young Omen Dragon"
    assert note_name("Manticore (Quill Tail)") == "Manticore"
    assert note_name("Air Scamp") == "Air Scamp"


def test_merge_keeps_existing_values_and_reports_unmatched():
    warg = parse_note(WARG, "beast/Warg.md", "c")
    recs = [
        {"id": "pf2e:creature:warg", "name": "Warg", "type": "creature", "book": "Pathfinder Monster Core",
         "page": None, "text": "**Creature 2**\n\n**HP** 36\n\n**Melee** jaws", "fields": {}, "source": {"repo": "v"}},
        {"id": "pf2e:creature:x", "name": "X", "type": "creature", "book": "Pathfinder Monster Core",
         "page": "7", "text": "", "fields": {}, "source": {"repo": "v"}},
    ]
    out, report = add_speed_and_pages(recs, [warg])
    assert out[0]["text"] == "**Creature 2**\n\n**HP** 36\n\n**Speed** 40 feet\n\n**Melee** jaws"
    assert out[0]["fields"] == {"speed": "40 feet", "speeds": {"land": 40}} and out[0]["page"] == "341"
    assert out[0]["source"][-1] == {"repo": "kmdavis/xuartlek", "commit": "c", "path": "beast/Warg.md"}
    assert report.unmatched == ["X"] and out[1]["page"] == "7"
    again, report = add_speed_and_pages(out, [warg])  # a second run changes nothing
    assert again == out and report.speed_added == report.page_added == 0


def test_pack_speed_fills_only_creatures_without_one(tmp_path):
    tsv = tmp_path / "speeds.tsv"
    tsv.write_text("path\tcommit\tspeed\n"
                   "packs/pf2e/pathfinder-monster-core/phantom-knight.json\tc1\t"
                   '{"otherSpeeds": [{"type": "fly", "value": 25}], "value": 0}\n'
                   "packs/pf2e/pathfinder-monster-core/warg.json\tc2\t"
                   '{"otherSpeeds": [], "value": 99}\n', encoding="utf-8")
    speeds = read_pack_speeds(tsv)
    assert speeds[0] == PackSpeed("phantom-knight", {"otherSpeeds": [{"type": "fly", "value": 25}], "value": 0},
                                  "packs/pf2e/pathfinder-monster-core/phantom-knight.json", "c1")
    recs = [
        {"id": "pf2e:creature:phantom-knight", "name": "Phantom Knight", "type": "creature",
         "text": "**HP** 40", "fields": {}, "source": {"repo": "v"}},
        {"id": "pf2e:creature:warg", "name": "Warg", "type": "creature", "text": "**HP** 36",
         "fields": {"speed": "40 feet", "speeds": {"land": 40}}, "source": {"repo": "v"}},
    ]
    out, added = add_pack_speeds(recs, speeds)
    assert added == ["Phantom Knight"]
    assert out[0]["fields"] == {"speed": "fly 25 feet", "speeds": {"fly": 25}}
    assert out[0]["text"] == "**HP** 40\n\n**Speed** fly 25 feet"
    assert out[0]["source"][-1]["path"].endswith("phantom-knight.json")
    assert out[1] is recs[1]  # the note's Speed is kept


def test_bundled_creatures_have_speed_and_page():
    with gzip.open(corpus_dir() / "creatures.jsonl.gz", "rt") as fh:
        creatures = {r["id"]: r for r in map(json.loads, fh)}
    warg = creatures["pf2e:creature:warg"]
    assert warg["fields"]["speed"] == "40 feet" and warg["page"] == "341"
    assert "\n\n**HP** 36\n\n**Speed** 40 feet\n\n" in warg["text"]
    assert creatures["pf2e:creature:bogwid"]["fields"]["speeds"] == {"land": 25, "climb": 20, "swim": 20}
    # no note in the vault: the Speed of the Foundry pack actor
    envyspawn = creatures["pf2e:creature:envyspawn"]
    assert envyspawn["fields"]["speed"] == "30 feet" and envyspawn["source"][-1]["repo"] == "foundryvtt/pf2e"
    with_speed = sum(bool(c["fields"].get("speed")) for c in creatures.values())
    assert with_speed >= 0.99 * len(creatures)
