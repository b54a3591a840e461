"""The creators' CLI: the JSON shape issue 14 specifies, one-line errors, statblock check exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from gmprep.cli import main


def test_encounter_json(store_dir, capsys):
    assert main(["--store", str(store_dir), "encounter", "--party", "4", "--level", "3",
                 "2 goblin warriors, goblin war chanter, elite wolf", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"xp", "threat", "budget", "creatures", "warnings"}
    assert (out["xp"], out["threat"]) == (70, "moderate")
    assert out["budget"] == {"trivial": 40, "low": 60, "moderate": 80, "severe": 120, "extreme": 160}
    assert out["creatures"][2] == {"text": "elite wolf", "id": "pf2e:creature:wolf", "count": 1, "level": 2,
                                   "adjustment": "elite", "xp_each": 30}
    assert all(set(c) == {"text", "id", "count", "level", "adjustment", "xp_each"} for c in out["creatures"])


def test_unknown_creature_is_one_line_exit_1(store_dir):
    p = subprocess.run([sys.executable, "-m", "gmprep", "--store", str(store_dir), "encounter", "--party", "4",
                        "--level", "3", "2 goblin warriors, gobln pyro"], capture_output=True, text=True)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.strip().count("\n") == 0 and "Traceback" not in p.stderr
    assert "unknown creature 'gobln pyro'" in p.stderr and "Goblin Pyro" in p.stderr


def test_missing_party_is_an_error(store_dir, capsys):
    assert main(["--store", str(store_dir), "encounter", "2 goblin warriors"]) == 1
    assert "party size and level" in capsys.readouterr().err
    assert main(["--store", str(store_dir), "encounter", "Encounter (5 PCs, level 2): 2 goblin warriors", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["budget"]["moderate"] == 100  # the party stated in the text


def test_encounter_build(store_dir, capsys):
    assert main(["--store", str(store_dir), "encounter", "build", "--party", "4", "--level", "3", "--threat", "severe",
                 "--traits", "undead", "--terrain", "swamp", "--json"]) == 0
    options = json.loads(capsys.readouterr().out)
    assert 1 <= len(options) <= 3 and all(o["threat"] == "severe" and o["xp"] <= 120 for o in options)
    assert main(["--store", str(store_dir), "encounter", "build", "--party", "4", "--level", "3", "--threat", "deadly"]) == 1
    capsys.readouterr()
    # people Monster Core lacks: GM Core's quick groups, each creature with the level it is counted at and no entry;
    # the note on stderr with --json
    assert main(["--store", str(store_dir), "encounter", "build", "--party", "4", "--level", "3", "--threat", "severe",
                 "--traits", "bandits on the road", "--json"]) == 0
    out = capsys.readouterr()
    first = json.loads(out.out)[0]
    assert first["structure"] == "Boss and Lackeys" and first["xp"] == 120
    assert [(c["text"], c["id"], c["level"]) for c in first["creatures"]] == [
        ("1 bandit boss (level 5)", None, 5), ("4 bandit lackeys (level -1)", None, -1)]
    assert '`gmprep creature "bandit boss" --level 5`' in out.err
    # a written level in the evaluated list
    assert main(["--store", str(store_dir), "encounter", "--party", "4", "--level", "3",
                 "2 bandits (level 2), goblin war chanter", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["xp"] == 80 and report["creatures"][0]["id"] is None and "structure" not in report
    # --boss: a severe boss fight unless a threat is given, the solo boss first
    assert main(["--store", str(store_dir), "encounter", "build", "--party", "4", "--level", "3", "--boss",
                 "--traits", "undead", "--json"]) == 0
    options = json.loads(capsys.readouterr().out)
    assert options[0]["structure"] == "Solo boss" and options[0]["threat"] == "severe" and options[0]["xp"] == 120


def test_creature(store_dir, capsys):
    assert main(["--store", str(store_dir), "creature", "--level", "5", "--role", "brute", "ogre bouncer", "--json"]) == 0
    sb = json.loads(capsys.readouterr().out)
    assert sb["name"] == "Ogre Bouncer" and sb["level"] == 5 and sb["abilities"]
    assert {s["field"]: s["column"] for s in sb["stats"]}["hp"] == "high"
    assert main(["--store", str(store_dir), "creature", "--level", "5", "--role", "brute", "ogre bouncer"]) == 0
    assert "**Creature 5**" in capsys.readouterr().out
    assert main(["creature", "--level", "30", "--role", "brute"]) == 1
    assert main(["creature", "--level", "3", "--role", "tank"]) == 1


def test_statblock_check(tmp_path, capsys):
    f = tmp_path / "npc.md"
    f.write_text("## Bandit\nLevel 3\n- AC 25; Fort +11, Ref +9, Will +6\n- HP 45\n", encoding="utf-8")
    assert main(["statblock", "check", str(f)]) == 1
    out = capsys.readouterr().out
    assert f"{f}:3:6: AC 25 is above extreme (22) for level 3; high is 19" in out
    assert main(["statblock", "check", str(f), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)[0]["fix_value"] == 22
    f.write_text("## Bandit\nLevel 3\n- AC 19; Fort +11, Ref +9, Will +6\n- HP 45\n", encoding="utf-8")
    assert main(["statblock", "check", str(f)]) == 0
    assert main(["statblock", "check", str(tmp_path / "missing.md")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_suggested_abilities_come_from_creatures_close_to_the_concept(resolver):
    from gmprep.core.creators.creature import suggest_abilities
    from gmprep.core.creators.models import CreatureRequest

    # no word of "guard captain" names a creature: the concept's meaning picks the kholo sergeant, not the first
    # creature of the level by name (the Bogwid's larvae)
    guard = suggest_abilities(CreatureRequest(level=5, role="soldier", concept="guard captain"), resolver)
    assert guard and guard[0].source_id == "pf2e:creature:kholo-sergeant", [a.source_id for a in guard]
    ogre = suggest_abilities(CreatureRequest(level=3, role="brute", concept="ogre bouncer"), resolver)
    assert ogre[0].source_id.startswith("pf2e:creature:ogre-"), [a.source_id for a in ogre]
    # no concept: the role and the level still choose
    assert suggest_abilities(CreatureRequest(level=5, role="soldier"), resolver)
    # Monster Core's orcs are levels 0-2: a level-6 warlord borrows from them, not from the level-5 Orca
    orc = suggest_abilities(CreatureRequest(level=6, role="soldier", concept="orc warlord", traits=["orc"]), resolver)
    assert orc and all(a.source_id.startswith("pf2e:creature:orc-") for a in orc), [a.source_id for a in orc]
    # an ability named for its creature's kind stays with it, unless the request is of that kind
    official = suggest_abilities(CreatureRequest(level=2, role="skill paragon", concept="corrupt harbor official",
                                                 traits=["human"]), resolver)
    assert "Curse of the Wererat" not in [a.name for a in official]
    thief = suggest_abilities(CreatureRequest(level=2, role="skirmisher", concept="wererat thief"), resolver)
    assert "Curse of the Wererat" in [a.name for a in thief]
    # a lender of another kind keeps its kind's own abilities: the wererat is human but also a beast, so its Rat
    # Empathy and Moon Frenzy stay with werecreatures, while its Sneak Attack, carried across kinds, is lent
    official = [a.name for a in official]
    assert not {"Rat Empathy", "Moon Frenzy"} & set(official), official
    assert "Sneak Attack" in official, official
    # a nephilim is a kind of human (every nephilim is human): the Lawbringer Warpriest lends to a human priest, a
    # ghost's Site Bound does not
    priest = suggest_abilities(CreatureRequest(level=5, role="spellcaster", concept="cultist priest of Urgathoa",
                                               traits=["human"]), resolver)
    by = {a.name: a.source_id for a in priest}
    assert by.get("Channel Smite") == "pf2e:creature:lawbringer-warpriest" and "Site Bound" not in by, by


def test_a_caster_takes_the_tradition_of_the_closest_caster(resolver):
    from gmprep.core.creators.creature import build_creature, render_statblock_markdown
    from gmprep.core.creators.models import CreatureRequest

    # a priest's spells are divine and its key skill Religion: the Lawbringer Warpriest's Divine Prepared Spells
    priest = build_creature(CreatureRequest(level=5, role="spellcaster", concept="cultist priest", traits=["human"]),
                            resolver)
    assert priest.tradition == "divine" and priest.stat("skill:Religion") and not priest.stat("skill:Arcana")
    md = render_statblock_markdown(priest)
    assert "**Divine Spontaneous Spells**" in md and "Religion +" in md
    # the GM's choice stands; a role that does not cast has no tradition
    wizard = build_creature(CreatureRequest(level=5, role="spellcaster", concept="cultist priest", tradition="occult"),
                            resolver)
    assert wizard.tradition == "occult" and wizard.stat("skill:Occultism").column == "high"
    assert wizard.stat("skill:Arcana").column == "moderate"
    assert build_creature(CreatureRequest(level=5, role="brute", concept="ogre"), resolver).tradition is None
    # no store: arcane, as before
    assert build_creature(CreatureRequest(level=5, role="spellcaster")).tradition == "arcane"


def test_a_concept_that_names_a_class_is_built_as_that_class(resolver):
    from gmprep.core.creators.creature import build_creature, render_statblock_markdown
    from gmprep.core.creators.models import CreatureRequest

    # no role said: the class's own entry decides (a "Wizard Spellcasting" feature naming arcane; a Dex key attribute;
    # a Str key attribute and 12 Hit Points a level), and the statblock says whose build it is
    wizard = build_creature(CreatureRequest(level=6, concept="court wizard"), resolver)
    assert (wizard.role, wizard.tradition, wizard.role_from) == ("spellcaster", "arcane", "Wizard")
    assert "built as a spellcaster <!-- the Wizard's build -->" in render_statblock_markdown(wizard)
    assert build_creature(CreatureRequest(level=4, concept="dwarf cleric"), resolver).tradition == "divine"
    assert build_creature(CreatureRequest(level=2, concept="halfling rogues"), resolver).role == "skirmisher"
    assert build_creature(CreatureRequest(level=5, concept="orc barbarian"), resolver).role == "brute"
    # no class, but a creature kind named: the closest creature of that kind's build, read off its stat block (the
    # Sweet Hag casts occult spells; the Forest Troll's Constitution is above its Strength)
    hag = build_creature(CreatureRequest(level=5, concept="swamp hag"), resolver)
    assert (hag.role, hag.tradition, hag.role_from) == ("spellcaster", "occult", "Sweet Hag")
    assert build_creature(CreatureRequest(level=5, concept="troll"), resolver).role == "brute"
    # none of these: GM Core's soldier, as before; a role said wins over the class
    keeper = build_creature(CreatureRequest(level=3, concept="innkeeper"), resolver)
    assert (keeper.role, keeper.role_from) == ("soldier", "")
    assert build_creature(CreatureRequest(level=6, role="brute", concept="court wizard"), resolver).role == "brute"


def test_a_class_npc_follows_gm_cores_class_road_map(resolver):
    from gmprep.core.creators.creature import build_creature, render_statblock_markdown
    from gmprep.core.creators.models import CreatureRequest

    # GM Core's Class Road Maps, read from the rules entry: all sixteen, each with columns and abilities
    maps = {r.name: r for r in resolver.roadmaps}
    assert len(maps) == 17 and {"Cleric (Cloistered Cleric)", "Cleric (Warpriest)", "Wizard", "Rogue"} <= set(maps)
    assert maps["Wizard"].columns == {"perception": "low", "skill:Arcana": "high", "int": "high", "ac": "low",
                                      "fort": "low", "hp": "low", "attack": "low", "spell_dc": "high",
                                      "spell_attack": "high"}
    # "low to moderate damage before sneak attack plus high or extreme damage with sneak attack": the first
    assert maps["Rogue"].columns["damage"] == "low" and maps["Rogue"].columns["skill:Thievery"] == "high"
    assert maps["Barbarian"].columns["damage"] == "extreme"  # "(when raging)" dropped

    wizard = build_creature(CreatureRequest(level=5, concept="court wizard"), resolver)
    cols = {s.field: s.column for s in wizard.stats}
    # listed: the road map's column; not listed: moderate (Will, damage); an attribute not listed: the role's (Str low)
    assert (cols["perception"], cols["ac"], cols["hp"], cols["spell_dc"]) == ("low", "low", "low", "high")
    assert (cols["will"], cols["damage"], cols["str"]) == ("moderate", "moderate", "low")
    # the abilities are the entries the road map names, cited, not a Monster Core lender's Reactive Strike
    names = [a.name for a in wizard.abilities]
    assert names[:2] == ["Wizard Spellcasting", "Drain Bonded Item"], names
    assert {a.source_type for a in wizard.abilities} <= {"class-feature", "feat", "action"}
    md = render_statblock_markdown(wizard)
    assert "**Arcane Prepared Spells**" in md and "GM Core's Class Road Maps, Wizard" in md
    assert "pf2e:rule:gm-core--pc-style-build" in {c.id for c in wizard.citations}
    # it casts like a PC: GM Core's slots (level 5: 3rd rank the highest, 2 slots; 3 of each lower; 5 cantrips)
    assert wizard.slots == [(3, 2), (2, 3), (1, 3)] and wizard.cantrips == (5, 3)
    # (their spells: see test_a_casters_top_three_ranks_and_cantrips_are_filled)
    assert re.search(r"\*\*3rd\*\* \(2 slots\) [^;]+; \*\*2nd\*\* \(3 slots\) [^;]+; \*\*1st\*\* \(3 slots\) [^;]+; "
                     r"\*\*Cantrips \(3rd\)\*\* [A-Z]", md), md
    assert "pf2e:rule:gm-core--prepared-and-spontaneous-spells" in {c.id for c in wizard.citations}
    from gmprep.core.creators.roadmaps import spell_slots

    assert spell_slots(6) == ([(3, 3), (2, 3), (1, 3)], 5, 3) and spell_slots(1) == ([(1, 2)], 5, 1)
    assert spell_slots(0) == ([], 5, 1)
    # spells stop at 10th rank (Player Core); GM Core's creatures go to level 24
    assert spell_slots(20)[0][0] == (10, 3) and spell_slots(24)[0][0] == (10, 3) and spell_slots(24)[2] == 10
    assert len(spell_slots(24)[0]) == 10
    # a feature above the NPC's level is left out: Debilitating Strike comes at 9th
    low = [a.name for a in build_creature(CreatureRequest(level=5, concept="halfling rogue"), resolver).abilities]
    high = [a.name for a in build_creature(CreatureRequest(level=9, concept="halfling rogue"), resolver).abilities]
    assert "Sneak Attack" in low and "Debilitating Strike" not in low and "Debilitating Strike" in high
    # Master Strike (a 19th-level feature, left out of the corpus under the action's name) by the level the action says
    # the rogue gains it at
    top = [a.name for a in build_creature(CreatureRequest(level=19, concept="halfling rogue"), resolver).abilities]
    assert "Master Strike" not in low + high and "Master Strike" in top
    # a monk fights unarmed (its features say "unarmed" as often as "weapon"); a fighter keeps its longsword
    assert build_creature(CreatureRequest(level=6, concept="human monk"), resolver).strikes[0].name == "Fist"
    assert build_creature(CreatureRequest(level=6, concept="human fighter"), resolver).strikes[0].name == "Longsword"
    # a map with spells but no spell DC (the champion's devotion spells, focus spells): the moderate DC GM Core gives
    # creatures with supplemental spells, of the tradition the feature says
    champion = build_creature(CreatureRequest(level=6, concept="dwarf champion"), resolver)
    assert (champion.casting, champion.tradition, champion.stat("spell_dc").column) == ("Focus", "divine", "moderate")
    assert "**Divine Focus Spells** DC" in render_statblock_markdown(champion) and not champion.slots
    # the variant the concept names
    assert build_creature(CreatureRequest(level=4, concept="warpriest cleric"), resolver).roadmap == "Cleric (Warpriest)"
    # every class has its map, and no "<Class> Feats" feature (it only says when feats come) is an ability
    for c in resolver.classes:
        sb = build_creature(CreatureRequest(level=10, concept=f"human {c.name.lower()}"), resolver)
        assert sb.roadmap and sb.roadmap.startswith(c.name) and sb.abilities, c.name
        assert not [a.name for a in sb.abilities if a.name.endswith(" Feats")], (c.name, [a.name for a in sb.abilities])
    # a role the GM says wins, and then no road map
    assert build_creature(CreatureRequest(level=5, role="brute", concept="court wizard"), resolver).roadmap is None


def test_the_kind_a_name_says_and_what_a_concept_does(resolver):
    from gmprep.core.creators.creature import build_creature, suggest_abilities
    from gmprep.core.creators.models import CreatureRequest

    # a Goblin Dog is an animal, not a goblin: its Goblin Pox and Buck are no goblin shaman's
    shaman = {a.source_name for a in suggest_abilities(CreatureRequest(level=1, role="spellcaster",
                                                                       concept="goblin shaman", traits=["goblin"]),
                                                       resolver)}
    assert shaman and "Goblin Dog" not in shaman, shaman
    # a word that names no kind says what the creature does: the Hobgoblin Archer's build for an archer
    archer = build_creature(CreatureRequest(level=1, concept="goblin archer"), resolver)
    assert (archer.role, archer.role_from) == ("sniper", "Hobgoblin Archer")
    assert build_creature(CreatureRequest(level=4, concept="elven archer"), resolver).role == "sniper"


def test_a_concept_that_names_a_background_takes_its_build_and_skills(resolver):
    from gmprep.core.creators.creature import build_creature, render_statblock_markdown
    from gmprep.core.creators.models import CreatureRequest

    # Player Core's Merchant: "One must be to Intelligence or Charisma", trained in Diplomacy and Mercantile Lore
    merchant = build_creature(CreatureRequest(level=2, concept="goblin merchant"), resolver)
    assert (merchant.role, merchant.role_from) == ("skill paragon", "Merchant background")
    cols = {s.field: s.column for s in merchant.stats if s.field.startswith("skill:")}
    assert cols["skill:Diplomacy"] == "extreme" and cols["skill:Mercantile Lore"] == "high", cols
    assert list(cols.values()).count("extreme") == 1, cols  # the role's Deception steps down
    assert "Mercantile Lore +" in render_statblock_markdown(merchant)
    # the entries the build was read from are cited with the tables
    assert "pf2e:background:merchant" in {c.id for c in merchant.citations}
    wizard = build_creature(CreatureRequest(level=6, concept="court wizard"), resolver)
    assert "pf2e:class:wizard" in {c.id for c in wizard.citations}
    # Strength among the boosts: a soldier (the Guard's Cha/Str); Dexterity without it: a skirmisher (Cha/Dex)
    assert build_creature(CreatureRequest(level=2, concept="city guard sergeant"), resolver).role == "soldier"
    assert build_creature(CreatureRequest(level=3, concept="bandit captain"), resolver).role == "skirmisher"
    # a role said stands, and still gets the background's skills
    guard = build_creature(CreatureRequest(level=2, role="spellcaster", concept="temple guard"), resolver)
    assert guard.role == "spellcaster" and guard.stat("skill:Intimidation") is not None
    # a creature named whole is that creature, not a background ("guard" of Skeleton Guard)
    skeleton = build_creature(CreatureRequest(level=1, concept="skeleton guard"), resolver)
    assert skeleton.role_from == "Skeleton Guard" and skeleton.stat("skill:Intimidation") is None


def test_a_statblock_without_spells_gets_no_ability_that_works_on_spells(resolver):
    from gmprep.core.creators.creature import suggest_abilities
    from gmprep.core.creators.models import CreatureRequest

    # the Pitborn Adept's Drain Bonded Item recasts a prepared spell: a caster's, not a soldier's
    for role in ("soldier", "brute", "skirmisher", "sniper", "skill paragon"):
        got = suggest_abilities(CreatureRequest(level=3, role=role, concept="pitborn adept", traits=["human"]),
                                resolver, k=8)
        assert "Drain Bonded Item" not in {a.name for a in got}, (role, got)
        assert not any("spell slot" in a.text for a in got), (role, got)
    caster = suggest_abilities(CreatureRequest(level=3, role="spellcaster", concept="pitborn adept",
                                               traits=["human"]), resolver, k=8)
    assert "Drain Bonded Item" in {a.name for a in caster}


def test_an_ability_keeps_its_whole_paragraph_and_no_other(resolver):
    from gmprep.core.creators.creature import suggest_abilities
    from gmprep.core.creators.models import CreatureRequest

    wizard = suggest_abilities(CreatureRequest(level=6, role="spellcaster", concept="court wizard", traits=["human"]),
                               resolver, k=6)
    by = {a.name: a.text for a in wizard}
    # a defence named only ("+2 Circumstance to All Saves vs. Disease") does not take the next ability's text
    named_only = [n for n in by if n.startswith("+2 Circumstance")]
    assert named_only and all(not by[n] for n in named_only), by
    # a reaction keeps its Effect, not only its Trigger line
    assert any("**Effect**" in t for t in by.values()), by


@pytest.mark.parametrize("concept,level", [("bandit boss", 5), ("merchant", 1), ("pirate lieutenant", 5),
                                           ("court wizard", 3), ("street urchin", 5)])
def test_a_person_of_no_named_kind_borrows_what_people_carry(resolver, concept, level):
    from gmprep.core.creators.creature import _person, creature_build, infer_role, suggest_abilities
    from gmprep.core.creators.models import CreatureRequest

    # no word of these names a creature kind: they are people, and borrow from Monster Core's people (creatures of a
    # Player Core ancestry), only what more than one ancestry carries. Before, a bandit boss of level 5 had a genie's
    # Change Shape and a harpy's Putrid Plague, a merchant a ghoul's Stench, a street urchin a harpy's Stench
    role, tradition, _, _ = infer_role(CreatureRequest(level=level, concept=concept), resolver)
    req = CreatureRequest(level=level, concept=concept, role=role, tradition=tradition)
    person = _person(req, resolver)
    assert person is not None
    people, ancestries = person
    abilities = suggest_abilities(req, resolver)
    # a merchant is a skill paragon (so is a pirate lieutenant: the Pirate archetype's dedication requires
    # Intimidation), and no person of Monster Core's who carries an ability is one: none
    assert bool(abilities) == (role != "skill paragon"), (role, abilities)
    assert role == "skill paragon" or concept not in ("merchant", "pirate lieutenant")
    by_id = {n.node_id: n for n in resolver.creatures()}
    for a in abilities:
        # and a person borrows only what people of its role carry (``creature_build``)
        assert any(creature_build(n) == role for n in resolver.creatures() if n.node_id in people
                   and a.name in (n.fields.get("abilities") or [])), (concept, role, a.name)
        # a person carries it; the text shown may be another creature's closer to the level that prints it alike
        # (``_closest_carrier``), and then that creature is cited
        lenders = [n for n in resolver.creatures() if n.node_id in people and a.name in (n.fields.get("abilities") or [])]
        assert lenders, (a.name, a.source_name)
        assert a.name in (by_id[a.source_id].fields.get("abilities") or [])
        carriers = {t.lower() for n in lenders for t in n.traits} & ancestries
        assert len(carriers) > 1, (a.name, carriers)
        if a.source_id in people:
            assert not {"beast", "plant"} & {t.lower() for t in by_id[a.source_id].traits}
    names = {a.name for a in abilities}
    assert not names & {"Change Shape", "Putrid Plague", "Stench", "Deep Breath", "Ferocity"}, names


def test_a_borrowed_ability_is_printed_as_at_the_requested_level(resolver):
    from gmprep.core.creators.creature import _at_level, suggest_abilities
    from gmprep.core.creators.models import CreatureRequest

    # Monster Core's Sneak Attack is 1d6 to level 6 and 2d6 from level 7: a level-9 bandit boss's is a level 7-10
    # creature's, named for the bandit boss; a level-2 one keeps 1d6 from a creature near its level
    def sneak(level: int):
        req = CreatureRequest(level=level, role="skirmisher", concept="bandit boss")
        return next(a for a in suggest_abilities(req, resolver) if a.name == "Sneak Attack")

    # a person is humanoid as most of Monster Core's people are: the scouts' Hidden Movement comes with Sneak Attack
    kit = suggest_abilities(CreatureRequest(level=5, role="skirmisher", concept="bandit boss"), resolver)
    assert {a.name for a in kit} == {"Hidden Movement", "Sneak Attack"}, [a.name for a in kit]
    high, low = sneak(9), sneak(2)
    assert "2d6" in high.text and "bandit boss" in high.text and 7 <= high.source_level <= 11, high
    assert "1d6" in low.text and abs(low.source_level - 2) <= 1, low
    # an ability no closer creature prints alike keeps its lender, with a save DC moved by the Spell DC table's column
    # (GM Core: "use the Spell DC and Spell Attack Modifier table to determine active ability DCs"); a flat check's
    # DC stays
    moved = _at_level("30 feet. DC 19 Fortitude save; a DC 5 flat check", 5, 9)
    assert moved.startswith("30 feet. DC 25 <!-- DC 19 at level 5, moderate in the Spell DC table --> Fortitude")
    assert "DC 5 flat check" in moved
    assert _at_level("DC 19 Fortitude", 5, 5) == "DC 19 Fortitude"


def test_a_skill_paragon_that_borrows_nothing_gets_its_skills_combat_actions(resolver):
    from gmprep.core.creators.creature import build_creature, render_statblock_markdown
    from gmprep.core.creators.models import CreatureRequest

    # a merchant borrows nothing (no Monster Core person with an ability is a skill paragon); GM Core's skill paragon
    # wants "at least one special ability to use the creature's skills in combat": its best skills' actions on a foe
    merchant = build_creature(CreatureRequest(level=4, concept="merchant"), resolver)
    assert merchant.skill_actions and merchant.abilities
    names = [a.name for a in merchant.abilities]
    assert set(names) <= {"Create a Diversion", "Feint", "Demoralize", "Grapple", "Trip", "Shove", "Disarm",
                          "Reposition"}, names
    assert "Request" not in names and "Lie" not in names  # talk, or minutes long
    md = render_statblock_markdown(merchant)
    assert "Skill actions (GM Core's skill paragon" in md and "(Deception +" in md
    # a statblock with abilities of its own keeps them
    assert not build_creature(CreatureRequest(level=4, concept="bandit boss"), resolver).skill_actions


def test_an_ancestry_said_by_its_adjective_is_the_kind(resolver):
    from gmprep.core.creators.creature import build_creature, render_statblock_markdown
    from gmprep.core.creators.models import CreatureRequest

    # "elven archer" named no kind (no "elf" word): it borrowed nothing. The adjective is the ancestry's (the forms
    # hovers read, kg.names): the elf trait, and Monster Core's Elf Ranger lends
    assert resolver.ancestry_adjective("elven") == "elf" and resolver.ancestry_adjective("dwarven") == "dwarf"
    assert resolver.ancestry_adjective("elf") is None and resolver.ancestry_adjective("goblins") is None
    archer = build_creature(CreatureRequest(level=4, concept="elven archer"), resolver)
    assert archer.traits == ["elf", "humanoid"] and archer.abilities
    lent = [a.source_name for a in archer.abilities if a.source_type == "creature"]
    assert set(lent) == {"Elf Ranger"}, lent
    # (and Player Core 2's Archer archetype, which the concept names, its dedication and feats)
    assert archer.archetype == "Archer" and "Archer Dedication" in {a.name for a in archer.abilities}
    # traits the GM gives stand
    assert build_creature(CreatureRequest(level=4, concept="elven archer", traits=["human"]), resolver).traits == ["human"]
    # an ancestry the concept names is shown as a stat block prints it: its traits and its size
    merchant = build_creature(CreatureRequest(level=2, concept="goblin merchant"), resolver)
    assert (merchant.size, merchant.traits) == ("small", ["goblin", "humanoid"])
    assert build_creature(CreatureRequest(level=2, concept="bandit boss"), resolver).traits == []
    # Speed (GM Core: 25 feet for a creature that moves like a human): an ancestry's, a Monster Core creature's the
    # build is read off as it is, and 5 feet more for a skirmisher otherwise ("higher Speed than typical")
    def speed(concept: str) -> int:
        return build_creature(CreatureRequest(level=4, concept=concept), resolver).speed

    assert (speed("dwarf champion"), speed("wolf"), speed("bandit boss"), speed("innkeeper")) == (20, 35, 30, 25)
    assert "**Speed** 20 feet <!-- the Dwarf ancestry's Speed -->" in render_statblock_markdown(
        build_creature(CreatureRequest(level=4, concept="dwarf champion"), resolver))


def test_a_kind_far_from_the_level_still_lends(resolver):
    from gmprep.core.creators.creature import _renamed, suggest_abilities
    from gmprep.core.creators.models import CreatureRequest

    # Monster Core's goblins are levels -1 to 1: a level-7 goblin shaman had no goblin within the level window, and no
    # ability; now the goblins of any level lend (the closest first), named for the shaman
    shaman = suggest_abilities(CreatureRequest(level=7, role="soldier", concept="goblin shaman"), resolver)
    assert shaman and all(a.source_name.startswith("Goblin") for a in shaman), [a.source_name for a in shaman]
    assert "goblin shaman" in " ".join(a.text for a in shaman)
    # ogres have no ogre trait (giant, humanoid): the name's first word says the kind
    king = suggest_abilities(CreatureRequest(level=12, role="soldier", concept="ogre king"), resolver)
    assert any(a.source_name.startswith("Ogre") for a in king), [a.source_name for a in king]
    # the lender's last name word is renamed only after "the": off-guard keeps its guard
    assert _renamed("The chanter attempts a check; the target is off-guard.", "Goblin War Chanter", "goblin shaman") \
        == "The goblin shaman attempts a check; the target is off-guard."
    assert _renamed("It is off-guard to the guard.", "Skeleton Guard", "bandit") == "It is off-guard to the bandit."


def test_the_build_of_a_kind_or_a_doer_holds_at_every_level(resolver):
    from gmprep.core.creators.creature import build_creature
    from gmprep.core.creators.models import CreatureRequest

    # the build a goblin shaman takes at level 3 it keeps at level 9, where every person near the level is a human
    built = {lv: build_creature(CreatureRequest(level=lv, concept="goblin shaman"), resolver) for lv in (3, 9)}
    assert built[3].role == built[9].role != "soldier", {lv: (b.role, b.role_from) for lv, b in built.items()}
    assert built[3].role_from == built[9].role_from
    # a kind named by its creatures' first name word (ogres have no ogre trait) says the build: not the default
    ogre = build_creature(CreatureRequest(level=5, concept="ogre"), resolver)
    assert ogre.role_from.startswith("Ogre") and not ogre.role_default, (ogre.role, ogre.role_from)
    # what the creature does, said by a creature of any level: the Hobgoblin Archer builds a level-9 skeleton archer
    archer = build_creature(CreatureRequest(level=9, concept="skeleton archer"), resolver)
    assert (archer.role, archer.role_from) == ("sniper", "Hobgoblin Archer")


def test_a_role_the_concept_says_is_the_role(resolver):
    from gmprep.core.creators.creature import build_creature
    from gmprep.core.creators.intent import said_role
    from gmprep.core.creators.models import CreatureRequest

    assert said_role("bugbear brute") == ("brute", "bugbear")
    assert said_role("kobold snipers") == ("sniper", "kobold")
    assert said_role("bandit boss") is None
    # the word is GM Core's role, not a name to match (the Zombie Brute's soldier build); the name keeps it
    brute = build_creature(CreatureRequest(level=3, concept="bugbear brute"), resolver)
    assert (brute.role, brute.role_from, brute.role_default, brute.name) == ("brute", "", False, "Bugbear Brute")
    assert any(a.source_name.startswith("Bugbear") for a in brute.abilities), [a.source_name for a in brute.abilities]
    # a creature named whole keeps its own build
    zombie = build_creature(CreatureRequest(level=2, concept="zombie brute"), resolver)
    assert zombie.role_from == "Zombie Brute"


def test_a_concept_that_names_a_skill_by_meaning_is_trained_in_it(resolver):
    from gmprep.core.creators.creature import build_creature, render_statblock_markdown
    from gmprep.core.creators.models import CreatureRequest

    # the real MiniLM: a blacksmith's Crafting, a healer's Medicine, whatever the role; the kind's words are not read
    # (a "kobold" alone names no skill) and the comment says why
    smith = build_creature(CreatureRequest(level=5, concept="dwarf blacksmith"), resolver)
    skills = {s.field: s.column for s in smith.stats if s.field.startswith("skill:")}
    assert skills.get("skill:Crafting") in ("high", "extreme"), skills
    assert smith.skill_from.startswith("Crafting:") and "“blacksmith”" in smith.skill_from
    assert "Crafting: the skill whose actions and feats are closest" in render_statblock_markdown(smith)
    healer = build_creature(CreatureRequest(level=3, role="soldier", concept="healer"), resolver)
    assert any(s.field == "skill:Medicine" for s in healer.stats)
    assert build_creature(CreatureRequest(level=3, role="sniper", concept="kobold"), resolver).skill_from == ""
    # a background the concept names says the skills itself
    assert build_creature(CreatureRequest(level=3, concept="merchant"), resolver).skill_from == ""


def test_a_named_kind_is_no_person(resolver):
    from gmprep.core.creators.creature import _person
    from gmprep.core.creators.models import CreatureRequest

    # a trait word (hag), a creature name's first word (ogre), a one-word creature name (wererat) or given traits say
    # the kind; a background's word ("guard", of the Guard Dog too) does not
    for concept, traits in [("swamp hag", []), ("ogre bouncer", []), ("wererat thief", []), ("bandit leader", ["human"])]:
        assert _person(CreatureRequest(level=3, concept=concept, traits=traits), resolver) is None, concept
    assert _person(CreatureRequest(level=3, concept="guard captain"), resolver) is not None


def test_a_backgrounds_restricted_boost_is_a_strong_attribute(resolver):
    from gmprep.core.creators.creature import build_creature
    from gmprep.core.creators.models import CreatureRequest

    def columns(concept: str) -> dict[str, str]:
        sb = build_creature(CreatureRequest(level=3, concept=concept), resolver)
        return {s.field: s.column for s in sb.stats if s.field in ("str", "dex", "con", "int", "wis", "cha")}

    # Scholar: "One must be to Intelligence or Wisdom"; the skill paragon's Intelligence was moderate, now high.
    # Field Medic (Constitution or Wisdom): Wisdom. A merchant (Intelligence or Charisma) already has Charisma high.
    assert columns("scholar")["int"] == "high"
    assert columns("field medic")["wis"] == "high"
    merchant = columns("merchant")
    assert merchant["cha"] == "high" and merchant["int"] == "moderate"


def test_a_concept_that_names_an_archetype_takes_its_feats_and_skills(resolver):
    from gmprep.core.creators.creature import build_creature, render_statblock_markdown
    from gmprep.core.creators.models import CreatureRequest

    # Player Core 2's Assassin: the dedication requires Deception and Stealth (Dexterity: a skirmisher), grants Mark for
    # Death; Expert Backstabber and Surprise Attack are its 4th-level feats, Angel of Death its 10th
    sb = build_creature(CreatureRequest(level=7, concept="assassin"), resolver)
    assert (sb.role, sb.role_from, sb.archetype) == ("skirmisher", "Assassin archetype", "Assassin")
    names = [a.name for a in sb.abilities if a.source_type != "creature"]
    assert names[:2] == ["Assassin Dedication", "Mark for Death"], names
    assert {"Expert Backstabber", "Surprise Attack"} <= set(names) and "Angel of Death" not in names, names
    assert len([a for a in sb.abilities if a.source_type == "creature"]) <= 2
    cols = {s.field: s.column for s in sb.stats if s.field.startswith("skill:")}
    assert cols["skill:Stealth"] == "high" and "skill:Deception" in cols, cols
    md = render_statblock_markdown(sb)
    assert "the Assassin archetype's feats" in md and "Mark for Death** (action" in md
    assert not re.search(r"activity\. Assassin\b", md)
    # a level 1 NPC has no feat of 2nd level: the archetype gives its build and skills only
    low = build_creature(CreatureRequest(level=1, concept="assassin"), resolver)
    assert low.role == "skirmisher" and not [a for a in low.abilities if a.source_type != "creature"]
    # Athletics (Strength): a soldier; Medicine (Wisdom): a skill paragon; skills offered as a choice decide nothing
    # (the Cavalier's "trained in Nature or Society"): the default build, with the archetype's feats
    assert build_creature(CreatureRequest(level=5, concept="wrestler"), resolver).role == "soldier"
    medic = build_creature(CreatureRequest(level=5, concept="town medic"), resolver)
    assert medic.role == "skill paragon" and medic.stat("skill:Medicine") is not None
    cavalier = build_creature(CreatureRequest(level=5, concept="cavalier"), resolver)
    assert cavalier.role_from == "" and cavalier.archetype == "Cavalier"
    # a feat that needs another of the archetype's feats only with it (Call Your Shot needs Play to the Crowd)
    for level in range(2, 21):
        picked = {a.name for a in build_creature(CreatureRequest(level=level, concept="gladiator"), resolver).abilities}
        assert "Call Your Shot" not in picked or "Play to the Crowd" in picked
    # a background of the same name gives the build (Bounty Hunter), the archetype still its feats and what they grant
    hunter = build_creature(CreatureRequest(level=5, concept="bounty hunter"), resolver)
    assert hunter.role_from == "Bounty Hunter background" and "Hunt Prey" in {a.name for a in hunter.abilities}
    # a class named is its road map, not its class archetype
    assert build_creature(CreatureRequest(level=5, concept="rogue"), resolver).archetype is None
    # archetypes are feats of the people PCs are: a goblin archer takes the Archer's, a skeleton archer none
    assert build_creature(CreatureRequest(level=5, concept="goblin archer"), resolver).archetype == "Archer"
    assert build_creature(CreatureRequest(level=5, concept="skeleton archer"), resolver).archetype is None


def test_a_giant_spider_is_a_spider(resolver):
    from gmprep.core.creators.creature import build_creature, modifier_words
    from gmprep.core.creators.models import CreatureRequest

    # Monster Core names "giant" before another word on 21 creatures, none of them a giant (Giant Rat, Giant
    # Tarantula): there it sizes the kind the next word names; a "giant spider" borrowed a Stone Giant's build before
    assert modifier_words("giant spider", resolver) == {"giant"}
    assert modifier_words("giant spiders", resolver) == {"giant"} and modifier_words("giant wolves", resolver) == {"giant"}
    assert not modifier_words("frost giant", resolver) and not modifier_words("giant chief", resolver)
    assert not modifier_words("goblin archer", resolver)  # Goblin Warrior and three goblins more: a kind
    # "spider" is no trait, but the last word of two names whose creatures share one (Hunting and Goliath Spider)
    assert "spider" in resolver.kind_heads and not {"warrior", "scout", "queen"} & resolver.kind_heads
    for level, lender in ((2, "Hunting Spider"), (8, "Goliath Spider")):
        for concept in ("giant spider", "giant spiders"):
            sb = build_creature(CreatureRequest(level=level, concept=concept), resolver)
            assert sb.role_from == lender and {a.source_name for a in sb.abilities} == {lender}, (concept, sb.abilities)
    # the head noun names the kind, not a word before it: a drake rider is a rider (a person), no drake
    rider = build_creature(CreatureRequest(level=5, concept="drake rider"), resolver)
    assert "Drake" not in rider.role_from and not any("Drake" in a.source_name for a in rider.abilities)
    # a giant is still a giant, and a plural names its kind as the singular does
    assert build_creature(CreatureRequest(level=8, concept="frost giant"), resolver).role_from == "Frost Giant"
    assert {a.source_name for a in build_creature(CreatureRequest(level=2, concept="wolves"), resolver).abilities} == \
        {"Wolf"}
    assert all("Goblin" in a.source_name for a in
               build_creature(CreatureRequest(level=2, concept="goblins"), resolver).abilities)


def test_a_casters_top_three_ranks_and_cantrips_are_filled(resolver):
    from gmprep.core.creators.creature import build_creature, render_statblock_markdown
    from gmprep.core.creators.models import CreatureRequest

    # GM Core: "fill just the top three ranks of spells, pick cantrips"; the spells are the corpus's, on the tradition's
    # list as Monster Core's casters show it (the corpus's spells carry no tradition)
    lists = resolver.spell_lists
    assert set(lists) == {"arcane", "divine", "occult", "primal"} and lists["divine"]["heal"] > 0
    by_id = {n.node_id: n for n in resolver.spells}
    wizard = build_creature(CreatureRequest(level=7, concept="court wizard"), resolver)
    assert [sr.rank for sr in wizard.spells] == [4, 3, 2, 0], wizard.spells
    slots = dict(wizard.slots)
    seen: list[str] = []
    for sr in wizard.spells:
        assert len(sr.ids) == (5 if sr.rank == 0 else slots[sr.rank]), sr
        for sid in sr.ids:
            node = by_id[sid]
            assert node.name.lower() in lists["arcane"], node.name
            kind = node.fields.get("spell_kind")
            if sr.rank == 0:
                assert kind == "cantrip", node.name
            else:
                # its own rank or up to two below, heightened; an incapacitation spell only in the highest rank
                assert kind == "spell" and sr.rank - 2 <= node.level <= sr.rank, (node.name, node.level, sr.rank)
                assert sr.rank == 4 or "incapacitation" not in {t.lower() for t in node.traits}, node.name
        seen += sr.ids
    assert len(seen) == len(set(seen))  # no spell twice
    md = render_statblock_markdown(wizard)
    assert "**4th** (2 slots) " + ", ".join(wizard.spells[0].names) in md
    assert "pf2e:rule:gm-core--spells" in {c.id for c in wizard.citations}
    # the theme leads: a fire cultist's primal spells and cantrips include fire ones
    fire = build_creature(CreatureRequest(level=6, concept="fire cultist", tradition="primal"), resolver)
    assert fire.role == "spellcaster" and fire.casting == "Spontaneous"  # GM Core's Spellcaster: slots, not innate
    fiery = [n for sr in fire.spells for n in sr.ids if "fire" in {t.lower() for t in by_id[n].traits}]
    assert len(fiery) >= 2, [sr.names for sr in fire.spells]
    # a role without slots (a soldier) gets none
    assert not build_creature(CreatureRequest(level=6, concept="orc brute"), resolver).spells


def test_the_creature_a_concept_names_lends_at_any_level(resolver):
    from gmprep.core.creators.creature import build_creature
    from gmprep.core.creators.models import CreatureRequest

    # a level-2 "sea serpent" is Monster Core's level-12 Sea Serpent made small: its own abilities, not a Warg's
    sb = build_creature(CreatureRequest(level=2, concept="sea serpent"), resolver)
    assert sb.role_from == "Sea Serpent" and "Sea Serpent" in {a.source_name for a in sb.abilities}, sb.abilities
    assert "Warg" not in {a.source_name for a in sb.abilities}


def test_a_magical_striker_casts_a_rank_below(resolver):
    from gmprep.core.creators.creature import build_creature, render_statblock_markdown
    from gmprep.core.creators.models import CreatureRequest

    # GM Core's Magical Striker: "prepared or spontaneous spells with a rank up to half the creature's level (rounded
    # up) minus 1"; a spellcaster of the same level casts 4th-rank spells at 7th level, the striker 3rd
    caster = build_creature(CreatureRequest(level=7, role="spellcaster", concept="eldritch knight"), resolver)
    striker = build_creature(CreatureRequest(level=7, role="magical striker", concept="eldritch knight"), resolver)
    assert caster.slots[0][0] == 4 and striker.slots[0][0] == 3 and striker.cantrips == (5, 3)
    assert striker.casting == "Spontaneous" and [sr.rank for sr in striker.spells] == [3, 2, 1, 0]
    assert "minus 1 for a magical striker" in render_statblock_markdown(striker)
    # at 1st level it has cantrips only
    low = build_creature(CreatureRequest(level=1, role="magical striker", concept="eldritch knight"), resolver)
    assert low.slots == [] and low.cantrips == (5, 1)


def test_an_npc_has_its_peoples_senses_and_languages(resolver):
    from gmprep.core.creators.creature import build_creature, render_statblock_markdown
    from gmprep.core.creators.models import CreatureRequest

    # GM Core's "Perception and Senses" and "Languages": a dwarf sees in the dark (every Monster Core dwarf does; the
    # ancestry entry does not print its vision) and speaks its ancestry's languages
    dwarf = build_creature(CreatureRequest(level=5, concept="dwarven blacksmith"), resolver)
    assert dwarf.senses == ["Darkvision"] and dwarf.languages == ["Common", "Dwarven"]
    md = render_statblock_markdown(dwarf)
    assert "; Darkvision <!--" in md and "**Languages** Common, Dwarven" in md
    assert build_creature(CreatureRequest(level=5, concept="elven archer"), resolver).senses == ["Low-Light Vision"]
    human = build_creature(CreatureRequest(level=5, concept="human fighter"), resolver)
    assert human.senses == [] and "Common" in human.languages
    # a person of no named kind speaks Common, "to speak to the PCs"; a creature named whole has its own
    assert build_creature(CreatureRequest(level=5, concept="bandit boss"), resolver).languages == ["Common"]
    serpent = build_creature(CreatureRequest(level=5, concept="sea serpent"), resolver)
    assert serpent.senses == ["Darkvision"] and serpent.senses_from == "the Sea Serpent's"


def test_a_hazard_counts_as_gm_cores_hazard_experience_says(resolver):
    from gmprep.core.creators.encounter import evaluate_encounter, parse_encounter

    spec = parse_encounter("Encounter (4 PCs, level 3): 2 goblin warriors, scythe blades, slamming door, "
                           "wheel of misery")
    report = evaluate_encounter(spec, resolver)
    by = {c.name: c for c in report.creatures}
    # simple: a fifth of a creature's XP (level 4 = party + 1: 60 / 5; level 1 = party - 2: 20 / 5); complex: a creature's
    assert (by["Scythe Blades"].hazard, by["Scythe Blades"].xp_each) == ("simple", 12)
    assert (by["Slamming Door"].hazard, by["Slamming Door"].xp_each) == ("simple", 4)
    assert (by["Wheel Of Misery"].hazard, by["Wheel Of Misery"].xp_each) == ("complex", 120)
    assert report.xp == 20 + 12 + 4 + 120 and not report.unknown
    assert any(c.id == "pf2e:rule:gm-core--hazard-experience" for c in report.citations)
    assert any("a fifth of a creature's" in line for line in report.explanation)


def test_a_fight_with_a_trap_places_a_held_hazard_in_the_budget(resolver):
    from gmprep.core.creators.encounter import build_encounters, unmatched_theme

    options = build_encounters(4, 5, "moderate", ["undead", "trap"], resolver)
    assert options
    for o in options:
        hazards = [c for c in o.creatures if c.hazard]
        assert len(hazards) == 1 and o.threat == "moderate" and o.xp <= 80, o
        assert all(c.hazard or c.id for c in o.creatures)
    # the trap is no theme of creatures: the undead match, nothing is said to be unmatched
    assert unmatched_theme(5, ["undead", "trap"], resolver, options) is None
    haunts = build_encounters(4, 4, "severe", ["haunt"], resolver)
    assert all(any(c.hazard and "haunt" in c.name.lower() or c.name == "Spectral Reflection" for c in o.creatures)
               for o in haunts)


def test_with_no_theme_the_options_are_common_and_vary_by_level(resolver):
    from gmprep.core.creators.encounter import build_encounters

    # name order put Aapoph Serpentfolk and the Adamantine Dragons first at every level
    first = {lv: [c.name for o in build_encounters(4, lv, "moderate", [], resolver) for c in o.creatures]
             for lv in (5, 6)}
    assert first[5] != first[6]
    assert first[5] == [c.name for o in build_encounters(4, 5, "moderate", [], resolver) for c in o.creatures]
    leads = [resolver.resolve(o.creatures[0].name) for o in build_encounters(4, 5, "moderate", [], resolver)]
    assert all((n.rarity or "common") == "common" for n in leads), [(n.name, n.rarity) for n in leads]
