"""Encounter arithmetic, exact against GM Core's tables, through the real store's creatures."""

from __future__ import annotations

import pytest

from gmprep.core.creators import tables
from gmprep.core.creators.encounter import (
    build_encounters,
    evaluate_encounter,
    parse_encounter,
)
from gmprep.core.creators.models import THREATS

# GM Core p. 75 (Encounter Budget) and the creature XP table, as printed
PRINTED_BUDGET = {"trivial": (40, 10), "low": (60, 20), "moderate": (80, 20), "severe": (120, 30), "extreme": (160, 40)}
PRINTED_XP = {-4: 10, -3: 15, -2: 20, -1: 30, 0: 40, 1: 60, 2: 80, 3: 120, 4: 160}
PARTY_LEVEL = 5  # creature levels 1..9 all exist in Monster Core


def _expected_threat(xp: int, budget: dict[str, int]) -> str:
    # the rule stated in tables.threat_for_xp, written out independently: lowest budget not exceeded
    order = [t for t in THREATS if t == "trivial" or budget[t] >= budget["trivial"]]
    return next((t for t in order if xp <= budget[t]), "extreme")


@pytest.fixture(scope="module")
def by_level(resolver):
    out = {}
    for node in resolver.creatures():
        out.setdefault(node.level, node)
    return out


@pytest.mark.parametrize("party_size", range(1, 9))
@pytest.mark.parametrize("delta", range(-4, 5))
def test_xp_and_threat_exact(resolver, by_level, party_size, delta):
    node = by_level[PARTY_LEVEL + delta]
    budget = {t: max(0, b + adj * (party_size - 4)) for t, (b, adj) in PRINTED_BUDGET.items()}
    for count in (1, 2, 3):
        spec = parse_encounter(f"Encounter ({party_size} PCs, level {PARTY_LEVEL}): {count} {node.name}")
        report = evaluate_encounter(spec, resolver)
        assert report.budget == budget
        assert [c.id for c in report.creatures] == [node.node_id]
        assert report.creatures[0].xp_each == PRINTED_XP[delta]
        assert report.xp == count * PRINTED_XP[delta]
        assert report.threat == _expected_threat(report.xp, budget)


def test_threat_between_budgets_is_the_lowest_budget_not_exceeded():
    b = tables.encounter_budget(4)
    assert [tables.threat_for_xp(x, b) for x in (0, 40, 41, 60, 61, 80, 81, 120, 121, 160, 400)] == [
        "trivial", "trivial", "low", "low", "moderate", "moderate", "severe", "severe", "extreme", "extreme", "extreme"]


def test_issue_example(resolver):
    r = evaluate_encounter(parse_encounter("Encounter (4 PCs, level 3): 2 goblin warriors, goblin war chanter, elite wolf"), resolver)
    assert [(c.id, c.count, c.level, c.adjustment, c.xp_each) for c in r.creatures] == [
        ("pf2e:creature:goblin-warrior", 2, -1, None, 10), ("pf2e:creature:goblin-war-chanter", 1, 1, None, 20),
        ("pf2e:creature:wolf", 1, 2, "elite", 30)]
    assert (r.xp, r.threat) == (70, "moderate")
    assert any(c.page == "75" for c in r.citations)


# Monster Core pp. 6-7, as printed: level change and HP change by starting level
ELITE_HP = [(-1, 10), (0, 10), (1, 10), (2, 15), (4, 15), (5, 20), (19, 20), (20, 30), (24, 30)]
WEAK_HP = [(1, -10), (2, -10), (3, -15), (5, -15), (6, -20), (20, -20), (21, -30), (24, -30)]


def test_elite_weak_levels_and_xp_for_every_creature(resolver):
    for node in resolver.creatures():
        elite = node.level + (2 if node.level in (-1, 0) else 1)
        weak = node.level - (2 if node.level == 1 else 1)
        for adj, lvl in (("elite", elite), ("weak", weak)):
            party = node.level
            r = evaluate_encounter(parse_encounter(f"{adj} {node.name}"), resolver, 4, party)
            assert r.creatures[0].level == lvl and r.creatures[0].adjustment == adj
            assert r.creatures[0].xp_each == PRINTED_XP.get(lvl - party, 0)


@pytest.mark.parametrize("level,hp", ELITE_HP)
def test_elite_hp(level, hp):
    assert tables.adjustment_hp(level, "elite") == hp


@pytest.mark.parametrize("level,hp", WEAK_HP)
def test_weak_hp(level, hp):
    assert tables.adjustment_hp(level, "weak") == hp


def test_modifiers():
    assert (tables.adjustment_modifier("elite"), tables.adjustment_modifier("weak")) == (2, -2)


def test_warnings_and_unknown(resolver):
    r = evaluate_encounter(parse_encounter("Encounter (4 PCs, level 1): ogre boss, 3 ogre warriors, gobln pyro"), resolver)
    assert any("more than 4 levels above" in w for w in r.warnings) or any("above the extreme budget" in w for w in r.warnings)
    assert r.unknown[0].text == "gobln pyro" and r.unknown[0].suggestions[0] == "Goblin Pyro"
    big = evaluate_encounter(parse_encounter("6 ogre warriors"), resolver, 4, 3)
    assert big.threat == "extreme" and any("above the extreme budget" in w for w in big.warnings)


@pytest.mark.parametrize("threat", THREATS[1:])
def test_build_hits_the_threat_deterministically(resolver, threat):
    a = build_encounters(4, 3, threat, ["undead"], resolver)
    assert a and a == build_encounters(4, 3, threat, ["undead"], resolver)
    for r in a:
        assert r.threat == threat and r.xp <= r.budget[threat]
        assert all(-4 <= c.level - 3 <= 4 for c in r.creatures)
    assert any("undead" in t for r in a for c in r.creatures for t in [resolver.resolve(c.name).traits])


def test_build_follows_a_theme_no_creature_is_named_for(resolver):
    # "haunted crypt" is no trait and no creature's name: its meaning picks the undead (before, the words matched
    # nothing and the options were the level's first creatures by name: Aapoph Serpentfolk, Animated Statue, Ankhrav)
    crypt = build_encounters(4, 3, "severe", ["haunted crypt"], resolver)
    assert crypt
    for r in crypt:
        assert "undead" in resolver.resolve(r.creatures[0].name).traits, [c.name for c in r.creatures]
    # one value of several words is those words, as the chat's request gives them
    assert crypt == build_encounters(4, 3, "severe", ["haunted", "crypt"], resolver)


def test_a_theme_monster_core_has_no_creature_for_is_said(resolver):
    from gmprep.core.creators.chat import creators_answer
    from gmprep.core.creators.encounter import unmatched_theme

    # Monster Core has no bandits: the closest creature in meaning is a Zombie Brute; the options still fit the budget
    # and the builders say they do not follow the theme
    note = unmatched_theme(3, ["bandits on the road"], resolver)
    assert note and "“bandits on the road”" in note and "gmprep creature" in note
    assert build_encounters(4, 3, "moderate", ["bandits on the road"], resolver)
    # themes it has creatures for: by a trait word (goblin), by meaning (a crypt's undead), no theme
    for words in (["goblin warband"], ["haunted crypt"], []):
        assert unmatched_theme(3, words, resolver) is None, words
    answer = creators_answer("Build a moderate encounter for 4 level 3 PCs: bandits on the road", lambda: resolver)
    assert answer is not None and "No Monster Core creature of these levels is close to" in answer.text
    # ... and offers GM Core's quick groups of bandits to build, citing the page that prints them
    assert "Lieutenant and Lackeys" in answer.text and "- 1 bandit lieutenant (level 3)" in answer.text
    assert "pf2e:rule:gm-core--xp-budget" in {c.source_id for c in answer.citations}
    crypt = creators_answer("Build a moderate encounter for 4 level 3 PCs: a haunted crypt", lambda: resolver)
    assert crypt is not None and "is close to" not in crypt.text


@pytest.mark.parametrize("text,size,level", [
    ("Encounter (4 PCs, level 3): 2 wolves", 4, 3),
    ("Encounter for 4 level-3 PCs: 2 wolves", 4, 3),
    ("Encounter for four 3rd-level characters: 2 wolves", 4, 3),
    ("Encounter (party of six, lvl 7): 2 wolves", 6, 7),
    ("Encounter (3 players, 4th-level): 2 wolves", 3, 4),
])
def test_party_phrasings(text, size, level):
    spec = parse_encounter(text)
    assert (spec.party_size, spec.party_level) == (size, level)
    assert [(ln.name, ln.count) for ln in spec.lines] == [("wolves", 2)]


def test_item_phrasings():
    spec = parse_encounter("Encounter (4 PCs, level 3): two goblin warriors and the goblin war chanter; wolf x3, "
                           "[[Goblin Pyro]] (x2), 2x weak giant rats")
    assert [(ln.name, ln.count, ln.adjustment) for ln in spec.lines] == [
        ("goblin warriors", 2, None), ("goblin war chanter", 1, None), ("wolf", 3, None), ("Goblin Pyro", 2, None),
        ("giant rats", 2, "weak")]


@pytest.mark.parametrize("size,level", [(0, 3), (21, 3), (40, 3), (4, 30), (4, -5)])
def test_build_refuses_a_party_the_tables_do_not_cover(resolver, size, level):
    from gmprep.common.errors import GmprepError

    # before, a party of 0 got "no encounter fits", and one of 40 enumerated every count of three kinds (33 s) first
    with pytest.raises(GmprepError, match="outside what the encounter tables cover"):
        build_encounters(size, level, "severe", [], resolver)


def test_a_level_written_beside_a_creature():
    # NPCs from other books and homebrew foes, as GMs list them: the level in parentheses (beside other words: a comma
    # inside the parentheses does not split the item), before the name, or after it
    spec = parse_encounter("Encounter (4 PCs, level 3): 2 bandits (level 2), bandit captain (creature 4, NPC Core); "
                           "3 level-1 elite thugs, a 2nd-level cultist, ruffian lvl 0, wolf x2 (lvl 1), ogre warrior")
    assert [(ln.name, ln.count, ln.adjustment, ln.level) for ln in spec.lines] == [
        ("bandits", 2, None, 2), ("bandit captain", 1, None, 4), ("thugs", 3, "elite", 1), ("cultist", 1, None, 2),
        ("ruffian", 1, None, 0), ("wolf", 2, None, 1), ("ogre warrior", 1, None, None)]


def test_a_creature_monster_core_lacks_counts_at_the_level_written(resolver):
    r = evaluate_encounter(parse_encounter(
        "Encounter (4 PCs, level 3): 2 bandits (level 2), elite bandit captain (level 4), goblin warrior (level 1)"),
        resolver)
    assert not r.unknown
    # GM Core p. 75: party level - 1 is 30 XP, + 2 (the elite captain, level 5) 80, - 2 20
    assert [(c.name, c.id, c.level, c.xp_each) for c in r.creatures] == [
        ("bandits", None, 2, 30), ("bandit captain", None, 5, 80),
        ("Goblin Warrior", "pf2e:creature:goblin-warrior", 1, 20)]
    assert r.xp == 160 and r.threat == "extreme"
    # the written level wins over Monster Core's, and the report says so; the entry is still cited
    assert any("Goblin Warrior is level -1 in Monster Core; counted at level 1" in w for w in r.warnings)
    assert "pf2e:creature:goblin-warrior" in {c.id for c in r.citations}
    # far above or below the party, as a Monster Core creature would be (this raised an AttributeError first)
    far = evaluate_encounter(parse_encounter("Encounter (4 PCs, level 5): bandit king (level 12), urchin (level -1)"),
                             resolver)
    assert any("bandit king (level 12) is more than 4 levels above" in w for w in far.warnings)
    assert any("urchin (level -1) is more than 4 levels below" in w for w in far.warnings)
    # a level no creature has is not counted; a creature with neither an entry nor a level says how to give one
    bad = evaluate_encounter(parse_encounter("Encounter (4 PCs, level 3): bandits (level 40), 2 bandits"), resolver)
    assert not bad.creatures and any("outside creature levels" in w for w in bad.warnings)
    assert bad.unknown[0].text == "bandits" and any("write its level: 'bandits (level N)'" in w for w in bad.warnings)


def test_gm_cores_quick_adventure_groups_are_read_from_its_entry(resolver):
    # GM Core p. 75 prints seven groups; each group's XP is what the creature XP table gives its creatures for four
    # characters (the parse checked against the book's own arithmetic)
    groups = resolver.quick_groups
    assert [g.name for g in groups] == ["Boss and Lackeys", "Boss and Lieutenant", "Elite Enemies",
                                        "Lieutenant and Lackeys", "Mated Pair", "Troop", "Mook Squad"]
    for g in groups:
        assert g.xp == sum(m.count * tables.creature_xp(10 + m.delta, 10) for m in g.members), g
    assert [(m.count, m.delta, m.part) for m in groups[0].members] == [(1, 2, "Boss"), (4, -4, "Lackeys")]
    assert resolver.quick_groups_entry.page == "75"


@pytest.mark.parametrize("size,level,threat", [(4, 3, "severe"), (4, 5, "moderate"), (5, 3, "severe"), (3, 6, "low"),
                                               (6, 1, "moderate")])
def test_a_theme_of_people_gets_quick_groups_to_build(resolver, size, level, threat):
    from gmprep.core.creators.encounter import render_encounter_block, unmatched_theme

    # Monster Core has no bandits: the options are GM Core's quick groups of them at the levels the groups give,
    # each line written with its level, so the block the builder writes counts to the same threat in a note
    reports = build_encounters(size, level, threat, ["bandits on the road"], resolver)
    people = [r for r in reports if r.structure]
    assert people and reports[: len(people)] == people
    for r in people:
        assert r.threat == threat and r.xp <= r.budget[threat] and not r.unknown
        assert all(c.id is None and c.name.startswith("bandit") for c in r.creatures)
        assert "pf2e:rule:gm-core--xp-budget" in {c.id for c in r.citations}
        again = evaluate_encounter(parse_encounter(render_encounter_block(r)), resolver)
        assert (again.xp, again.threat, again.unknown) == (r.xp, r.threat, [])
    if (size, level, threat) == (4, 3, "severe"):
        assert [(c.name, c.count, c.level) for c in people[0].creatures] == [
            ("bandit boss", 1, 5), ("bandit lackeys", 4, -1)]
        note = unmatched_theme(level, ["bandits on the road"], resolver, reports)
        assert note and '`gmprep creature "bandit boss" --level 5`' in note
    # a theme Monster Core has creatures for keeps its creatures
    assert not [r for r in build_encounters(size, level, threat, ["undead"], resolver) if r.structure]


def test_a_place_monster_core_has_nothing_for_is_no_people(resolver):
    from gmprep.core.creators import concept
    from gmprep.core.creators.encounter import unmatched_theme

    # "desert" is close to no Monster Core creature and is a place, not people: no "desert boss" groups (as there were
    # for a first version), the options fit the budget and the note says only that; "smugglers" names no background
    # and is people by meaning
    for theme in ("desert", "canyon"):
        assert concept.people_margin(theme) < concept.PEOPLE_MARGIN
        reports = build_encounters(4, 3, "severe", [theme], resolver)
        assert reports and not [r for r in reports if r.structure]
        note = unmatched_theme(3, [theme], resolver, reports)
        assert note and "fit the budget, not the theme" in note and "human foes" not in note
    assert concept.people_margin("smugglers") >= concept.PEOPLE_MARGIN
    assert build_encounters(4, 3, "severe", ["smugglers"], resolver)[0].structure == "Boss and Lackeys"


def test_a_written_level_below_zero():
    spec = parse_encounter("Encounter (4 PCs, level 3): 4 bandit lackeys (level -1), rat (creature -1), level-1 thug")
    assert [(ln.name, ln.level) for ln in spec.lines] == [("bandit lackeys", -1), ("rat", -1), ("thug", 1)]


def test_people_lead_the_creatures_the_theme_also_names(resolver):
    from gmprep.core.creators.encounter import render_encounter_block, unmatched_theme

    # "cultists in the sewer": Monster Core has sewer creatures and no cultists. The people lead GM Core's quick groups
    # and the lackeys are the sewer's creatures at the group's level (party level - 4 = 1: the Sewer Ooze); before, the
    # sewer matched and the cultists were dropped (4 Sewer Ooze and a Succubus)
    reports = build_encounters(4, 5, "severe", ["cultists", "sewer"], resolver)
    first = reports[0]
    assert first.structure == "Boss and Lackeys"
    assert [(c.name, c.id, c.count, c.level) for c in first.creatures] == [
        ("cultist boss", None, 1, 7), ("Sewer Ooze", "pf2e:creature:sewer-ooze", 4, 1)]
    assert (first.xp, first.threat) == (120, "severe")
    again = evaluate_encounter(parse_encounter(render_encounter_block(first)), resolver)
    assert (again.xp, again.threat, again.unknown) == (120, "severe", [])
    note = unmatched_theme(5, ["cultists", "sewer"], resolver, reports)
    assert note and "“cultists”" in note and '`gmprep creature "cultist boss" --level 7`' in note
    # one phrase of several words, as the chat's request or the CLI's --traits "bandits with wolves" gives it
    assert build_encounters(4, 5, "moderate", ["bandits with wolves"], resolver)[0].creatures[1].name == "Wolf"
    # the other phrase matches no creature at the groups' levels alone ("Urgathoa": the whole theme's undead): one
    # group of the people themselves, then the theme's creatures
    urgathoa = build_encounters(4, 5, "severe", ["cultists of Urgathoa"], resolver)
    assert urgathoa[0].structure and urgathoa[0].creatures[0].name == "cultist boss"
    assert urgathoa[1:] and not [r for r in urgathoa[1:] if r.structure]
    # beside creatures Monster Core has, a phrase is people when it names a background or class or is close to people
    # in meaning (``_is_people``): "thieves guild ambush" of the chat's "a thieves guild ambush in the sewers" (before,
    # dropped: Sewer Ooze and a Weretiger); not a place or a word
    thieves = build_encounters(4, 5, "moderate", ["thieves guild ambush in the sewers"], resolver)[0]
    assert [(c.name, c.id) for c in thieves.creatures] == [("thief lieutenant", None),
                                                          ("Sewer Ooze", "pf2e:creature:sewer-ooze")]
    for theme in (["fire", "volcano"], ["haunted", "crypt"], ["undead", "swamp"]):
        assert not [r for r in build_encounters(4, 5, "severe", theme, resolver) if r.structure], theme


def test_a_creature_the_note_stats_itself(resolver):
    from gmprep.core.creators.statblock import note_creatures

    note = ("## Bog Hag\n\n**Creature 3** (uncommon, humanoid)\n\n**Perception** +9\n\n**AC** 19; **Fort** +9\n\n"
            "**HP** 45\n\n## Encounter (4 PCs, level 3)\n\n- 2 bog hags\n- wolf\n")
    known = note_creatures(note)
    assert known == {"bog hag": 3}
    spec = parse_encounter("Encounter (4 PCs, level 3): 2 bog hags, wolf")
    r = evaluate_encounter(spec, resolver, known=known)
    assert not r.unknown and [(c.name, c.id, c.level, c.xp_each) for c in r.creatures] == [
        ("bog hags", None, 3, 40), ("Wolf", "pf2e:creature:wolf", 1, 20)]
    assert any("this note's statblock" in line for line in r.explanation)
    # without the note's statblocks the hag is unknown
    assert evaluate_encounter(spec, resolver).unknown[0].text == "bog hags"


def test_what_the_theme_calls_its_people():
    from gmprep.core.creators.groups import theme_people

    persons = frozenset({"guard", "bandit", "cultist"})
    assert theme_people("bandits on the road", persons) == ("bandit", "bandits")
    assert theme_people("cultists of Urgathoa", persons) == ("cultist", "cultists")
    # cut after the last word naming a background or class: "city guard ambush" is a city guard's
    assert theme_people("city guard ambush", persons) == ("city guard", "city guards")
    assert theme_people("bandit ambush", persons) == ("bandit", "bandits")
    assert theme_people("witch coven", frozenset({"witch"})) == ("witch", "witches")
    assert theme_people("thieves guild", persons) == ("thieves guild", "thieves guild")
    assert theme_people("the mercenaries, docks") == ("mercenary", "mercenaries")
    # no background's or class's word: cut after the word closest to people in meaning (MiniLM, as the encounter
    # builder reads it): "2 thieves", not "2 thieves guild"
    from gmprep.core.creators.concept import people_margin

    assert theme_people("thieves guild", persons, people_margin) == ("thief", "thieves")
    assert theme_people("mercenary company", persons, people_margin) == ("mercenary", "mercenaries")
    assert theme_people("bandit camp", persons, people_margin) == ("bandit", "bandits")  # the background's word first


def test_a_theme_is_matched_by_names_and_traits_not_by_stat_block_text(resolver):
    from gmprep.core.creators.encounter import unmatched_theme

    # "city guard ambush": "ambush" and "guard" are in a Crocodile's text (Aquatic Ambush, off-guard), and the Guard
    # Dog's name calls up "guard"; neither made Monster Core match the theme (the Guard Dog was the first option). A
    # city guard is people: the quick groups of city guards
    for level in (1, 3):
        reports = build_encounters(4, level, "moderate", ["city guard ambush"], resolver)
        assert reports[0].structure and reports[0].creatures[0].name.startswith("city guard"), reports[0].creatures
    # a background named by a participle describes someone: a haunted crypt stays a crypt's undead (Haunted, PC2)
    assert unmatched_theme(3, ["haunted crypt"], resolver) is None
    # "town watch" matched an Arboreal Warden through two words of text; it is said to be unmatched now
    note = unmatched_theme(3, ["town watch"], resolver)
    assert note and "fit the budget, not the theme" in note
