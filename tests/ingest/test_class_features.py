"""Class features with their rules text from the kmdavis/xuartlek class notes (Archives of Nethys import)."""

from collections import defaultdict
from pathlib import Path

from gmprep.ingest.class_features import (
    CORE_CLASSES,
    add_class_features,
    has_rules_text,
    merged_text,
    parse_class_note,
    read_transcription,
)
from gmprep.ingest.corpus import corpus_dir, iter_records

TRANSCRIPTION = Path(__file__).resolve().parents[2] / "ingest" / "data" / "xuartlek-transcribed" / "classes"

# content/srd/pf2e/compendium/character/classes/ranger.md @ 07d0afbc, verbatim, abridged (levels 4-20 of the
# table and most features left out); a made-up "### Tracking Notes" part stands for the parts other notes have
RANGER = """# Ranger  *Class*

### Class Features

You gain these features as Ranger. Features gained at higher levels list the levels at which you gain them next to the features' names.

Your Level
Class Features

1Ancestry and background, attribute boosts, initial proficiencies, hunt prey, hunter’s edge, ranger feat
2Ranger feat, skill feat
3General feat, will expertise, skill increase

#### Attribute Boosts

In addition to what you get from your class at 1st level, you have four free boosts to different attribute modifiers.

#### Hunt Prey

When you focus your attention on a single foe, you become unstoppable in your pursuit. You gain the Hunt Prey action.

#### Hunter's Edge

You have trained to become a skilled hunter and tracker, gaining an extra benefit when you Hunt Prey depending on the focus of your training. Choose a hunter's edge.

### Tracking Notes

 You follow [[srd/pf2e/compendium/rules-elements/conditions#Off-Guard|off-guard]] prey.

| | |
| --- | --- |
| **Ranger Feats** | At 1st level and every even-numbered level, you gain a ranger class feat. |
| **Skill Feats** | At 2nd level and every 2 levels thereafter, you gain a skill feat. |
| **Will Expertise** | Your mental defenses grow stronger. Your proficiency rank for Will saves increases to expert. |

*Source: Player Core p. 152*
"""


def _rec(rid: str, name: str, etype: str, text: str = "", **fields) -> dict:
    return {"id": rid, "name": name, "type": etype, "book": "Pathfinder Player Core", "page": None, "level": None,
            "text": text, "links": [], "fields": fields, "source": {"repo": "r", "commit": "c", "path": "p"}}


def test_note_features_levels_and_parts():
    note = parse_class_note(RANGER, "ranger", "content/srd/pf2e/compendium/character/classes/ranger.md", "07d0afbc")
    assert note is not None and (note.book, note.page) == ("Player Core", "152")
    got = {f.name: f for f in note.features}
    # the shared advancement (attribute boosts, skill feats) is no class feature; the class's own feats are
    assert list(got) == ["Hunt Prey", "Hunter's Edge", "Ranger Feats", "Will Expertise"]
    assert [got[n].level for n in got] == [1, 1, 1, 3]
    # a heading the level table does not name is a part of the feature before it, wiki links as labels
    assert got["Hunter's Edge"].text.endswith("Choose a hunter's edge.\n\n### Tracking Notes\n\nYou follow off-guard prey.")
    assert got["Will Expertise"].text == "Your mental defenses grow stronger. Your proficiency rank for Will saves increases to expert."


def test_merge_keeps_ids_and_canonical_text_and_skips_taken_names():
    note = parse_class_note(RANGER, "ranger", "classes/ranger.md", "07d0afbc")
    assert note is not None
    placeholder = "(The rules text of this feature is embedded from the Foundry classfeatures compendium and is not included in this corpus.)"
    records = [
        _rec("pf2e:class:ranger", "Ranger", "class"),
        _rec("pf2e:action:hunt-prey", "Hunt Prey", "action", "You designate a single creature as your prey."),
        _rec("pf2e:class-feature:ranger--hunters-edge", "Hunter's Edge", "class-feature", placeholder,
             **{"class": "Ranger", "from_journal_page": "x"}),
        _rec("pf2e:class-feature:ranger--will-expertise", "Will Expertise", "class-feature",
             "Your mental defenses grow stronger. Your proficiency rank for Will saves increases to expert.",
             **{"class": "Ranger", "foundry_id": "abc"}),
    ]
    out, report = add_class_features(records, [note])
    by_id = {r["id"]: r for r in out}
    # Hunt Prey is the action's name: no second entry would take its hovers
    assert "pf2e:class-feature:ranger--hunt-prey" not in by_id and report.name_taken == ["Ranger: Hunt Prey (action)"]
    # ... and the action says when the class has it (the rogue's Master Strike is a 19th-level feature), once
    assert by_id["pf2e:action:hunt-prey"]["fields"]["granted_by"] == ["Ranger (level 1)"]
    again, _ = add_class_features(out, [note])
    assert {r["id"]: r for r in again}["pf2e:action:hunt-prey"]["fields"]["granted_by"] == ["Ranger (level 1)"]
    edge = by_id["pf2e:class-feature:ranger--hunters-edge"]
    assert edge["text"].startswith("You have trained") and edge["level"] == 1 and "pf2e:class:ranger" in edge["links"]
    assert edge["source"][-1] == {"repo": "kmdavis/xuartlek", "commit": "07d0afbc", "path": "classes/ranger.md"}
    # the Foundry pack's text is kept as it is; it gains only its class link
    will = by_id["pf2e:class-feature:ranger--will-expertise"]
    assert will["source"] == records[3]["source"] and will["links"] == ["pf2e:class:ranger"]
    feats = by_id["pf2e:class-feature:ranger--ranger-feats"]
    assert feats["fields"] == {"class": "Ranger"} and feats["section"] == ["Classes", "Ranger", "Ranger Feats"]
    assert by_id["pf2e:class:ranger"]["page"] == "152"
    again, report2 = add_class_features(out, [note])
    assert again == out and not report2.created and not report2.text_added


def test_journal_text_follows_the_note_where_it_adds_to_it():
    new = "Your rage wells up from a dominant instinct.\n\nInstincts can be found here."
    old = ("### **Animal Instinct**\n\n\n\n### **Instincts**\n\nYour rage wells up from a dominant instinct.\n\n"
           "Instincts can be found here: Animal Instinct, Fury Instinct.")
    merged = merged_text(old, new, journal=True)
    # the empty heading and the paragraph the note has are dropped
    assert merged == new + "\n\n### **Instincts**\n\nInstincts can be found here: Animal Instinct, Fury Instinct."
    assert merged_text(merged, new, journal=True) == merged  # a rerun
    assert merged_text("Description", new, journal=True) == new


def test_every_core_class_has_its_class_features_with_rules_text():
    records = list(iter_records(corpus_dir(), []))
    classes = {r["id"]: r for r in records if r["type"] == "class"}
    by_class: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        if r["type"] == "class-feature":
            by_class[r["fields"].get("class")].append(r)
    for cls in CORE_CLASSES:
        name = classes[f"pf2e:class:{cls}"]["name"]
        features = [r for r in by_class[name] if has_rules_text(r)]
        assert len(features) >= 11, name  # README table: Cleric 11 .. Swashbuckler 24
        assert all(f"pf2e:class:{cls}" in r["links"] for r in by_class[name]), name
        assert classes[f"pf2e:class:{cls}"]["page"], name
    ranger = {r["name"] for r in by_class["Ranger"]}
    assert {"Hunter's Edge", "Trackless Journey", "Masterful Hunter", "Swift Prey", "Ranger Weapon Expertise"} <= ranger
    monk = {r["name"]: r for r in by_class["Monk"]}
    assert monk["Flurry of Blows"]["level"] == 1 and monk["Perfected Form"]["level"] == 19


def test_bundled_corpus_is_up_to_date_with_the_transcription():
    records = list(iter_records(corpus_dir(), []))
    out, report = add_class_features(records, read_transcription(TRANSCRIPTION))
    assert out == records and not report.created and not report.text_added
