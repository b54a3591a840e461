"""Monster Core's elite and weak adjustments on a creature's printed stat block (``core/creators/adjust.py``), through
the builder, the chat and the CLI, on the bundled corpus (real SQLite store)."""

from __future__ import annotations

import re
from types import SimpleNamespace

from gmprep.cli import main


def _line(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(start))


def test_elite_moves_every_number_monster_core_names(resolver):
    from gmprep.core.creators.adjust import adjust_creature

    ogre = adjust_creature(resolver.resolve("ogre warrior"), "elite")
    # Ogre Warrior: level 3, Perception +5, Athletics +12, AC 17, Fort +11, HP 50, Ogre Hook +12 1d10+7
    assert (ogre.name, ogre.level, ogre.base_level) == ("Elite Ogre Warrior", 4, 3)
    assert "**Creature 4**" in ogre.text and _line(ogre.text, "**Perception**").startswith("**Perception** +7;")
    assert _line(ogre.text, "**Skills**") == "**Skills** Athletics +14, Intimidation +11"
    assert _line(ogre.text, "**AC**") == "**AC** 19; **Fort** +13, **Ref** +8, **Will** +7"
    assert _line(ogre.text, "**HP**") == "**HP** 65"  # +15 from starting level 3 (levels 2-4)
    hook = _line(ogre.text, "**Melee strike** Ogre Hook")
    assert "Ogre Hook +14 ([one-action])" in hook and hook.endswith("**Damage** 1d10+9 piercing")
    assert _line(ogre.text, "**Str**") == "**Str** +5, **Dex** -1, **Con** +4, **Int** -2, **Wis** +0, **Cha** -2"
    assert [c.id for c in ogre.citations] == ["pf2e:creature:ogre-warrior", "pf2e:rule:gm-screen--monster-adjustments"]


def test_a_limited_ability_moves_by_twice_as_much_and_the_main_damage_moves(resolver):
    from gmprep.core.creators.adjust import adjust_creature

    dragon = adjust_creature(resolver.resolve("Omen Dragon (Young)"), "elite")
    # the Strike's damage with a modifier moves, the added 1d8 mental does not; the breath (1d4 rounds) moves by 4
    assert _line(dragon.text, "**Melee strike** Jaws").endswith("**Damage** 1d8 mental plus 2d8+7 piercing")
    breath = _line(dragon.text, "**Destiny Breath**")
    assert "dealing 6d6+4 mental damage" in breath and "(DC 27 Will save)" in breath
    assert _line(dragon.text, "**Occult Innate Spells**") == "**Occult Innate Spells** DC 27, attack +19"
    assert "Destiny Breath's damage +4 (limited uses)" in dragon.changes


def test_weak_goes_down_and_two_levels_from_level_1(resolver):
    from gmprep.core.creators.adjust import adjust_creature

    chanter = adjust_creature(resolver.resolve("goblin war chanter"), "weak")
    assert chanter.level == -1 and "**Creature -1**" in chanter.text
    assert _line(chanter.text, "**HP**") == "**HP** 6"
    assert _line(chanter.text, "**Melee strike** Dogslicer").endswith("**Damage** 1d6 slashing")  # 1d6+2, -2
    assert _line(chanter.text, "**Ranged strike** Shortbow").endswith("**Damage** 1d6-2 piercing")
    assert _line(chanter.text, "**Occult Spontaneous Spells**") == "**Occult Spontaneous Spells** DC 15, attack +5"


def test_a_weapons_own_number_is_not_its_attack():
    from gmprep.core.creators.adjust import adjust_creature

    node = SimpleNamespace(name="Test Knight", level=5, node_id="pf2e:creature:test-knight", source_id=None,
                           book="Pathfinder Monster Core", page=None,
                           text="**Creature 5** (common, medium, human)\n\n"
                                "**Melee strike** +1 Striking Longsword +15 ([one-action]) (versatile P), "
                                "**Damage** 2d8+7 slashing")
    knight = adjust_creature(node, "elite")
    assert "+1 Striking Longsword +17 ([one-action])" in knight.text and knight.text.endswith("2d8+9 slashing")


def test_the_chat_and_the_cli_make_a_creature_elite(resolver, store_dir, capsys):
    from gmprep.core.creators.chat import creators_answer

    answer = creators_answer("Make an elite ogre warrior", lambda: resolver)
    assert answer is not None and answer.text.startswith("### Elite Ogre Warrior") and answer.outcome == "answered"
    assert {c.source_id for c in answer.citations} == {"pf2e:creature:ogre-warrior", "pf2e:rule:gm-screen--monster-adjustments"}
    answer = creators_answer("Can you give me a weak version of the ghoul stalker?", lambda: resolver)
    assert answer is not None and answer.text.startswith("### Weak Ghoul Stalker")
    # a kind, not a creature's name, with no level to build one: which names there are
    answer = creators_answer("Give me a weak troll", lambda: resolver)
    assert answer is not None and answer.outcome == "partial" and "Forest Troll" in answer.text
    assert creators_answer("What does the elite adjustment do?", lambda: resolver) is None  # a rules question
    assert main(["--store", str(store_dir), "creature", "elite ogre warrior"]) == 0
    assert re.search(r"\*\*AC\*\* 19;", capsys.readouterr().out)
    assert main(["--store", str(store_dir), "creature", "ogre bouncer"]) == 1  # no level, nothing to adjust
    assert "creature needs --level" in capsys.readouterr().err


def test_a_passive_rider_on_strikes_is_not_moved_twice(resolver):
    from gmprep.core.creators.adjust import adjust_creature

    # the wolf's Pack Attack ("1d4 extra damage") rides on its Strikes, which already gain +2
    wolf = adjust_creature(resolver.resolve("wolf"), "elite")
    assert "deal 1d4 extra damage" in wolf.text and not any("Pack Attack" in c for c in wolf.changes)
