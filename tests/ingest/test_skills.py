"""The skill index entries (ingest/skills.py) on the bundled corpus's real records."""

from __future__ import annotations

import pytest

from gmprep.cli import main
from gmprep.ingest.corpus import corpus_dir, iter_records
from gmprep.ingest.skills import checks_used, derive_skills, read_table, trained_in

SKILLS = ["Acrobatics", "Arcana", "Athletics", "Crafting", "Deception", "Diplomacy", "Intimidation", "Lore",
          "Medicine", "Nature", "Occultism", "Performance", "Religion", "Society", "Stealth", "Survival",
          "Thievery", "Perception"]


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return list(iter_records(corpus_dir(), []))


@pytest.fixture(scope="module")
def derived(records) -> dict[str, dict]:
    return {e["name"]: e for e in derive_skills(records)}


def _text(records: list[dict], entry_id: str) -> str:
    return next(r["text"] for r in records if r["id"] == entry_id)


def test_the_shipped_skill_entries_are_what_the_derivation_gives(records, derived):
    shipped = sorted((r for r in records if r["type"] == "skill"), key=lambda r: r["id"])
    assert shipped == sorted(derived.values(), key=lambda r: r["id"])  # `gmprep corpus skills` reproduces them
    assert list(derived) == SKILLS  # the table's 17 skills in its order, then Perception
    ids = {r["id"] for r in records}
    for e in derived.values():
        assert e["id"] == f"pf2e:skill:{e['name'].lower()}" and e["type"] == "skill"
        assert e["book"] == "Pathfinder Player Core" and set(e["links"]) <= ids
        assert e["text"].startswith("*Index derived by gmprep from the corpus entries it links, not Paizo's text.*")
        assert "`gmprep books add`" in e["text"]


def test_table_rows_give_key_attribute_and_untrained_versus_trained(records, derived):
    _, rows = read_table(records)
    assert len(rows) == 17
    ath = derived["Athletics"]
    assert ath["fields"]["key_attribute"] == "Strength"
    assert "pf2e:action:climb" in ath["fields"]["untrained_actions"]
    assert ath["fields"]["trained_actions"] == ["pf2e:action:disarm"]
    assert "**Untrained actions** Climb, Force Open, Grapple," in ath["text"]
    assert "**Trained actions** (you must be trained in Athletics) Disarm" in ath["text"]
    # "Impersonate ^E Lie": names next to footnote marks are read whole
    assert derived["Deception"]["fields"]["untrained_actions"] == [
        "pf2e:action:create-a-diversion", "pf2e:action:impersonate", "pf2e:action:lie"]
    assert "pf2e:action:recall-knowledge" in derived["Arcana"]["fields"]["untrained_actions"]
    assert derived["Thievery"]["fields"]["trained_actions"] == ["pf2e:action:disable-a-device", "pf2e:action:pick-a-lock"]


def test_other_actions_count_only_when_the_actor_rolls_the_check(records, derived):
    assert checks_used(_text(records, "pf2e:action:escape"), SKILLS) == {"Acrobatics", "Athletics"}
    assert checks_used(_text(records, "pf2e:action:seek"), SKILLS) == {"Perception"}
    # a bonus to the check, someone else's check, or a check the action replaces is not the action's
    assert checks_used(_text(records, "pf2e:action:hunt-prey"), SKILLS) == set()
    assert "Perception" not in checks_used(_text(records, "pf2e:action:point-out"), SKILLS)
    assert "Perception" not in checks_used(_text(records, "pf2e:action:avoid-notice"), SKILLS)
    assert checks_used(_text(records, "pf2e:action:take-cover"), SKILLS) == set()
    assert checks_used(_text(records, "pf2e:action:quick-alchemy"), SKILLS) == set()
    # lists of skills before one "check"
    assert checks_used(_text(records, "pf2e:action:secure-disguises"), SKILLS) == {
        "Crafting", "Deception", "Performance", "Society"}
    assert "pf2e:action:escape" in derived["Athletics"]["fields"]["other_actions"]
    perception = derived["Perception"]["fields"]
    assert {"pf2e:action:seek", "pf2e:action:sense-motive"} <= set(perception["other_actions"])
    assert "pf2e:action:point-out" not in perception["other_actions"]
    assert "key_attribute" not in perception  # no row in the Skill Actions table


def test_trained_only_when_the_text_says_trained(records, derived):
    text = _text(records, "pf2e:action:bullying-press")
    assert trained_in(text, SKILLS) == {"Intimidation"}
    assert derived["Intimidation"]["fields"]["other_trained_actions"] == ["pf2e:action:bullying-press"]
    assert "**Actions that require training in Intimidation** Bullying Press (GM Core)" in derived["Intimidation"]["text"]


def test_feats_that_require_the_skill(derived):
    ath = derived["Athletics"]
    assert ath["fields"]["skill_feats"] >= 10
    assert "pf2e:feat:powerful-leap" in ath["links"]
    assert f"**Skill feats** {ath['fields']['skill_feats']} with Athletics in their prerequisites:" in ath["text"]
    # "follower of a specific religion" is not the Religion skill; "Warfare Lore" is Lore
    assert "pf2e:feat:evangelize" not in derived["Religion"]["links"]
    assert "pf2e:feat:battle-planner" in derived["Lore"]["links"]
    assert "**Feats** 9 with Perception in their prerequisites" in derived["Perception"]["text"]


def test_cli_rederives_a_corpus_copy(tmp_path, records):
    out = tmp_path / "corpus"
    assert main(["corpus", "skills", "--out", str(out)]) == 0
    again = [r for r in iter_records(out, []) if r["type"] == "skill"]
    assert len(again) == 18 and len(list(iter_records(out, []))) == len(records)
