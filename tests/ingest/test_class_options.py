"""Options of class features and familiar abilities from the kmdavis/xuartlek option notes (AoN import)."""

from pathlib import Path

from gmprep.ingest.class_options import add_class_options, parse_option_note, read_transcription
from gmprep.ingest.corpus import corpus_dir, iter_records

TRANSCRIPTION = Path(__file__).resolve().parents[2] / "ingest" / "data" / "xuartlek-transcribed" / "options"

# content/srd/pf2e/compendium/character/hunters-edges.md @ 07d0afbc, verbatim, abridged (Outwit and Precision left out)
EDGES = """# Hunters Edges

## Flurry

You have trained to unleash a devastating flurry of attacks upon your prey. Your multiple attack penalty for attacks against your hunted prey is –3 (–2 with an agile attack) on your second attack of the turn instead of –5, and –6 (–4 with an agile attack) on your third or subsequent attack of the turn, instead of –10.

### Masterful Hunter

You can blend your weapon mastery with skillful targeting to make a series of precise attacks.

*Source: Player Core p. 154*

## Vindication

This Hunter's Edge can be taken by [[srd/pf2e/compendium/character/archetypes/vindicator|Vindicators]].

*Source: War of Immortals p. 64*
"""

# familiar-abilities.md @ c50af443, two sections verbatim
FAMILIAR = """# Familiar Abilities

## Dragon

- **Ability Type**: Familiar

Your familiar has the [[srd/pf2e/compendium/rules-elements/traits/player-core/dragon|dragon]] trait instead of the [[srd/pf2e/compendium/rules-elements/traits/player-core/animal|animal]] trait.

*Source: Player Core p. 212*

## Lifelink

- **Ability Type**: Master

If your familiar would be reduced to 0 HP by damage, as a reaction with the concentrate trait, you can take all the damage, and your familiar takes none.

*Source: Player Core p. 214*
"""


def _rec(rid: str, name: str, etype: str, **extra: object) -> dict:
    return {"id": rid, "name": name, "type": etype, "book": "Pathfinder Player Core", "page": None, "traits": [],
            "rarity": None, "level": extra.pop("level", None), "text": "x" * 50, "links": [],
            "unresolved_links": list(extra.pop("unresolved", [])), "section": None, "fields": {}, "source": {}}


def test_parse_keeps_the_four_books_and_the_parts_of_an_option():
    note, left_out = parse_option_note(EDGES, "hunters-edges", "hunters-edges.md", "07d0afbc")
    assert left_out == ["Vindication (War of Immortals)"]
    [flurry] = note.options
    assert (flurry.name, flurry.book, flurry.page) == ("Flurry", "Player Core", "154")
    assert flurry.text.startswith("You have trained") and "\n\n### Masterful Hunter\n\nYou can blend" in flurry.text
    assert "Source" not in flurry.text


def test_options_become_entries_linked_to_their_feature_and_a_rerun_changes_nothing():
    edges, _ = parse_option_note(EDGES, "hunters-edges", "hunters-edges.md", "07d0afbc")
    familiar, _ = parse_option_note(FAMILIAR, "familiar-abilities", "familiar-abilities.md", "c50af443")
    records = [
        _rec("pf2e:class:ranger", "Ranger", "class"),
        _rec("pf2e:class-feature:ranger--hunters-edge", "Hunter's Edge", "class-feature", level=1,
             unresolved=["classfeatures:Flurry", "classfeatures:abc"]),
        _rec("pf2e:rule:player-core--familiar-abilities", "Familiar Abilities", "rule"),
        _rec("pf2e:rule:player-core--master-abilities", "Master Abilities", "rule"),
        _rec("pf2e:trait:dragon", "Dragon", "trait"),
    ]
    out, report = add_class_options(records, [edges, familiar])
    by_id = {r["id"]: r for r in out}
    flurry = by_id["pf2e:class-feature:ranger--flurry"]
    assert flurry["page"] == "154" and flurry["level"] == 1 and flurry["book"] == "Pathfinder Player Core"
    assert flurry["links"] == ["pf2e:class:ranger", "pf2e:class-feature:ranger--hunters-edge"]
    assert flurry["fields"] == {"class": "Ranger", "option_of": "pf2e:class-feature:ranger--hunters-edge",
                                "option_kind": "hunter's edge"}
    edge = by_id["pf2e:class-feature:ranger--hunters-edge"]
    assert "pf2e:class-feature:ranger--flurry" in edge["links"] and edge["unresolved_links"] == ["classfeatures:abc"]
    dragon = by_id["pf2e:rule:familiar-ability--dragon"]
    assert dragon["text"] == "**Ability Type** Familiar\n\nYour familiar has the dragon trait instead of the animal trait."
    assert dragon["links"] == ["pf2e:rule:player-core--familiar-abilities"] and dragon["fields"]["hover_name"] is False
    assert by_id["pf2e:rule:familiar-ability--lifelink"]["links"] == ["pf2e:rule:player-core--master-abilities"]
    kept = [r["id"] for r in out if r["id"] in {x["id"] for x in records}]
    assert kept == [r["id"] for r in records]  # every existing entry kept, in its order
    again, _ = add_class_options(out, [edges, familiar])
    assert again == out and len(report.created) == 3


def test_bundled_corpus_has_the_options_with_text_book_and_page():
    notes = read_transcription(TRANSCRIPTION)
    assert {n.stem for n in notes} == {"arcane-theses", "arcane-schools", "druidic-orders", "hunters-edges",
                                       "research-fields", "familiar-abilities"}
    errors: list[str] = []
    records = {r["id"]: r for r in iter_records(corpus_dir(), errors)}
    for rid in ("pf2e:class-feature:wizard--staff-nexus", "pf2e:class-feature:alchemist--toxicologist",
                "pf2e:class-feature:druid--leaf-order", "pf2e:class-feature:ranger--precision",
                "pf2e:rule:familiar-ability--dragon", "pf2e:rule:familiar-ability--manual-dexterity"):
        rec = records[rid]
        assert len(rec["text"]) >= 40 and rec["book"] in ("Pathfinder Player Core", "Pathfinder Player Core 2")
        assert rec["page"] and rec["links"], rid
    options = [r for r in records.values() if (r.get("fields") or {}).get("option_of")]
    familiar = [r for r in records.values() if r["id"].startswith("pf2e:rule:familiar-ability--")]
    assert len(options) == 23 and len(familiar) == 59  # README: 23 class options, 59 familiar abilities
    assert "classfeatures:Toxicologist" not in records["pf2e:class-feature:alchemist--research-field"]["unresolved_links"]
    out, _ = add_class_options(records.values(), notes)
    assert out == list(records.values()) and not errors  # the bundled corpus is this step's output
