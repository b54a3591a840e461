"""Creature Speed and Monster Core pages from the kmdavis/xuartlek statblock notes."""

import gzip
import json

from gmprep.ingest.corpus import corpus_dir
from gmprep.ingest.creature_speed import add_speed_and_pages, note_name, parse_note, parse_speed

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


def test_bundled_creatures_have_speed_and_page():
    with gzip.open(corpus_dir() / "creatures.jsonl.gz", "rt") as fh:
        creatures = {r["id"]: r for r in map(json.loads, fh)}
    warg = creatures["pf2e:creature:warg"]
    assert warg["fields"]["speed"] == "40 feet" and warg["page"] == "341"
    assert "\n\n**HP** 36\n\n**Speed** 40 feet\n\n" in warg["text"]
    assert creatures["pf2e:creature:bogwid"]["fields"]["speeds"] == {"land": 25, "climb": 20, "swim": 20}
