"""The note scanner (kg.note_scan): the mentions hover shows, on real markdown, with the user's
controls; the same function ``gmprep mentions`` prints."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gmprep.common.settings import HoverSettings
from gmprep.ingest.corpus import load_corpus
from gmprep.kg.names import NameIndex
from gmprep.kg.note_scan import NoteScanner


@pytest.fixture(scope="module")
def names():
    return NameIndex.build(n for n in load_corpus().nodes if n.kind == "entry")


def found(names, text, **hover):
    scan = NoteScanner(names, HoverSettings(**hover)).scan(text)
    for m in scan.mentions:
        assert text[m.start:m.end] == m.text
    return [(m.text, m.node_id) for m in scan.mentions]


def test_html_blocks_code_front_matter_and_link_targets_are_not_read(names):
    note = (
        "---\ntags: [trip, frightened]\n---\n"
        '<div class="statblock">\n<div>Trip</div>\n</div>\n\n'
        "The guard is frightened 2 ([rules](https://example.com/stride)).\n\n"
        "```\nfrightened 3\n```\n"
    )
    assert found(names, note) == [("frightened 2", "pf2e:condition:frightened")]


def test_forms_gms_write(names):
    note = (
        "- The ranger Hunted Prey, then stood up.\n"
        "- An elven archer and a Dwarven guard.\n"
        "- The troops scatter.\n"
        "- She found a bag of holding.\n"
    )
    got = dict(found(names, note))
    assert got["Hunted Prey"] == "pf2e:action:hunt-prey"
    assert got["stood up"] == "pf2e:action:stand"
    assert got["Dwarven"] == "pf2e:ancestry:dwarf"
    assert got["bag of holding"] == "pf2e:equipment:spacious-pouch-type-i"


def test_parts_of_proper_names_are_not_rules(names):
    assert found(names, "We met the Hands of the Everlight at dawn.\n") == []
    assert found(names, "A crate of Phoenix Down sits on the cart.\n") == []


def test_ambiguous_names_carry_their_alternatives(names):
    scan = NoteScanner(names).scan("The goblin Trips the guard; Tovan uses Trip.\n")
    trip = next(m for m in scan.mentions if m.text == "Trip")
    assert trip.node_id == "pf2e:action:trip" and trip.alternatives == ["pf2e:trait:trip"]


def test_ignore_comments_and_words(names):
    note = (
        "Fireball one.\n"
        "<!-- gmprep-ignore-next-line -->\n"
        "Fireball two.\n"
        "Fireball three.\n\n"
        "<!-- gmprep-ignore -->\n\nFireball four.\n\n<!-- gmprep-ignore-end -->\n\n"
        "Fireball five, and Stride.\n"
    )
    got = [t for t, _ in found(names, note)]
    assert got == ["Fireball", "Fireball", "Fireball", "Stride"]
    lines = [note.count("\n", 0, m.start) for m in NoteScanner(names).scan(note).mentions]
    assert lines == [0, 3, 11, 11]
    assert [t for t, _ in found(names, note, ignore_words=["fireball"])] == ["Stride"]


def test_a_rescan_reuses_unchanged_chunks(names):
    scanner = NoteScanner(names)
    note = "".join(f"Paragraph {i}: the troll is frightened {i % 4 + 1}.\n\n" for i in range(50))
    first = scanner.scan(note)
    before = len(scanner._chunks)
    edited = note.replace("Paragraph 7:", "Paragraph 7 (edited):")
    second = scanner.scan(edited)
    assert len(scanner._chunks) == before + 1  # only the edited chunk was parsed again
    assert len(second.mentions) == len(first.mentions)
    assert second.mentions[-1].start == first.mentions[-1].start + len(" (edited)")


def test_gmprep_mentions_cli_prints_lsp_positions(tmp_path):
    note = tmp_path / "n.md"
    note.write_text("# Fight\n\nThe 🐲 guard is frightened 2.\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "gmprep", "mentions", str(note), "--json"], capture_output=True, text=True,
        cwd=tmp_path, check=True,
    ).stdout
    rec = json.loads(out.splitlines()[0])
    m = rec["mentions"][0]
    assert (m["line"], m["character"], m["end_character"]) == (2, 16, 28)  # the dragon counts two UTF-16 units
    assert (m["text"], m["id"]) == ("frightened 2", "pf2e:condition:frightened")
    assert 0 <= m["confidence"] <= 1


def test_a_class_trait_is_only_meant_with_the_word_trait(names):
    # "Magus", "Commander": the class or a rank, not the trait that marks the class's abilities
    assert found(names, "Our Magus talks to the Commander at dawn.\n") == []
    assert found(names, "Spellstrike has the magus trait.\n") == [("magus", "pf2e:trait:magus")]


def test_more_forms_gms_write(names):
    note = (
        "- Tovan can Raise Shield and has Dark Vision.\n"
        "- The shop sells Healing Potions.\n"
        "- Use the Elite template on the ogre.\n"
    )
    got = dict(found(names, note))
    assert got["Raise Shield"] == "pf2e:action:raise-a-shield"
    assert got["Dark Vision"] == "pf2e:spell:darkvision"
    assert got["Healing Potions"].startswith("pf2e:equipment:healing-potion")
    assert got["Elite template"] == "pf2e:rule:gm-screen--monster-adjustments"
    # search queries keep to names: the open compound is a note form only
    assert [m.node_id for m in names.find_mentions("has Dark Vision")] == []


def test_skills_hover_their_index_entry(names):
    from gmprep.kg.note_scan import load_scorer

    note = (
        "The rogue rolls Stealth to get past; a good Perception spots the trapdoor.\n\n"
        "The cliff needs an Athletics check. The watcher rolls against the ambusher's Stealth DC.\n\n"
        "- Crafting an item takes a week; the party passes their stealth checks.\n"
        "- The table likes lore and RP, and the survival systems too.\n"
    )
    scan = NoteScanner(names, scorer=load_scorer()).scan(note)
    got = [(m.text, m.node_id) for m in scan.mentions]
    assert ("Stealth", "pf2e:skill:stealth") in got and ("Perception", "pf2e:skill:perception") in got
    assert ("Athletics", "pf2e:skill:athletics") in got
    assert sum(x == ("Stealth", "pf2e:skill:stealth") for x in got) == 2  # "Stealth DC" is the skill's DC
    assert ("stealth", "pf2e:skill:stealth") in got  # lowercase, but "checks" follows
    # the -ing form of Craft with an object is the activity; lowercase everyday senses are not skills
    assert ("Crafting", "pf2e:action:craft") in got
    assert not any(t.lower() in ("lore", "survival") for t, _ in got)


def test_a_name_broken_across_the_lines_of_a_block_quote_is_read_whole(names):
    # the chunker kept each quote line apart, so "Recall" and "Knowledge" were never seen together
    note = "Intro.\n\n> To apply this rule, the player should call \u201cI want to Recall\n> Knowledge to learn about\u201d.\n"
    assert found(names, note) == [("Recall\n> Knowledge", "pf2e:action:recall-knowledge")]


def test_a_plus_before_a_word_in_a_build_list_is_no_part_of_the_name(names):
    note = "### Sorc spells\n\n - +fireball (3rd)\n - a +1 weapon potency rune\n"
    got = found(names, note)
    assert ("fireball", "pf2e:spell:fireball") in got
    assert ("+1 weapon potency rune", "pf2e:equipment:weapon-potency-1") in got  # a number keeps its sign


def test_gmprep_mentions_cli_prints_a_name_across_lines_on_one_line(tmp_path):
    note = tmp_path / "q.md"
    note.write_text("> I want to Recall\n> Knowledge now.\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "gmprep", "mentions", str(note)], capture_output=True, text=True,
        cwd=tmp_path, check=True,
    ).stdout
    assert out.splitlines()[0].startswith(f"{note}:1:13: Recall Knowledge -> pf2e:action:recall-knowledge (")


def test_a_workspace_alias_names_its_entry_at_any_strictness(names):
    # a GM's own shorthand ("strat" for Devise a Stratagem) is no name any index derives
    note = "veris RK/strat: 25 will hit. shared strat to elphira; the FA feat.\n"
    aliases = {"strat": "Devise a Stratagem", "shared strat": "pf2e:feat:shared-stratagem", "FA": "Free Archetype",
               "zzz": "No Such Entry"}
    assert ("strat", "pf2e:action:devise-a-stratagem") not in found(names, note)
    got = found(names, note, aliases=aliases, strictness="strict")
    assert ("strat", "pf2e:action:devise-a-stratagem") in got
    assert ("shared strat", "pf2e:feat:shared-stratagem") in got
    assert ("FA", "pf2e:rule:gm-screen--free-archetype") in got
    from gmprep.kg.note_scan import load_scorer

    scanner = NoteScanner(names, HoverSettings(aliases=aliases, strictness="strict"), load_scorer())
    assert scanner.unknown_aliases == ["zzz"]
    shown = [(m.text, m.node_id) for m in scanner.scan(note).mentions]  # with the scorer, at "strict"
    assert ("strat", "pf2e:action:devise-a-stratagem") in shown and ("shared strat", "pf2e:feat:shared-stratagem") in shown
    assert names.lookup("strat") is None  # the shared index is not changed
    # the workspace's ignore list still wins
    assert ("strat", "pf2e:action:devise-a-stratagem") not in found(names, note, aliases=aliases, ignore_words=["strat"])


def test_gmprep_toml_aliases_keep_their_keys_as_written(tmp_path):
    from gmprep.common.settings import load_settings

    (tmp_path / "gmprep.toml").write_text(
        '[hover]\naliases = { FA = "Free Archetype", "shared strat" = "Shared Stratagem", LoH = "Lay on Hands" }\n',
        encoding="utf-8",
    )
    assert load_settings(tmp_path).hover.aliases == {
        "FA": "Free Archetype", "shared strat": "Shared Stratagem", "LoH": "Lay on Hands",
    }


def test_gmprep_mentions_says_a_bad_setting_in_one_line(tmp_path):
    (tmp_path / "gmprep.toml").write_text('[hover]\naliases = ["strat"]\n', encoding="utf-8")
    (tmp_path / "n.md").write_text("Trip him.\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "gmprep", "mentions", "n.md"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "invalid setting hover.aliases" in run.stderr


def test_the_context_model_corrects_only_candidates_near_the_threshold(names):
    """With the shipped context model (kg/mention_context_model) the scan reads candidates near the
    threshold in their sentence; far ones keep the logistic scorer's confidence; off, nothing changes."""
    from gmprep.kg.mention_context import MODEL_DIR, WEIGHTS
    from gmprep.kg.mention_scorer import logit
    from gmprep.kg.note_scan import load_scorer

    if not (MODEL_DIR / WEIGHTS).is_file():
        pytest.skip("no context model shipped")
    note = ("# Session 4\n\nThe zombies shambled toward the party while the fighter raised her shield.\n\n"
            "Kyra cast Shield as a reaction and the ogre was frightened 2. We took a long rest in the\n"
            "ruins; the wizard used Recall Knowledge on the strange statue and found a trap.\n")
    scorer = load_scorer()
    on = NoteScanner(names, HoverSettings(strictness="loose"), scorer)
    off = NoteScanner(names, HoverSettings(strictness="loose", context_model=False), scorer)
    assert on.context is not None and off.context is None
    a = {(m.start, m.node_id): m.confidence for m in on.scan(note).mentions}
    b = {(m.start, m.node_id): m.confidence for m in off.scan(note).mentions}
    band = on.context.band
    marks = [logit(on.threshold), logit(on.floor)]
    changed = 0
    for key, conf in b.items():
        near = any(abs(logit(conf) - t) <= band for t in marks)
        if key in a and a[key] != conf:
            assert near, key
            changed += 1
    assert changed >= 1


def test_words_before_a_name_may_ask_for_a_spell(names):
    # hover.spell_cues (off by default): "cast X" and "scroll(s)/wand(s) of X" choose the spell among the entries
    # so named and show it below the threshold; not across a sentence, not with "strict"
    scrolls = "They also found 4 scrolls of detect magic in the desk.\n"
    chosen = {scrolls[m.start:m.name_end]: m.chosen.node_id for m in names.matches(scrolls, spell_cues=True)}
    assert chosen["detect magic"] == "pf2e:spell:detect-magic"
    plain = {scrolls[m.start:m.name_end]: m.chosen.node_id for m in names.matches(scrolls)}
    assert plain["detect magic"] != "pf2e:spell:detect-magic"  # without the cue the action comes first
    assert not any(m.asked for m in names.matches("We cast. Sleep came over the camp.\n", spell_cues=True))
    from gmprep.kg.note_scan import load_scorer

    note = "Lizzy would circle around to cast Sleep, and Leo would hide nearby.\n"

    def shown(**hover):
        return [(m.text, m.node_id) for m in NoteScanner(names, HoverSettings(**hover), load_scorer()).scan(note).mentions]

    scanner = NoteScanner(names, HoverSettings(spell_cues=True), load_scorer())
    sleep = next(sc for sc in scanner.candidates(note) if sc.mention.text == "Sleep")
    assert sleep.asked and sleep.mention.node_id == "pf2e:spell:sleep"
    assert ("Sleep", "pf2e:spell:sleep") in shown(spell_cues=True)
    assert set(shown()) <= set(shown(spell_cues=True))
    assert ("Sleep", "pf2e:spell:sleep") not in shown(spell_cues=True, strictness="strict") or \
        sleep.mention.confidence >= scanner.scorer.threshold_for("strict")
