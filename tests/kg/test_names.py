"""The name index and the legacy-name table, against the real bundled corpus."""

from __future__ import annotations

import json
import time

import pytest

from gmprep.core.sources import load_other_system_terms
from gmprep.ingest.corpus import load_corpus
from gmprep.kg.legacy import (
    JOURNAL_RENAMES,
    LEGACY_NAMES,
    LEGACY_SPELLINGS,
    find_legacy,
    legacy_target,
    resolve_changes,
)
from gmprep.kg.names import NameIndex, name_key


@pytest.fixture(scope="module")
def entries():
    return [n for n in load_corpus().nodes if n.kind == "entry"]


@pytest.fixture(scope="module")
def index(entries):
    return NameIndex.build(entries)


def _one(index, text):
    found = index.find_mentions(text)
    assert len(found) == 1, found
    return found[0]


def test_legacy_targets_exist_and_legacy_names_are_not_current(entries):
    ids = {n.node_id for n in entries}
    current = {name_key(n.name) for n in entries}
    for legacy, target in LEGACY_NAMES.items():
        assert target in ids, f"{legacy} -> {target} is not a corpus entry"
        assert name_key(legacy) not in current, f"legacy name {legacy!r} is a current entry name"
    for spelling, legacy in LEGACY_SPELLINGS.items():
        assert legacy in LEGACY_NAMES
        assert name_key(spelling) not in current


def test_legacy_lookup_and_find():
    assert legacy_target("Flat Footed") == "pf2e:condition:off-guard"
    assert legacy_target("Magic Missile") == "pf2e:spell:force-barrage"
    assert legacy_target("fireball") is None
    found = find_legacy("Does an attack of opportunity make him flat-footed?")
    assert ("attack of opportunity", "pf2e:action:reactive-strike") in found
    assert ("flat-footed", "pf2e:condition:off-guard") in found


def test_the_remaster_journals_renames_are_resolved_and_current(entries):
    # the committed file is what the resolver's rules give on the bundled corpus (rerun
    # scripts/resolve_remaster_changes.py after a corpus change)
    hand = [t.term for t in load_other_system_terms() if not t.pf2e]
    renames, skipped = resolve_changes(entries, claimed=hand)
    assert renames == JOURNAL_RENAMES
    assert len(renames) > 200
    assert legacy_target("Wild Order") == "pf2e:class-feature:druid--untamed-order"
    # a name the guard's hand list gives another game stays that game's
    assert legacy_target("Wild Shape") is None and "Wild Shape (another game's, by the guard's hand list)" in skipped
    assert resolve_changes(entries)[0]["wild shape"] == "pf2e:feat:untamed-form"
    assert legacy_target("power attack") == "pf2e:feat:vicious-swing"
    assert legacy_target("Inspire Heroics") == "pf2e:spell:fortissimo-composition"  # the spell, not the feat
    # left out: a shared class feature, a current entry's name, a name with two targets
    assert legacy_target("Lightning Reflexes") is None and any(s.startswith("Lightning Reflexes") for s in skipped)
    assert legacy_target("Knockdown") is None and "Knockdown (a current entry's name)" in skipped
    assert legacy_target("Wild Empathy") is None
    # the hand table's choices stand where both list a name
    assert legacy_target("Bag of Holding") == "pf2e:equipment:spacious-pouch-type-i"
    assert ("scorching ray", "pf2e:spell:blazing-bolt") in find_legacy("Does Scorching Ray take the multiple attack penalty?")


def test_the_journals_renames_are_read_in_queries_not_in_notes(index):
    # "Power Attack" (Vicious Swing now) is the journal's: a query reads it, a note does not (hover as before)
    query = index.find_mentions("Can I use Power Attack with a bow?")
    assert [(m.node_id, m.legacy_name) for m in query] == [("pf2e:feat:vicious-swing", "power attack")]
    note = [m for m in index.matches("Ragnar used Power Attack on the ogre.", note_forms=True) if m.heuristic]
    assert all(m.chosen.node_id != "pf2e:feat:vicious-swing" for m in note)
    # the hand table's are read in both
    assert any(m.chosen.node_id == "pf2e:spell:force-barrage"
               for m in index.matches("She cast Magic Missile twice.", note_forms=True) if m.heuristic)


def test_a_rules_sections_title_is_read_in_queries_not_in_notes(index):
    # GM Core's "Treasure by Level" section: a question that writes its title asks for it ("the treasure by level
    # chart"); a note's heading words stay unread, and so do titles of one word or of function words
    query = index.find_mentions("How was I supposed to read the treasure by level chart?", titles=True)
    assert [m.node_id for m in query] == ["pf2e:rule:gm-core--treasure-by-level"]
    assert [m.node_id for m in index.find_mentions("Multiple exposures to the same poison?", titles=True)] == \
        ["pf2e:rule:player-core--multiple-exposures"]
    # an entry's text that writes the words links to no section (search's link reading, the guard's name reading)
    assert index.find_mentions("How was I supposed to read the treasure by level chart?") == []
    note = [m for m in index.matches("The party found treasure by level 3.", note_forms=True) if m.heuristic]
    assert all(m.chosen.node_id != "pf2e:rule:gm-core--treasure-by-level" for m in note)
    assert not [m for m in index.find_mentions("Everything in this book is optional.", titles=True)
                if m.node_id.startswith("pf2e:rule:")]


def test_build_is_fast(entries):
    t = time.perf_counter()
    NameIndex.build(entries)
    assert time.perf_counter() - t < 5  # generous for a shared CI box; ~0.5 s measured


def test_lookup_exact_names_aliases_and_legacy(index):
    assert index.lookup("Frightened") == "pf2e:condition:frightened"
    assert index.lookup("  off-guard ") == "pf2e:condition:off-guard"
    assert index.lookup("flat-footed") == "pf2e:condition:off-guard"
    assert index.lookup("minor healing potion") == "pf2e:equipment:healing-potion-minor"
    assert index.lookup("Trip") == "pf2e:action:trip"
    assert index.lookup("Leshy") == "pf2e:ancestry:leshy"
    assert index.lookup("Reactive Strike") == "pf2e:action:reactive-strike"
    assert index.lookup("owlbear") is None
    assert index.lookup("fire bal") is None
    assert index.lookup("fire ball") == "pf2e:spell:fireball"  # a compound written open (notes only find it)
    assert set(index.candidates("Trip")) == {"pf2e:action:trip", "pf2e:trait:trip"}


@pytest.mark.parametrize(
    ("text", "node_id", "value", "span"),
    [
        ("he is frightened 2 now", "pf2e:condition:frightened", 2, "frightened 2"),
        ("Aldo at wounded 1 after", "pf2e:condition:wounded", 1, "wounded 1"),
        ("a hook has deadly d10 here", "pf2e:trait:deadly", 10, "deadly d10"),
        ("it has reach 10 ft; nice", "pf2e:trait:reach", 10, "reach 10 ft"),
        ("4 goblin warriors hide", "pf2e:creature:goblin-warrior", None, "goblin warriors"),
        ("buy a minor healing potion today", "pf2e:equipment:healing-potion-minor", None, "minor healing potion"),
        ("| Healing Potion (Minor) | 4 gp |", "pf2e:equipment:healing-potion-minor", None, "Healing Potion (Minor)"),
        ("etch Weapon Potency (+1) now", "pf2e:equipment:weapon-potency-1", None, "Weapon Potency (+1)"),
        ("and a striking rune for 65 gp", "pf2e:equipment:striking", None, "striking rune"),
        ("takes 1 persistent fire damage", "pf2e:condition:persistent-damage", None, "persistent fire damage"),
        ("hand out 1 hero point each", "pf2e:rule:gm-screen--hero-points", None, "hero point"),
        ("Cost of Living comfortable", "pf2e:rule:gm-screen--cost-of-living", None, "Cost of Living"),
        ("it has the flourish trait", "pf2e:trait:flourish", None, "flourish"),
        ("Aldo prepared *shield* today", "pf2e:spell:shield", None, "shield"),
        ("she's flat-footed until", "pf2e:condition:off-guard", None, "flat-footed"),
        ("- Trip him into the pit.", "pf2e:action:trip", None, "Trip"),
        ("he takes falling damage", "pf2e:rule:gm-screen--falling", None, "falling damage"),
        ("two minor healing potions", "pf2e:equipment:healing-potion-minor", None, "minor healing potions"),
        ("3 wolves circle the camp", "pf2e:creature:wolf", None, "wolves"),
        ("is sickened 1 and", "pf2e:condition:sickened", 1, "sickened 1"),
        ("it has thrown 20 ft,", "pf2e:trait:thrown", 20, "thrown 20 ft"),
    ],
)
def test_find_mentions_forms(index, text, node_id, value, span):
    m = _one(index, text)
    assert (m.node_id, m.value, m.text) == (node_id, value, span)
    assert text[m.start:m.end] == span


def test_legacy_mentions_carry_their_legacy_name(index):
    m = _one(index, "He casts Magic Missile twice.")
    assert m.node_id == "pf2e:spell:force-barrage"
    assert m.legacy_name == "magic missile"
    assert m.name == "Force Barrage"


def test_ambiguous_names_follow_context(index):
    assert _one(index, "it likes to Trip people").node_id == "pf2e:action:trip"
    assert _one(index, "a weapon with the trip trait").node_id == "pf2e:trait:trip"
    leshy, druid = index.find_mentions("Mirelle (Leshy druid)")
    assert (leshy.node_id, druid.node_id) == ("pf2e:ancestry:leshy", "pf2e:class:druid")
    assert _one(index, "Tovan has Reactive Strike: move").node_id == "pf2e:action:reactive-strike"
    # a trait's word alone is the action it is also a form of; with "trait" after it, the trait
    climbing = next(m for m in index.matches("the wall needs Climbing, DC 20") if m.start == 15)
    assert (climbing.chosen.node_id, climbing.candidates[0].node_id) == ("pf2e:action:climb", "pf2e:trait:climbing")
    assert _one(index, "boots with the Climbing trait").node_id == "pf2e:trait:climbing"


def test_no_partial_or_plain_english_hovers(index):
    # an entry name glued to an unknown capitalised word is an unknown proper name
    assert index.find_mentions("A crate of Phoenix Down she swears by") == []
    assert index.find_mentions("players will assume an owlbear here") == []
    assert index.find_mentions("dragon-blood brandy") == []
    # common words need a sign they are rules
    assert index.find_mentions("turn on the light and seek shelter in the hidden room") == []
    assert index.find_mentions("Light the torches. Fire at will.") == []
    # code and URLs are never read
    assert index.find_mentions("`frightened 2` and https://example.com/fireball") == []
    assert index.find_mentions("```\nfrightened 2\n```\n") == []
    # names do not run across table cells or sentence punctuation
    assert [m.text for m in index.find_mentions("| Holy | Water |")] == []


def test_longest_match_wins_and_mentions_do_not_overlap(index):
    found = index.find_mentions("Tovan can Raise a Shield; remember Shield Block.")
    assert [m.node_id for m in found] == ["pf2e:action:raise-a-shield", "pf2e:feat:shield-block"]
    spans = [(m.start, m.end) for m in found]
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))


def test_dev_notes_mentions(index, eval_dir):
    """Every labelled mention resolves to its gold id, and no null mention gets a hover."""
    wrong = []
    for note in sorted((eval_dir / "notes-dev").glob("*.md")):
        text = note.read_text(encoding="utf-8")
        starts = [0]
        for line in text.split("\n"):
            starts.append(starts[-1] + len(line) + 1)
        found = index.find_mentions(text)
        for gold in json.loads(note.with_name(note.name + ".json").read_text())["mentions"]:
            pos = starts[gold["line"]] + gold["character"]
            hit = next((m.node_id for m in found if m.start <= pos < m.end), None)
            if hit != gold["gold"]:
                wrong.append((note.name, gold["text"], gold["gold"], hit))
    assert wrong == []


def _candidates(index, text):
    """Every match a note scan would score, accepted by the rules of thumb or not: (text, entry, form)."""
    return [(text[m.start:m.end], m.chosen.node_id, m.chosen.form) for m in index.matches(text) if not m.veto]


@pytest.mark.parametrize(
    ("text", "span", "node_id"),
    [
        # compounds written open, hyphenated or closed, derived from the names themselves
        ("he carries a short bow and", "short bow", "pf2e:equipment:shortbow"),
        ("he carries a short-bow and", "short-bow", "pf2e:equipment:shortbow"),
        ("+1 composite short bow, +1 pepperbox", "composite short bow", "pf2e:equipment:composite-shortbow"),
        ("the guards wear chainmail", "chainmail", "pf2e:equipment:chain-mail"),
        ("two morning stars hang there", "morning stars", "pf2e:equipment:morningstar"),
        ("drank an anti-plague before", "anti-plague", "pf2e:equipment:antiplague-lesser"),
        # a statistic's value: the rules section named by it
        ("the ooze has resist 10 to acid", "resist 10", "pf2e:rule:player-core--resistance"),
        ("undead take weakness 5 from it", "weakness 5", "pf2e:rule:player-core--weakness"),
        ("the door has Hardness 5 and HP 20", "Hardness 5", "pf2e:rule:player-core--hardness"),
        ("resistances fire 5", "resistances", "pf2e:rule:player-core--resistance"),
        # initials written as initials
        ("veris RK/strat: 25 will hit", "RK", "pf2e:action:recall-knowledge"),
        ("izaya LoH ducim", "LoH", "pf2e:spell:lay-on-hands"),
        ("trigger centipede AoO: tail strike", "AoO", "pf2e:action:reactive-strike"),
        # the adjective an -ity noun is made from
        ("for 5 electric damage", "electric", "pf2e:trait:electricity"),
        # a skill after a number is a roll or a DC, lowercase or not
        ("(DC 16 diplomacy or DC 18 intimidation)", "diplomacy", "pf2e:skill:diplomacy"),
        ("Jack rolled 38 perception", "perception", "pf2e:skill:perception"),
        # a creature's ability named for it names the creature (its stat block: "**Zombie Rot** ...")
        ("needs fortitude checks for their zombie rot.", "zombie rot", "pf2e:creature:plague-zombie"),
        ("The Zombie Rot we have", "Zombie Rot", "pf2e:creature:plague-zombie"),
        # the regular plural where the lexicon has none ("ooze" is a mass noun there), and "-ys"
        ("+120 xp from Oozes", "Oozes", "pf2e:trait:ooze"),
        ("At least 3 banana Leshys for the ritual", "Leshys", "pf2e:ancestry:leshy"),
        # the head noun before "of" in the plural, across a soft line break; armor without "armor"
        ("A pile of Potions\nof Shared Memories", "Potions\nof Shared Memories",
         "pf2e:equipment:potion-of-shared-memories"),
        ("- 4 suits of studded leather", "studded leather", "pf2e:equipment:studded-leather-armor"),
    ],
)
def test_note_forms_are_candidates(index, text, span, node_id):
    got = _candidates(index, text)
    assert any(t == span and nid == node_id for t, nid, _ in got), got


@pytest.mark.parametrize(
    "text",
    [
        "they were rats in a cage",  # "were" is no half of Wererat
        "his dad and von Lentz",  # initials only in capitals
        "the rk and loh were lowercase",
        "We met at the thieves' HQ; bring the VR goggles.",  # a feat's initials the corpus never uses
        "she has resistance to poison",  # a statistic needs its number
        "a weakness for sweets",
        "tangible benefits, lore and RP",  # a lowercase skill without a roll, a DC or a skill word
        "the hardness of the stone",
    ],
)
def test_note_forms_need_their_sign(index, text):
    got = _candidates(index, text)
    assert not any(f in ("compound", "acronym", "valued") or nid.startswith("pf2e:skill:") for _, nid, f in got), got


def test_new_note_forms_stay_out_of_search(index):
    # search queries keep to names: the derived note forms are not looked up
    assert index.find_mentions("RK") == []
    assert [m.node_id for m in index.find_mentions("has resist 10")] == []
    assert index.find_mentions("a short bow") == []
    # nor looked up alone: initials and a statistic's word need their sign in a text
    assert index.lookup("LoH") is None and index.candidates("RK") == []
    assert index.lookup("resist") is None
    assert all(m.form != "ability" for m in index.find_mentions("zombie rot"))


def test_abilities_held_by_creatures_of_other_names_name_no_creature(index):
    # "Sneak Attack" is in the stat blocks of creatures of every name (and a class feature)
    assert all(nid.startswith("pf2e:class-feature:") for _, nid, _ in _candidates(index, "a sneak attack"))


def test_an_index_of_some_entries_only_builds(entries):
    # the creature resolver indexes creatures only: the legacy names' targets are not there
    creatures = NameIndex.build([n for n in entries if n.type == "creature"])
    assert creatures.lookup("goblin warriors") == "pf2e:creature:goblin-warrior"
    assert creatures.lookup("AoO") is None


def test_a_name_already_plural_gets_no_second_plural(index):
    # "Treat Wounds", "Signature Spells": lemminflect's rules for unknown words made "woundses"
    assert index.lookup("treat woundses") is None and index.lookup("signature spellses") is None
    assert index.lookup("Treat Wounds") == "pf2e:action:treat-wounds"
    assert index.lookup("goblin warriors") == index.lookup("goblin warrior")


def test_a_graded_items_family_takes_the_plural_on_its_head_noun(index):
    # "elixirs of life": the family of Elixir of Life (Minor) ... (Major), plural before "of" as for ungraded items
    # ("bags of holding"); before, only "elixirs" matched, as the elixir trait
    text = "She sells elixirs of life and healing potions."
    found = [m for m in index.matches(text) if m.heuristic]
    assert [(m.chosen.node_id, text[m.start:m.end]) for m in found] == [
        ("pf2e:equipment:elixir-of-life-minor", "elixirs of life"),
        ("pf2e:equipment:healing-potion-minor", "healing potions"),
    ]
