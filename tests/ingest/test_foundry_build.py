"""``gmprep corpus build`` on real foundryvtt/pf2e pack documents (tests/ingest/data/foundry, see its
README for the commits), and the universal monster abilities of the bundled corpus."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from gmprep.cli import main
from gmprep.ingest.corpus import corpus_dir, iter_records
from gmprep.ingest.foundry.build import build
from gmprep.ingest.foundry.enrich import (
    check_text,
    damage_text,
    enrich,
    evaluate,
    resolve_formula,
    template_text,
)

PACKS = Path(__file__).parent / "data" / "foundry"


def _entries(folder: Path) -> dict[str, dict]:
    out = {}
    for path in folder.glob("*.jsonl.gz"):
        with gzip.open(path, "rt") as fh:
            for line in fh:
                rec = json.loads(line)
                out[rec["id"]] = rec
    return out


def _no_links(pack, ref, label):
    return label or ref, None


def test_inline_rolls_checks_and_templates_read_as_the_book_prints_them():
    assert damage_text("(1d8+1)[bludgeoning],1d6[acid]") == "1d8+1 bludgeoning plus 1d6 acid"
    assert damage_text("3d4[persistent,acid]") == "3d4 persistent acid"
    assert check_text("type:reflex|dc:20|basic:true") == "DC 20 basic Reflex"  # the text goes on "save"
    assert check_text("fortitude|dc:22") == "DC 22 Fortitude"
    assert check_text("type:flat|dc:5") == "DC 5 flat check"
    assert template_text("type:burst|distance:10") == "10-foot burst"
    src = ('<p>The creature takes a -10-foot penalty to Speed and @Damage[3d4[persistent,acid]] damage until it '
           'ends the effects. The target can end the effects by '
           '@UUID[Compendium.pf2e.actionspf2e.Item.SkZAQRkLLkmBQNB9]{Escaping} (DC 29) the sticky foam.</p>')
    out = enrich(src, lambda pack, ref, label: (label, "pf2e:action:escape"))
    assert out.text == ("The creature takes a -10-foot penalty to Speed and 3d4 persistent acid damage until it "
                        "ends the effects. The target can end the effects by Escaping (DC 29) the sticky foam.")
    assert out.links == ["pf2e:action:escape"]


def test_localize_keys_are_read_from_the_language_file_and_enriched():
    # PF2E.BattleForm.Note.Grab as in foundryvtt/pf2e static/lang/re-en.json (commit 00180db0)
    lang = {"PF2E": {"BattleForm": {"Note": {"Grab": (
        "You can spend an action immediately after a hit to "
        "@UUID[Compendium.pf2e.bestiary-ability-glossary-srd.Item.Tkd8sH4pwFIPzqTr]{Grab} the target")}}}}

    def localize(key):
        node = lang
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        return node if isinstance(node, str) else None

    out = enrich("<p>@Localize[PF2E.BattleForm.Note.Grab]</p>",
                 lambda pack, ref, label: (label, f"pf2e:action:{label.lower()}"), localize)
    assert out.text == "You can spend an action immediately after a hit to Grab the target"
    assert out.links == ["pf2e:action:grab"]
    missing = enrich("<p>@Localize[PF2E.NPC.Abilities.Glossary.ImprovedGrab]</p>", _no_links, localize)
    assert missing.text == "" and missing.unresolved == ["localize:PF2E.NPC.Abilities.Glossary.ImprovedGrab"]


def test_build_from_packs_alone(tmp_path):
    report = build(PACKS, tmp_path / "out", base=None, commit="49c22915d11c182f2709eecc433406e304300afb")
    got = _entries(tmp_path / "out")
    # Evasion is a Guns & Gears document: dropped. Improved Grab's text lives in a language file not given.
    assert set(got) == {"pf2e:class-feature:fighter--bravery", "pf2e:equipment:longsword",
                        "pf2e:equipment:leather-armor", "pf2e:creature:eagle", "pf2e:hazard:slamming-door"}
    door = got["pf2e:hazard:slamming-door"]
    assert door["text"].startswith("**Stealth** +7 (trained)\n\n**AC** 16; **Fort** +10, **Ref** +2, **Will** +0\n\n"
                                   "**Hardness** 5, **HP** 20; **Immunities** critical hits, precision\n\n"
                                   "Pressure-sensitive panels in the floor")
    assert "**Disable** DC 15 Thievery (trained) on the floor panels before the slab falls" in door["text"]
    assert ("**Slam Shut** [reaction] **Trigger** Pressure is placed on any floor tile.\n\n**Effect** The door falls"
            in door["text"])
    assert "deals 3d8 bludgeoning damage" in door["text"] and "A creature that succeeds at a DC 17 Reflex save" in door["text"]
    assert "requires a successful DC 25 Athletics check." in door["text"]
    assert door["fields"]["hardness"] == 5 and door["book"] == "Pathfinder GM Core" and door["level"] == 1
    assert any("Improved Grab" in m and "localize:PF2E.NPC.Abilities.Glossary.ImprovedGrab" in m for m in report.messages)
    sword = got["pf2e:equipment:longsword"]
    want = {"damage": "1d8 slashing", "damage_die": "d8", "group": "sword", "category": "martial", "hands": "1",
            "item_type": "weapon"}
    assert {k: sword["fields"].get(k) for k in want} == want
    assert sword["text"].startswith("**Price** 1 gp; **Bulk** 1; **Damage** 1d8 slashing; **Hands** 1")
    assert sword["traits"] == ["versatile-p"] and sword["book"] == "Pathfinder Player Core"
    armor = got["pf2e:equipment:leather-armor"]["fields"]
    assert (armor["ac_bonus"], armor["dex_cap"], armor["check_penalty"], armor["group"]) == (1, 4, -1, "leather")
    eagle = got["pf2e:creature:eagle"]
    assert eagle["fields"]["speed"] == "10 feet, fly 60 feet"
    assert eagle["fields"]["speeds"] == {"land": 10, "fly": 60}
    assert "**Speed** 10 feet, fly 60 feet" in eagle["text"] and eagle["level"] == -1
    assert "**Eagle Dive** [two-actions] The eagle Flies up to double its fly Speed" in eagle["text"]
    bravery = got["pf2e:class-feature:fighter--bravery"]
    assert bravery["fields"]["class"] == "Fighter" and bravery["level"] == 3
    assert "anytime you gain the Frightened condition, reduce its value by 1." in bravery["text"]
    assert bravery["unresolved_links"] == ["Frightened"]  # no base corpus: nothing to link to
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["sources"] == [{
        "repo": "foundryvtt/pf2e", "commit": "49c22915d11c182f2709eecc433406e304300afb",
        "packs": {"bestiary-ability-glossary-srd": 1, "classfeatures": 2, "equipment": 2, "hazards": 1,
                  "pathfinder-monster-core": 1},
        "entries": {"class-feature": 1, "equipment": 2, "hazard": 1, "creature": 1},
        "what": "gmprep corpus build --from <packs>"}]


def test_build_merges_into_the_bundled_corpus_keeping_every_id(tmp_path):
    report = build(PACKS, tmp_path / "out", base=corpus_dir(), commit="c0ffee")
    got = _entries(tmp_path / "out")
    before = {r["id"] for r in iter_records(corpus_dir(), [])}
    assert before <= set(got)
    # the bundled eagle already has its Speed (scripts/add_creature_speed.py): kept, not repeated
    assert report.speed_added == 0 and report.replaced == 4  # longsword, leather armor, bravery, slamming door
    eagle = got["pf2e:creature:eagle"]
    assert eagle["text"].count("**Speed**") == 1 and "\n\n**HP** 6\n\n**Speed** 10 feet, fly 60 feet\n\n" in eagle["text"]
    # the pack's links, and the bundled entry's (its class) kept
    assert set(got["pf2e:class-feature:fighter--bravery"]["links"]) == {"pf2e:condition:frightened", "pf2e:class:fighter"}
    sword = got["pf2e:equipment:longsword"]
    assert sword["fields"]["usage"] == "held-in-one-hand" and sword["fields"]["damage_die"] == "d8"
    sources = json.loads((tmp_path / "out" / "manifest.json").read_text())["sources"]
    assert sources[0]["repo"] == "bobrien87/pathfinder-2e" and sources[-1]["commit"] == "c0ffee"
    # the skill index entries are derived again from what the build holds: the same as the bundled ones
    assert [got[x] for x in sorted(got) if x.startswith("pf2e:skill:")] == sorted(
        (r for r in iter_records(corpus_dir(), []) if r["type"] == "skill"), key=lambda r: r["id"])


def test_cli_rejects_a_missing_folder_in_one_line(capsys, tmp_path):
    assert main(["corpus", "build", "--from", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gmprep: error:")
    (tmp_path / "empty").mkdir()
    assert main(["corpus", "build", "--from", str(tmp_path / "empty"), "--out", str(tmp_path / "o")]) == 1
    assert "no Foundry pack folders" in capsys.readouterr().err


@pytest.fixture(scope="module")
def bundled():
    return {r["id"]: r for r in iter_records(corpus_dir(), [])}


@pytest.mark.parametrize("name", ["Grab", "Improved Grab", "Constrict", "Knockdown", "Push", "Swallow Whole",
                                  "Trample", "Frightful Presence"])
def test_universal_monster_abilities_are_entries(bundled, name):
    rec = bundled[f"pf2e:action:{name.lower().replace(' ', '-')}"]
    assert rec["book"] == "Pathfinder Monster Core"
    assert rec["fields"]["category"] == "universal monster ability"
    assert "monster" in rec["text"].lower() and "`" not in rec["text"] and "[[" not in rec["text"]


def test_creatures_that_list_grab_link_to_it(bundled):
    flytrap = bundled["pf2e:creature:snapping-flytrap"]
    assert "pf2e:action:improved-grab" in flytrap["links"]
    assert "Improved Grab" not in flytrap["unresolved_links"]
    grab = bundled["pf2e:action:grab"]
    assert "lists Grab in its damage entry" in grab["text"] and grab["fields"]["cast"] == "[one-action]"


def test_build_adds_speed_to_a_base_creature_without_one(tmp_path):
    with gzip.open(corpus_dir() / "creatures.jsonl.gz", "rt") as fh:
        eagle = next(r for r in map(json.loads, fh) if r["id"] == "pf2e:creature:eagle")
    fields = {k: v for k, v in eagle["fields"].items() if k not in ("speed", "speeds")}
    text = eagle["text"].replace("\n\n**Speed** 10 feet, fly 60 feet", "")
    base = tmp_path / "base"
    base.mkdir()
    (base / "creatures.jsonl").write_text(json.dumps({**eagle, "fields": fields, "text": text, "page": None}) + "\n")
    report = build(PACKS, tmp_path / "out", base=base, commit="c0ffee")
    got = _entries(tmp_path / "out")["pf2e:creature:eagle"]  # the base stat block stays, Speed joins it after HP
    assert report.speed_added == 1 and "\n\n**HP** 6\n\n**Speed** 10 feet, fly 60 feet\n\n" in got["text"]
    assert got["fields"]["speeds"] == {"land": 10, "fly": 60} and got["source"][-1]["repo"] == "foundryvtt/pf2e"


def test_formulas_on_roll_data_read_as_the_book_prints_them():
    rank = {"item.rank": 1, "item.level": 1}
    assert damage_text("(@item.rank)d6[fire]", rank) == "1d6 fire"
    assert damage_text("floor(@item.level/2)d6[persistent,acid]", {"item.level": 2}) == "1d6 persistent acid"
    assert damage_text("(1+floor((@item.rank -1)/2))[persistent,acid]", rank) == "1 persistent acid"
    assert damage_text("(ternary(gte(@item.rank,10),115,100))[void]", {"item.rank": 9}) == "100 void"
    assert damage_text("(max(4,@item.rank-1))d6[void]", rank) == "4d6 void"  # a comma inside is one roll
    # the character's level is in words, as the books state it
    assert damage_text("(floor(@actor.level/2))d6[acid]", {}) == "(1d6 per 2 levels) acid"
    assert damage_text("(@actor.level)d6[@actor.flags.pf2e.barbarian.instinct.dragon.damageType]", {}) == "(1d6 per level)"
    assert damage_text("2*@actor.level[healing]", {}) == "twice your level healing"
    assert damage_text("ternary(gte(@actor.level,15),6,4)d6[healing]", {}) == "4d6 (6d6 at level 15) healing"
    assert damage_text("ternary(gte(@actor.system.skills.intimidation.rank,4),3,"
                       "ternary(gte(@actor.system.skills.intimidation.rank,3),2,1))d4[mental]", {}) == (
        "1d4 (2d4 at master in Intimidation, 3d4 at legendary in Intimidation) mental")
    # anything else keeps its arithmetic, with the references in words: never a raw "@actor"
    assert damage_text("(2*(1+@actor.level))[healing]", {}) == "(2×(1+your level)) healing"
    assert "@" not in damage_text("(@actor.system.unknown.value)d6[fire]", {})
    assert resolve_formula("__import__('os')", {}) == "__import__('os')"  # no reference: left as written
    assert evaluate("__import__('os').getcwd()", {}) is None  # parsed, never executed


FORMULAS = Path(__file__).parent / "data" / "foundry-formulas"


def test_build_gives_bundled_spells_and_feats_their_rendered_description_and_keeps_their_fields(tmp_path):
    base = {r["id"]: r for r in iter_records(corpus_dir(), [])}
    build(FORMULAS, tmp_path / "out", base=corpus_dir(), commit="c0ffee")
    got = _entries(tmp_path / "out")
    ray = got["pf2e:spell:fire-ray"]
    assert "dealing 1d6 fire damage to each creature that ends its turn" in ray["text"]
    assert "@" not in ray["text"]
    # text only: the bundled spell keeps its cast, range, page and links
    assert ray["fields"] == base["pf2e:spell:fire-ray"]["fields"] and ray["page"] == base["pf2e:spell:fire-ray"]["page"]
    assert "1d6 persistent acid damage" in got["pf2e:spell:acid-grip"]["text"]
    assert "1d6 acid damage for every 2 levels you have ((1d6 per 2 levels) acid)" in got["pf2e:feat:regurgitate-mutagen"]["text"]
    vengeance = got["pf2e:action:destructive-vengeance"]["text"]
    assert "1d6 (2d6 at level 5, 3d6 at level 9, 4d6 at level 12, 5d6 at level 16, 6d6 at level 19)" in vengeance
    assert set(base["pf2e:action:destructive-vengeance"]["links"]) <= set(got["pf2e:action:destructive-vengeance"]["links"])


def test_a_description_with_no_bundled_entry_adds_nothing(tmp_path):
    report = build(FORMULAS, tmp_path / "out", base=None, commit="c0ffee")
    got = _entries(tmp_path / "out")
    assert set(got) == {"pf2e:action:destructive-vengeance"}  # actions are whole entries; spells and feats text only
    assert any("pf2e:spell:fire-ray" in m and "no bundled entry" in m for m in report.messages)


def test_the_vaults_empty_price_prints_as_a_dash(bundled):
    club = bundled["pf2e:equipment:club"]
    assert "**Price** —;" in club["text"] and club["fields"]["price"] == "—"
    assert not [i for i, r in bundled.items() if "{'value': {}}" in (r.get("text") or "")]


def test_the_vaults_inline_codes_read_as_the_book_prints_them(bundled):
    from gmprep.ingest.foundry.vault_codes import printed

    names = {"pf2e:action:grab-an-edge": "Grab an Edge", "pf2e:action:escape": "Escape"}
    assert printed("the monster attempts to `act grapple` the creature", names) == \
        "the monster attempts to Grapple the creature"
    assert printed("you can `act grab-an-edge`", names) == "you can Grab an Edge"
    assert printed("you can `act pick-a-lock skill=crafting`", {}) == "you can Pick a Lock"  # not in the names
    # an Escape's DC is printed where the sentence does not say it already
    assert printed("a successful DC 15 check to `act escape dc=15`.", names) == "a successful DC 15 check to Escape."
    assert printed("becomes Grabbed (`act escape dc=28`).", names) == "becomes Grabbed (Escape DC 28)."
    assert printed("it must `act escape dc=21` first", names) == "it must Escape (DC 21) first"
    # a roll is its dice; a check's roll its modifier; the plugin's labels are dropped
    assert printed("regains `r 4d8[healing] #Treat Wounds` Hit Points", {}) == "regains 4d8 Hit Points"
    assert printed("again for `gmr 1d4 #Recharge Wail` rounds; `r 1D4`", {}) == "again for 1d4 rounds; 1d4"
    assert printed("with a `r 1d20+15` modifier", {}) == "with a +15 modifier"
    assert printed("Roll `r 1d20`. On a 1", {}) == "Roll 1d20. On a 1"
    assert printed("no `code` here", {}) == "no `code` here"
    # the bundled corpus keeps none of them (built with ``gmprep corpus build``, which applies it to the base)
    codes = [i for i, r in bundled.items() if re.search(r"`(?:act|r|gmr|br) [^`]+`", r.get("text") or "")]
    assert not codes, codes[:5]
    assert "the monster attempts to Grapple the creature" in bundled["pf2e:creature:zombie-shambler"]["text"]


def test_the_vaults_effect_links_are_dropped_or_read_as_their_word(bundled):
    from gmprep.ingest.foundry.vault_codes import without_effect_links as dropped

    assert dropped("The target is then temporarily \n\nEffect link: Effect: Immune\n\n to Treat Wounds actions.") == \
        "The target is then temporarily immune to Treat Wounds actions."
    assert dropped("you have \n\nEffect link: Effect: Panache\n\n.\n\nYou gain") == "you have panache.\n\nYou gain"
    assert dropped("gains \n> [!danger] Effect: Standard Cover\nagainst the attack") == "gains standard cover against the attack"
    assert dropped("to the check.\n\nEffect link: Effect: Aid") == "to the check."
    assert dropped("1 minute.\n> [!danger] Effect: Devour Soul\n> [!danger] Effect: Devour Soul (Victim)\n\n**Grab** x") == \
        "1 minute.\n\n**Grab** x"
    effect = re.compile(r"^(?:Effect link: |> \[!\w+\] )Effect:", re.M)
    assert not [i for i, r in bundled.items() if effect.search(r.get("text") or "")]
    assert "temporarily immune to Treat Wounds actions for 1 hour" in bundled["pf2e:action:treat-wounds"]["text"]
    # an activity without an action cost prints none ("Passive" was the vault's)
    assert "cast" not in bundled["pf2e:action:treat-wounds"]["fields"]
    assert not [i for i, r in bundled.items() if (r.get("fields") or {}).get("cast") == "Passive"]
