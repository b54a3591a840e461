"""Generated creatures stay inside their table columns; the checker finds altered numbers in real statblocks."""

from __future__ import annotations

import collections
import gzip
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from gmprep.core.creators import tables
from gmprep.core.creators.creature import ROLES, build_creature, render_statblock_markdown
from gmprep.core.creators.models import CreatureRequest
from gmprep.core.creators.statblock import allowed_range, check_statblock, extract_numbers
from gmprep.ingest.corpus import corpus_dir


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(level=st.integers(-1, 24), role=st.sampled_from(sorted(ROLES)))
def test_every_generated_statistic_is_in_its_column(level, role):
    sb = build_creature(CreatureRequest(level=level, role=role, concept="test"))
    assert {s.field for s in sb.stats} == set(ROLES[role])
    for s in sb.stats:
        assert s.column in tables.columns(s.table)
        lo, hi = tables.cell_range(s.table, level, s.column)
        assert lo <= s.value <= hi, (s.field, s.value, s.column)
        if s.table == "strike-damage":
            assert s.damage == tables.cell(s.table, level, s.column)["dice"]
    assert check_statblock(render_statblock_markdown(sb)) == []


def _creatures() -> list[dict]:
    with gzip.open(corpus_dir() / "creatures.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [d for d in map(json.loads, fh) if d.get("level") is not None and -1 <= d["level"] <= 24]


ALTERABLE = ("perception", "ac", "fort", "ref", "will", "hp", "strike:", "damage:", "spell_dc", "spell_attack", "str",
             "dex", "skill:")


def test_checker_finds_every_altered_number():
    rng = random.Random(14)
    recs = _creatures()
    done = 0
    kinds: collections.Counter = collections.Counter()
    for d in rng.sample(recs, len(recs)):
        text, level = d["text"], d["level"]
        flagged = {(i.field, i.start) for i in check_statblock(text)}
        nums = [n for n in extract_numbers(text) if n[0].startswith(ALTERABLE) and (n[0], n[3]) not in flagged]
        if len(nums) < 2:
            continue
        picks = sorted(rng.sample(nums, 2), key=lambda n: -n[3])  # edit from the end so offsets stay valid
        if picks[0][3] < picks[1][4]:  # a Strike's attack and its damage span may not overlap; they never do
            continue
        altered, expected = text, []
        for field, tid, _value, start, end in picks:
            lo, hi = allowed_range(tid, level)
            go_up = lo is None or rng.random() < 0.5
            new = (hi + rng.randint(2, 9)) if go_up else (lo - rng.randint(2, 9))
            if tid == "strike-damage":  # a damage expression whose average is ``new``: 2d6 (7) + flat
                new_text = f"2d6+{new - 7}"
            else:
                new_text = str(new) if tid in ("armor-class", "hit-points", "spell-dc") else f"{new:+d}"
            altered = altered[:start] + new_text + altered[end:]
            expected.append((field, new))
        found = {(i.field, i.value) for i in check_statblock(altered)}
        for e in expected:
            assert e in found, (d["name"], e, found)
            kinds[e[0].split(":")[0]] += 1
        done += 1
        if done == 20:
            break
    assert done == 20
    print(f"\n20 altered statblocks, 40 wrong numbers, all found: {dict(kinds)}")


def test_unaltered_statblocks_flag_only_numbers_outside_their_table():
    rng = random.Random(100)
    sample = rng.sample(_creatures(), 100)
    kinds: collections.Counter = collections.Counter()
    for d in sample:
        for i in check_statblock(d["text"]):
            tid = i.citation.id.rsplit("/", 1)[1]
            lo, hi = tables.table_range(tid, d["level"])
            assert i.value > hi or i.value < lo, (d["name"], i.message)  # really outside every column
            kinds[f"{i.field.split(':')[0]} {'above' if i.value > hi else 'below'}"] += 1
    print(f"\n100 unaltered Monster Core statblocks: {sum(kinds.values())} numbers outside their table: {dict(kinds)}")
    assert sum(kinds.values()) < 100  # most numbers of published creatures sit inside the tables


HAND_WRITTEN = """## Bandit Captain
Level 3
- Perception +9
- Skills: Athletics +10, Intimidation +25
- Str +4, Dex +2, Con +3, Int +0, Wis +1, Cha +2
- AC 25; Fort +11, Ref +9, Will +6
- HP 45
- Melee [one-action] shortsword +12 [+8/+4] (agile), Damage 1d6+5 piercing
- Ranged [one-action] crossbow +3 (range 120 feet), Damage 1d8 piercing
"""


def test_hand_written_statblock():
    issues = {i.field: i for i in check_statblock(HAND_WRITTEN)}
    assert set(issues) == {"ac", "skill:Intimidation", "strike:crossbow"}
    ac = issues["ac"]
    assert ac.message.startswith("AC 25 is above extreme (22) for level 3; high is 19")
    assert (ac.fix_value, ac.fix_text, HAND_WRITTEN[ac.start:ac.end]) == (22, "22", "25")
    fixed = HAND_WRITTEN
    for i in sorted(issues.values(), key=lambda i: -i.start):  # applying every quick fix leaves nothing to flag
        fixed = fixed[:i.start] + i.fix_text + fixed[i.end:]
    assert check_statblock(fixed) == []
    big = check_statblock("Level 3\n- Melee [one-action] maul +12, Damage 4d12+20 bludgeoning")
    assert [(i.field, i.fix_text) for i in big] == [("damage:maul", "1d12+8")]
    assert issues["strike:crossbow"].fix_value == 8 and HAND_WRITTEN[issues["strike:crossbow"].start:issues["strike:crossbow"].end] == "+3"
    assert check_statblock(HAND_WRITTEN, level=20) and check_statblock("no level here, AC 99") == []


def test_prose_numbers_are_not_statistics():
    text = "**Creature 2**\n\n**AC** 16; **Fort** +9, **Ref** +5, **Will** +6\n\n**HP** 24\n\nA creature can sever the tongue by hitting AC 13 and dealing damage."
    nums = {f: v for f, _, v, _, _ in extract_numbers(text)}
    assert nums["ac"] == 16 and nums["hp"] == 24


def test_statblocks_in_a_note():
    from gmprep.core.creators.statblock import check_note, find_statblocks

    note = ("# Session 4\n\nThe bandits wait at the ford. Their leader has AC 30 in the story, not a statblock.\n\n"
            + HAND_WRITTEN + "\n### Abilities\n- Melee [one-action] fist +20, Damage 1d4 bludgeoning\n- HP 45\n\n"
            "## Loot\nAC 99 armor polish\n\n## Guard (Creature 1)\n**AC** 16; **Fort** +7, **Ref** +5, **Will** +4\n**HP** 20\n")
    spans = find_statblocks(note)
    assert [(note[s.start:s.end].split("\n")[0], s.level) for s in spans] == [
        ("## Bandit Captain", 3), ("### Abilities", 3), ("## Guard (Creature 1)", 1)]
    issues = check_note(note)
    assert [(i.field, note[i.start:i.end]) for i in issues] == [
        ("skill:Intimidation", "+25"), ("ac", "25"), ("strike:crossbow", "+3"), ("strike:fist", "+20")]


def test_a_creature_of_a_kind_has_its_kinds_size_and_traits(resolver):
    # built off Monster Core's creature of the kind the concept names: its size, and the traits every creature of that
    # kind has (an ogre is Large, a giant and a humanoid), as its speed already was
    ogre = build_creature(CreatureRequest(level=5, concept="ogre"), resolver)
    assert ogre.size == "large" and ogre.traits == ["giant", "humanoid"], (ogre.size, ogre.traits)
    assert "(large, giant, humanoid)" in render_statblock_markdown(ogre)
    # the kind's shared traits, not one creature's own (the Omen Dragon's occult)
    dragon = build_creature(CreatureRequest(level=8, concept="young red dragon"), resolver)
    assert "dragon" in dragon.traits and "occult" not in dragon.traits, dragon.traits
    # a word that is another kind's trait says the creature lent is no kin: a skeleton archer (built off the Hobgoblin
    # Archer, named with what it does) is no hobgoblin, it is a skeleton
    skeleton = build_creature(CreatureRequest(level=5, concept="skeleton archer"), resolver)
    assert "hobgoblin" not in skeleton.traits and {"skeleton", "undead"} <= set(skeleton.traits), skeleton.traits
    assert skeleton.size == "medium"
    # a role said builds off no creature, and the kind still says size and traits
    brute = build_creature(CreatureRequest(level=6, role="brute", concept="ogre"), resolver)
    assert brute.size == "large" and brute.traits == ["giant", "humanoid"], (brute.size, brute.traits)
    # a person named by a background is that person: a dragon cultist is no dragon
    cultist = build_creature(CreatureRequest(level=5, concept="dragon cultist"), resolver)
    assert cultist.size == "medium" and "dragon" not in cultist.traits, (cultist.size, cultist.traits)
    # traits the GM gives stand
    assert build_creature(CreatureRequest(level=5, concept="ogre", traits=["human"]), resolver).traits == ["human"]

    # a trait word names the kind of a creature with that trait only: a goblin is no Goblin Dog (an animal)
    assert build_creature(CreatureRequest(level=1, concept="goblin"), resolver).role_from != "Goblin Dog"
    # a skirmisher built off a Monster Core creature keeps its Speed: GM Core's +5 feet is for one built off none
    trapper = build_creature(CreatureRequest(level=1, concept="kobold trapper"), resolver)
    assert trapper.role == "skirmisher" and (trapper.speed, trapper.speed_from) == (25, "the Kobold Scout's Speed")
