"""Requests to the creators as GMs type them (core/creators/intent.py), and the chat route: a build
request is answered by the deterministic builders in ``gmprep ask`` (the same ``answer_question``
the editor's chat calls), a rules question is not."""

from __future__ import annotations

import shutil

import pytest

from gmprep.cli import main
from gmprep.core.creators.intent import parse_creature_request, parse_encounter_request


@pytest.mark.parametrize(("text", "threat", "size", "level", "words"), [
    ("moderate encounter for 4 level-3 PCs, undead, in a swamp", "moderate", 4, 3, ["undead", "swamp"]),
    ("build a moderate encounter for 4 level 3 PCs with undead", "moderate", 4, 3, ["undead"]),
    ("Can you build a severe encounter for five 3rd-level PCs with goblins?", "severe", 5, 3, ["goblins"]),
    ("extreme encounter, 6 PCs of level 10, dragons", "extreme", 6, 10, ["dragons"]),
    ("encounter for a party of 4 at level 2", "moderate", 4, 2, []),
    ("Low encounter (3 PCs, level 1) in a crypt", "low", 3, 1, ["crypt"]),
    # a theme after the party's colon is no written list of creatures
    ("Build a severe encounter for 4 level 5 PCs: cultists of Urgathoa in a crypt", "severe", 4, 5,
     ["cultists", "urgathoa", "crypt"]),
    # a fight asked for with a threat and a party; the GM's "my" and "threat" are no creature words
    ("I need a severe fight for 4 level 2 PCs with goblins", "severe", 4, 2, ["goblins"]),
    ("Make a low threat encounter, 3 players level 1, wolves", "low", 3, 1, ["wolves"]),
    ("Build an encounter for my party of 5 level 7 characters in a haunted forest", "moderate", 5, 7,
     ["haunted", "forest"]),
    # a GM's word for the encounter's difficulty is GM Core's threat its descriptions give it (severe: "the hardest
    # encounters most groups of characters have a good chance to defeat"), not a theme word; of a place it is the theme
    ("Build a hard encounter for 4 level 6 PCs in a haunted mansion", "severe", 4, 6, ["haunted", "mansion"]),
    ("Build a tough fight for 4 level 3 PCs with wolves", "severe", 4, 3, ["wolves"]),
    # a boss fight is the fight's shape, not a theme word; alone it is GM Core's severe ("confronting a final boss")
    ("Build a deadly boss fight for 4 level 5 PCs: a lich", "extreme", 4, 5, ["lich"]),
    ("Create a boss fight for a level 7 party of 5", "severe", 5, 7, []),
    ("Build a final boss encounter with bandits for 4 level 3 PCs", "severe", 4, 3, ["bandits"]),
    ("I want a climactic battle with a dragon for 4 level 12 PCs", "extreme", 4, 12, ["dragon"]),
    ("Build me an ambush with kobolds for four level 1 characters", "moderate", 4, 1, ["kobolds"]),
    # a party said by its level alone is four (GM Core's budgets are written for four); "level 3 PCs" is no party of 3
    ("Build an encounter in a sewer for a level 2 party", "moderate", 4, 2, ["sewer"]),
    ("Make a moderate encounter for level 3 PCs with goblins", "moderate", 4, 3, ["goblins"]),
    ("Build an easy encounter for 4 level 1 PCs", "trivial", 4, 1, []),
    ("Build an encounter for 4 level 5 PCs in a dangerous swamp", "moderate", 4, 5, ["dangerous", "swamp"]),
])
def test_encounter_requests(text, threat, size, level, words):
    req = parse_encounter_request(text)
    assert req is not None
    assert (req.threat, req.party_size, req.party_level, req.words) == (threat, size, level, words)
    assert req.boss == ("boss" in text)
    assert req.size_assumed == (text in ("Build an encounter in a sewer for a level 2 party",
                                         "Make a moderate encounter for level 3 PCs with goblins"))
    # the same words, as the phrases they were written in
    assert " ".join(req.phrases).split() == words


def test_the_chat_says_how_it_read_a_threat_word(resolver):
    from gmprep.core.creators.chat import encounter_options_markdown
    from gmprep.core.creators.encounter import build_encounters

    req = parse_encounter_request("Build a hard encounter for 4 level 6 PCs in a haunted mansion")
    assert req is not None and (req.threat, req.threat_word) == ("severe", "hard")
    md = encounter_options_markdown(req, build_encounters(4, 6, req.threat, req.words, resolver))
    assert md.startswith("**Severe encounter for 4 PCs, level 6** (“hard” read as GM Core's severe threat)"), md[:200]
    assert "120 XP" in md  # the severe budget for four


def test_encounter_request_phrases():
    req = parse_encounter_request("Build a severe encounter for 4 level 5 PCs: cultists of Urgathoa in a crypt")
    assert req is not None and req.phrases == ["cultists", "urgathoa", "crypt"]
    req = parse_encounter_request("moderate encounter for 4 level-3 PCs, city guard ambush, in the docks")
    # an ambush is the fight itself ("Build me an ambush with kobolds ..."), not a theme word
    assert req is not None and req.phrases == ["city guard", "docks"]


@pytest.mark.parametrize("text", [
    "What is the XP budget of a moderate encounter for 4 level 3 PCs?",  # a rules question
    "How do I build an encounter?",
    "Encounter (4 PCs, level 3): 2 goblin warriors, elite wolf",  # an encounter already written out
    "Encounter (4 PCs, level 3): goblin boss, 3 goblin warriors",
    "Encounter (4 PCs, level 3): elite wolf",
    "Encounter (4 PCs, level 3):\n- 2 goblin warriors\n- wolf",
    "moderate encounter for the party",  # no party size and level
    "moderate encounter for 12 level-3 PCs",  # outside the budget table's party sizes
    "The severe fight against 4 level 3 PCs went badly",  # a fight told, not asked for
    "level 4 brute: a bog troll",
])
def test_not_encounter_requests(text):
    assert parse_encounter_request(text) is None


@pytest.mark.parametrize(("text", "level", "role", "concept"), [
    ("level 4 brute: a bog troll", 4, "brute", "bog troll"),
    ("build a level 3 spellcaster NPC, a goblin shaman", 3, "spellcaster", "goblin shaman"),
    ("Insert creature statblock level 2 sniper kobold archer", 2, "sniper", "kobold archer"),
    ("creature 7 skirmisher: werewolf outrider", 7, "skirmisher", "werewolf outrider"),
    ("a 5th-level skill paragon, the guild forger", 5, "skill paragon", "guild forger"),
    ("stat block for a level -1 minion rat", -1, None, "minion rat"),  # no role said: the builder's to choose
    ("Can you build a level 3 brute? A bog troll", 3, "brute", "bog troll"),  # a polite request still builds
    # asked to build, a creature needs no role or "creature" word
    ("Create a level 2 goblin boss", 2, None, "goblin boss"),
    ("Stat out a level 2 goblin chieftain", 2, None, "goblin chieftain"),  # was "Out Goblin Chieftain"
    ("Scale the ogre warrior to level 6", 6, None, "ogre warrior"),
    # the NPC's own name is no part of its concept
    ("Make a level 3 NPC blacksmith named Gorim", 3, None, "blacksmith"),
    ("Create a level 5 elf wizard called Aelric Voss", 5, None, "elf wizard"),
    # a party said beside the creature is no part of it ("4 level" was the creature's level 4); without a level of its
    # own the creature is of the party's
    ("Create a lich for 4 level 12 PCs", 12, None, "lich"),
    ("Make a level 5 ogre for 4 level 3 PCs", 5, None, "ogre"),
    ("Can you make a 5th-level hag?", 5, None, "hag"),
    ("I need stats for a bandit captain, level 5", 5, None, "bandit captain"),
    ("Give me an NPC: a level 7 corrupt noble who is a skill paragon", 7, "skill paragon", "corrupt noble"),
    # the creature's noun phrase ends at a relative clause or a phrase of time, place or purpose ("Goblin Shaman
    # Tonight" was the statblock's name)
    ("I need a level 3 goblin shaman NPC for tonight", 3, None, "goblin shaman"),
    ("Create a level 3 bandit in the woods", 3, None, "bandit"),
    ("Create a level 2 NPC who is a wizard", 2, None, "wizard"),  # nothing before "who": all of it
    # what the creature is for is no encounter asked for (this went to the rules: Influence Stat Blocks)
    ("can you stat up a level 4 merchant npc for social encounters", 4, None, "merchant"),
])
def test_creature_requests(text, level, role, concept):
    req = parse_creature_request(text)
    assert req is not None
    assert (req.level, req.role, req.concept) == (level, role, concept)
    assert req.tradition is None


def test_a_word_after_the_last_comma_is_a_trait():
    req = parse_creature_request("Create a level 3 bandit captain NPC, human")
    assert req is not None and (req.concept, req.traits) == ("bandit captain", ["human"])
    # several words after the comma are the concept itself
    req = parse_creature_request("build a level 3 spellcaster NPC, a goblin shaman")
    assert req is not None and (req.concept, req.traits) == ("goblin shaman", [])


def test_a_creature_request_says_its_tradition():
    req = parse_creature_request("build a level 5 divine spellcaster, a cultist priest")
    assert req is not None and (req.tradition, req.concept) == ("divine", "cultist priest")
    req = parse_creature_request("Create a level 5 cult leader who casts divine spells")
    assert req is not None and (req.tradition, req.concept, req.role) == ("divine", "cult leader", None)


def test_a_tradition_said_is_spells(resolver):
    from gmprep.core.creators.creature import build_creature
    from gmprep.core.creators.models import CreatureRequest

    # no role said, but a tradition: GM Core's spellcaster (before, the soldier's build dropped the tradition)
    leader = build_creature(CreatureRequest(level=5, concept="cult leader", tradition="divine"), resolver)
    assert (leader.role, leader.tradition) == ("spellcaster", "divine") and leader.stat("spell_dc") is not None
    # a class the concept names keeps its own build
    assert build_creature(CreatureRequest(level=5, concept="dwarf fighter", tradition="divine"), resolver).role != \
        "spellcaster"


@pytest.mark.parametrize("text", [
    "What is the AC of a level 3 creature?",
    "moderate encounter for 4 level-3 PCs",  # an encounter request, not a creature
    "The troll is frightened 2",
    "level 30 brute",  # outside the building tables
    # a rules question that asks in a later sentence (not-in-corpus-tune6 nict6-010, nict6-007)
    "Suppose I am a level 1 cleric and I use it on a creature that is adjacent to me. How do I calculate the DC?",
    "I'm a 6th-level fighter with an item that grants a move action. Can I move toward my enemy and then Strike?",
    "What would a level 4 guard captain look like?",
    "The 5th-level wizard cast fireball",  # a level and no ask to build
])
def test_not_creature_requests(text):
    assert parse_creature_request(text) is None


def test_gmprep_ask_answers_a_build_request_with_the_builder(store_dir, tmp_path, capsys):
    store = tmp_path / "store"
    shutil.copytree(store_dir, store, ignore=shutil.ignore_patterns("READY", "*-wal", "*-shm"))
    assert main(["--store", str(store), "ask", "build a moderate encounter for 4 level 3 PCs with undead",
                 "--no-save", "--backend", "extractive"]) == 0
    out = capsys.readouterr()
    assert "```encounter\nparty: 4 PCs, level 3" in out.out and "Option 1" in out.out
    assert "Encounter Budget" in out.out and "Pathfinder GM Core, p. 75" in out.out  # the Sources list
    assert "creators" in out.err  # the backend that answered
    assert main(["--store", str(store), "ask", "level 4 brute: a bog troll", "--no-save",
                 "--backend", "extractive"]) == 0
    out = capsys.readouterr().out
    assert "**Creature 4**" in out and "built as a brute" in out and "GM Core, p. 117" in out


@pytest.mark.parametrize("question,xp,threat", [
    # GM Core p. 75 for 4 PCs of level 3: Goblin Warrior (level -1) 10 XP, Ogre Warrior (3) 40, War Chanter (1) 20
    ("How hard is this encounter for 4 level 3 PCs: 2 goblin warriors, an ogre warrior and a goblin war chanter?",
     80, "moderate"),
    ("What threat is 2 ogre warriors for 4 level 3 PCs?", 80, "moderate"),
    # level 2: 3 wolves (level 1) 30 XP each, the war chanter (1) 30
    ("Is a fight with 3 wolves and a goblin war chanter deadly for 4 level 2 PCs?", 120, "severe"),
    ("Encounter (4 PCs, level 3): 2 goblin warriors, elite wolf", 50, "low"),
    ("How much XP is an elite ogre warrior worth for 4 level-3 PCs?", 60, "low"),
    # creatures from other books, counted at the levels written
    ("Would 2 bandits (level 2) and a bandit captain (level 4) be a severe encounter for 4 level 3 PCs?", 120, "severe"),
])
def test_the_chat_rates_an_encounter_it_is_asked_about(resolver, question, xp, threat):
    from gmprep.core.creators.chat import creators_answer

    # before, these went to the rules search and the model ("The encounter is challenging for 4 level 3 PCs, with the
    # goblin war chanter adding a Performance check ...", all of it struck by the support check)
    answer = creators_answer(question, lambda: resolver)
    assert answer is not None and answer.backend == "creators"
    assert answer.text.startswith(f"### Encounter: {xp} XP, {threat}"), answer.text[:80]
    assert "pf2e:rule:gm-screen--encounter-budget" in {c.source_id for c in answer.citations}


@pytest.mark.parametrize("question", [
    "How does flanking work in an encounter for 4 level 3 PCs?",
    "What is the XP budget of a moderate encounter for 4 level 3 PCs?",
    "How hard is it for 4 level 3 PCs to Grapple an ogre warrior in combat?",
    "Can 4 level 3 PCs fight an ogre?",  # no creature is named "ogre": not a list to rate
    "How hard is this encounter: 2 goblin warriors and an ogre warrior?",  # no party
    # no question mark, the question after a comma (it built "Fighting That Too Hard", a level 1 soldier)
    "my level 1 party is fighting a level 4 creature, is that too hard",
])
def test_the_chat_leaves_rules_questions_to_the_rules(resolver, question):
    from gmprep.core.creators.chat import creators_answer

    assert creators_answer(question, lambda: resolver) is None


def test_the_chat_says_when_nothing_named_gave_the_build(resolver):
    from gmprep.core.creators.chat import creators_answer

    # "necromancer" names no class, creature, background or archetype: GM Core's soldier, and the chat says so (the
    # statblock's own comment is hidden once the panel renders the markdown)
    answer = creators_answer("Make me a level 4 necromancer NPC", lambda: resolver)
    assert answer is not None and answer.text.startswith("_Nothing in “necromancer” names"), answer.text[:120]
    assert "built as a soldier <!-- no class, creature, background or archetype" in answer.text
    # a build something named gives, or a role said, is not flagged
    for question in ("Make me a level 4 bandit boss NPC", "Make me a level 4 necromancer spellcaster"):
        answer = creators_answer(question, lambda: resolver)
        assert answer is not None and not answer.text.startswith("_Nothing"), question


def test_a_boss_fight_is_built_on_a_bosss_shapes(resolver):
    from gmprep.core.creators.chat import creators_answer
    from gmprep.core.creators.encounter import build_encounters

    # severe for four: the boss alone at party level + 3 (120 XP), then GM Core's Boss and Lackeys / Boss and Lieutenant
    # with the theme's creatures; no option repeats an earlier one's lead
    options = build_encounters(4, 5, "severe", ["undead"], resolver, boss=True)
    assert [o.structure for o in options] == ["Solo boss", "Boss and Lackeys", "Boss and Lieutenant"], options
    solo = options[0].creatures
    assert len(solo) == 1 and solo[0].count == 1 and solo[0].level == 8 and options[0].xp == 120
    assert any(c.id == "pf2e:rule:gm-core--choosing-creatures" for c in options[0].citations)
    lackeys = options[1].creatures
    assert [c.level for c in lackeys] == [7, 1] and [c.count for c in lackeys] == [1, 4]
    leads = [o.creatures[0].id for o in options]
    assert len(set(leads)) == len(leads)
    # a people theme: only the quick groups with a Boss
    answer = creators_answer("Build a final boss encounter with bandits for 4 level 3 PCs", lambda: resolver)
    assert answer is not None and "Boss and Lackeys" in answer.text and "Elite Enemies" not in answer.text
    assert "(matching: bandits)" in answer.text and "“boss” read as GM Core's severe threat" in answer.text
    # no theme: the chat says the options are in name order
    answer = creators_answer("Create a boss fight for a level 7 party of 5", lambda: resolver)
    assert answer is not None and "No theme was given" in answer.text and "Solo boss" in answer.text


def test_an_npcs_own_name_heads_its_statblock(resolver):
    from gmprep.core.creators.chat import creators_answer
    from gmprep.core.creators.intent import parse_creature_request

    req = parse_creature_request("Create a level 5 elf wizard called Aelric Voss")
    assert req is not None and req.name == "Aelric Voss"
    answer = creators_answer("Make a level 3 NPC blacksmith named Gorim", lambda: resolver)
    assert answer is not None and "### Gorim (Blacksmith)" in answer.text
    answer = creators_answer("Scale the ogre warrior to level 6, named Grub", lambda: resolver)
    assert answer is not None and answer.text.startswith("### Grub, Ogre Warrior (level 6)")


def test_how_many_creatures_make_a_threat(resolver):
    from gmprep.core.creators.chat import creators_answer
    from gmprep.core.creators.intent import parse_count_question

    assert parse_count_question("How many goblin warriors make a moderate encounter for 4 level 1 PCs?") == \
        ("goblin warriors", None, "moderate", 4, 1)
    assert parse_count_question("How many goblins are there in Monster Core?") is None
    # a goblin warrior (level -1) is party level - 2 for level 1: 20 XP; moderate is up to 80 XP for four
    answer = creators_answer("How many goblin warriors make a moderate encounter for 4 level 1 PCs?", lambda: resolver)
    assert answer is not None and answer.text.startswith("**4 × Goblin Warrior** make a moderate encounter")
    assert "### Encounter: 80 XP, moderate" in answer.text
    # elite: level 2 for a level-2 party, 40 XP; severe for five is over 100 up to 150
    answer = creators_answer("How many elite wolves for a severe fight against 5 level 2 PCs?", lambda: resolver)
    assert answer is not None and answer.text.startswith("**3 × elite Wolf** make a severe encounter")
    # a deadly fight is GM Core's extreme
    answer = creators_answer("How many ogre warriors would be a deadly encounter for 4 level 1 PCs?", lambda: resolver)
    assert answer is not None and answer.text.startswith("**2 × Ogre Warrior** make an extreme encounter")


def test_a_request_with_a_question_after_it_is_still_a_request():
    from gmprep.core.creators.intent import parse_creature_request

    # a clause that inverts its verb asks only when the text does not open by asking for a build
    req = parse_creature_request("Make a level 3 bandit NPC, should it carry a crossbow")
    assert req is not None and req.level == 3 and "bandit" in req.concept
    assert parse_creature_request("my level 1 party is fighting a level 4 creature, is that too hard") is None


def test_a_boss_for_a_party_is_above_the_partys_level(resolver):
    from gmprep.core.creators import tables
    from gmprep.core.creators.chat import creators_answer

    # "a boss for my level 7 party": 7 is the party's level, not the boss's. The boss is of the highest level whose XP
    # alone is its threat (a boss: severe, party level + 3 for four; "deadly": extreme, + 4 for five at 160 XP)
    req = parse_creature_request("I need a boss for my level 7 party, something like a corrupted treant")
    assert req is not None
    assert (req.level, req.concept, req.boss_threat, req.party_level, req.party_size) == \
        (10, "corrupted treant", "severe", 7, None)
    req = parse_creature_request("create a deadly boss for 5 level 3 PCs, an ogre")
    assert req is not None and (req.level, req.concept, req.boss_threat, req.party_size) == (7, "ogre", "extreme", 5)
    req = parse_creature_request("create a goblin boss for my level 2 party")
    assert req is not None and (req.level, req.concept) == (5, "goblin boss")  # a concept's own "boss" stays
    # "a deadly one" is the threat said of the creature, as of a boss; the boss a creature serves is not it
    req = parse_creature_request("make a dragon for a level 12 party, a deadly one")
    assert req is not None and (req.level, req.concept, req.boss_threat) == (16, "dragon", "extreme")
    req = parse_creature_request("make a lieutenant for the bandit boss, level 4 party")
    assert req is not None and (req.level, req.concept, req.boss_threat) == (4, "lieutenant", None)
    # "as the villain" ends the creature's noun phrase ("Vampire Noble As" was its name)
    req = parse_creature_request("I need a level 8 vampire noble as the villain")
    assert req is not None and (req.level, req.concept) == (8, "vampire noble")
    # a level of its own stays the creature's; without "boss" a creature for the party is of the party's level
    req = parse_creature_request("make a level 9 dragon boss for my level 6 party")
    assert req is not None and (req.level, req.boss_threat) == (9, None)
    req = parse_creature_request("build an ogre brute for my level 4 party")
    assert req is not None and (req.level, req.role, req.concept, req.boss_threat) == (4, "brute", "ogre", None)
    # the chat says how it read the request, with the tables it read
    answer = creators_answer("Make a hag for a level 10 party as a solo boss", lambda: resolver)
    assert answer is not None and answer.text.startswith("_A boss for 4 PCs of level 10 (four: "), answer.text[:200]
    assert "level 13, the highest level whose XP alone (120 XP) is a severe encounter" in answer.text
    assert "**Creature 13**" in answer.text
    ids = {c.source_id for c in answer.citations}
    assert {tables.xp_citation().id, tables.budget_citation().id} <= ids


def test_lackeys_for_a_party_are_below_the_partys_level(resolver):
    from gmprep.core.creators.chat import creators_answer

    # GM Core's lackeys are party level - 4 to - 2: "minions", "mooks", "henchmen" for a party are its strongest, - 2,
    # and the chat says what the number asked for comes to; the word is no part of the concept (a "minion" concept
    # borrowed the Phantasmal Minion's build)
    req = parse_creature_request("give me 4 goblin minions for my level 3 party")
    assert req is not None and (req.level, req.concept, req.lackeys, req.party_level) == (1, "goblin", 4, 3)
    req = parse_creature_request("I need some mooks for a level 6 fight, weak humanoid thugs")
    assert req is not None and (req.level, req.lackeys, req.party_level) == (4, 0, 6)
    # a creature's own level: no lackey reading
    req = parse_creature_request("make a level 3 phantasmal minion")
    assert req is not None and (req.level, req.concept, req.lackeys) == (3, "phantasmal minion", None)
    answer = creators_answer("give me 4 goblin minions for my level 3 party", lambda: resolver)
    assert answer is not None and answer.text.startswith("_Lackeys for 4 PCs of level 3 (four: "), answer.text[:200]
    assert "level 1, GM Core's strongest lackey (party level - 2, 20 XP each" in answer.text
    assert "The 4 asked for are 80 XP: a moderate encounter on their own." in answer.text
    assert "**Creature 1** (small, goblin, humanoid)" in answer.text


@pytest.mark.parametrize("text, threat, word, size, level, words", [
    # a threat word said alone, as one item of the request ("hard" was a theme word, the threat moderate)
    ("encounter for 4 level 5 pcs, hard, in a graveyard", "severe", "hard", 4, 5, ["graveyard"]),
    # a budget said in XP: the threat that total is for the party
    ("make a 160 xp encounter for 4 level 6 PCs with giants", "extreme", "160 XP", 4, 6, ["giants"]),
    # "my level 4 group of five" is a party (this built one "Cultists" creature)
    ("I want a fight against cultists for my level 4 group of five", "moderate", None, 5, 4, ["cultists"]),
    # "a level 8 encounter" names the fight by its party's level (this went to the rules)
    ("build me a level 8 encounter with fiends", "moderate", None, 4, 8, ["fiends"]),
])
def test_more_ways_gms_state_an_encounter(text, threat, word, size, level, words):
    enc = parse_encounter_request(text)
    assert enc is not None, text
    assert (enc.threat, enc.threat_word, enc.party_size, enc.party_level, enc.words) == (threat, word, size, level, words)


def test_a_party_size_said_apart_is_no_theme_word():
    # "party is level 3, four players": the size is read (4 PCs) and "four" no longer matches creatures as a theme
    enc = parse_encounter_request("need a quick random encounter on the road, party is level 3, four players")
    assert enc is not None and (enc.party_size, enc.party_level) == (4, 3)
    assert "four" not in enc.words and "road" in enc.words
