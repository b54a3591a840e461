"""Hybrid search on the real session store: names, aliases, legacy names, values, filters, graph
expansion, and the hits' citation fields. Real SQLite, FTS5, usearch, MiniLM and the bundled reranker."""

from __future__ import annotations

import pytest

from gmprep.common.settings import SearchSettings
from gmprep.kg.models import SearchFilters
from gmprep.kg.render import render_entry
from gmprep.kg.search import Searcher


def ids(hits):
    return [h.node_id for h in hits]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Bless", "pf2e:spell:bless"),
        ("stunned condition", "pf2e:condition:stunned"),
        ("Stats for an ogre warrior", "pf2e:creature:ogre-warrior"),
        ("flourish trait", "pf2e:trait:flourish"),
        ("goblin warriors", "pf2e:creature:goblin-warrior"),  # plural
        ("frightened 2", "pf2e:condition:frightened"),  # value
        ("flat-footed", "pf2e:condition:off-guard"),  # legacy name
        ("magic missile", "pf2e:spell:force-barrage"),  # legacy spell name
        ("minor healing potion", "pf2e:equipment:healing-potion-minor"),  # reordered grade
        ("Improved Grab", "pf2e:action:improved-grab"),  # Monster Core universal ability
        ("swallow whole", "pf2e:action:swallow-whole"),
    ],
)
def test_exact_names_rank_first(searcher, query, expected):
    hits = searcher.search(query, k=5)
    assert hits and hits[0].node_id == expected, ids(hits)
    assert hits[0].via == "name"


def test_lookup_resolves_names_and_refuses_unknown_ones(searcher):
    assert searcher.lookup("Frightened 2").node_id == "pf2e:condition:frightened"
    legacy = searcher.lookup("flat footed")
    assert legacy.node_id == "pf2e:condition:off-guard" and "legacy" in legacy.via
    assert searcher.lookup("Goblin Warriors").node_id == "pf2e:creature:goblin-warrior"
    assert searcher.lookup("Phoenix Down") is None
    assert searcher.lookup("") is None


def test_legacy_name_inside_a_question_is_rewritten(searcher):
    qa = searcher.analyze("What's the AC penalty for being flat-footed?")
    assert "Off-Guard" in qa.text and "flat-footed" not in qa.text
    assert ids(searcher.search("What's the AC penalty for being flat-footed?", k=3))[0] == "pf2e:condition:off-guard"


def test_query_reading_finds_verbs_characters_and_asked_types(searcher):
    qa = searcher.analyze("If my fighter Trips the ogre, does the rogue Demoralizing it help?")
    assert qa.named["pf2e:action:trip"] == "hint"
    assert qa.named["pf2e:action:demoralize"] == "verb"
    assert qa.named["pf2e:class:fighter"] == "character"  # "my fighter" is a PC, not the class entry
    # seeds and the reranker read the situation without the participants' classes
    assert qa.situation == "If my someone Trips the ogre, does the someone Demoralizing it help?"
    assert searcher.analyze("What does Trip do?").situation is None
    assert searcher.analyze("What's a barbarian's key attribute?").named["pf2e:class:barbarian"] == "hint"
    asked = searcher.analyze("Which 2nd-rank spell makes an ally unseen?")
    assert asked.types == ["spell"] and asked.rank == 2
    assert searcher.analyze("Is there a general feat for initiative?").types == ["feat"]
    assert searcher.analyze("Bless").named == {"pf2e:spell:bless": "exact"}


def test_a_participant_named_by_class_does_not_become_the_topic(searcher):
    question = "The fighter is holding on to the goblin so it can't get away. What does the goblin suffer?"  # situation-dev
    assert "pf2e:condition:grabbed" in ids(searcher.search(question, k=10))[:5]
    plain = Searcher(searcher.store, embedder=searcher.embedder, reranker=searcher.reranker, names=searcher.names,
                     settings=searcher.settings.model_copy(update={"mask_characters": False}))
    assert "pf2e:condition:grabbed" not in ids(plain.search(question, k=10))[:5]  # goblin heritages took the places


def test_hits_are_citable(searcher):
    hit = searcher.search("Which condition gives a creature one extra action at the start of its turn?", k=5)[0]
    assert hit.source_id == hit.node_id and hit.name and hit.type and hit.book and hit.text
    assert hit.path and hit.path[0] == hit.book
    assert hit.via in {"name", "seed", "rerank"} or hit.via.startswith("expand:")
    assert f"[{hit.source_id}]" in hit.citation()


def test_paraphrased_question_finds_the_rule(searcher):
    hits = searcher.search("Which condition gives a creature one extra action at the start of its turn?", k=5)
    assert "pf2e:condition:quickened" in ids(hits)


def test_filters_restrict_every_hit(searcher):
    spells = searcher.search("fire damage in an area", k=10, filters=SearchFilters(types=["spell"]))
    assert spells and all(h.type == "spell" for h in spells)
    low = searcher.search("fire damage in an area", k=10, filters=SearchFilters(types=["spell"], level_min=1, level_max=2))
    assert low and all(h.level is not None and 1 <= h.level <= 2 for h in low)
    book = searcher.search("goblin", k=10, filters=SearchFilters(books=["Pathfinder Monster Core"]))
    assert book and all(h.book == "Pathfinder Monster Core" for h in book)
    traits = searcher.search("healing", k=10, filters=SearchFilters(traits=["potion"]))
    assert traits and all("potion" in h.traits for h in traits)
    rare = searcher.search("dragon", k=5, filters=SearchFilters(types=["creature"], rarities=["rare"]))
    assert all(h.type == "creature" for h in rare)
    # a named entry that fails the filter is not returned either
    assert "pf2e:spell:bless" not in ids(searcher.search("Bless", k=5, filters=SearchFilters(types=["condition"])))


@pytest.mark.parametrize(
    ("query", "source", "linked"),
    [
        ("If I Trip an ogre and succeed, what is it left dealing with?", "pf2e:action:trip", "pf2e:condition:prone"),
        ("If I Feint and succeed, what does the target suffer?", "pf2e:action:feint", "pf2e:condition:off-guard"),
        ("My cleric got hit by the basilisk's gaze and failed. What now?", "pf2e:creature:basilisk",
         "pf2e:condition:petrified"),
    ],
)
def test_graph_expansion_brings_the_linked_condition(store, query, source, linked):
    with_graph = Searcher(store, settings=SearchSettings(rerank=False))
    hits = with_graph.search(query, k=5)
    assert {source, linked} <= set(ids(hits)), ids(hits)
    found = next(h for h in hits if h.node_id == linked)
    assert found.via == f"expand:link from {source}"
    no_graph = Searcher(store, settings=SearchSettings(rerank=False, expand_rounds=0), names=with_graph.names)
    assert linked not in ids(no_graph.search(query, k=5))


def test_search_without_rerank_and_edge_cases(searcher):
    assert searcher.search("", k=5) == []
    assert searcher.search("prone", k=0) == []
    hits = searcher.search("lying on the ground", k=3, rerank=False)
    assert len(hits) == 3
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:], strict=False))


def test_render_entry_has_ancestors_fields_and_text(store):
    md = render_entry(store, "pf2e:spell:fireball")
    assert md.startswith("Pathfinder Player Core > Spells")
    assert "# Fireball" in md and "**Range** 500 feet" in md and "6d6 fire damage" in md
    assert "`pf2e:spell:fireball`" in md
    heritage = render_entry(store, "pf2e:heritage:rock-dwarf")
    assert "Dwarf > Rock Dwarf" not in heritage.splitlines()[0]  # breadcrumb holds ancestors only
    assert "Dwarf" in heritage.splitlines()[0]


def test_search_fused_keeps_what_either_phrasing_finds(searcher):
    shove = ids(searcher.search("What happens if I critically fail a Shove?", k=5))
    fused = searcher.search_fused(["What happens if I critically fail a Feint?",
                                   "What does the Shove action do? What happens if I critically fail it?"], k=5)
    assert {"pf2e:action:feint", "pf2e:action:shove"} <= set(ids(fused)), ids(fused)
    assert all("fused from queries" in h.via for h in fused)
    assert [h.score for h in fused] == sorted((h.score for h in fused), reverse=True)
    # one phrasing (or duplicates of it) is plain search
    assert ids(searcher.search_fused(["What happens if I critically fail a Shove?"] * 2, k=5)) == shove
    assert searcher.search_fused(["", "  "], k=5) == []


def test_a_shared_feature_name_is_the_named_classs_own(store, searcher):
    q = "When does my fighter get Weapon Specialization and what damage does it add?"
    assert "pf2e:class-feature:fighter--weapon-specialization" in searcher.analyze(q).named
    hits = searcher.search(q, k=5)
    assert hits[0].node_id == "pf2e:class-feature:fighter--weapon-specialization", ids(hits)
    # without the class, the index's first pick by id (another class's) is named
    first = Searcher(store, settings=SearchSettings(class_own_features=False), names=searcher.names).analyze(q)
    assert "pf2e:class-feature:fighter--weapon-specialization" not in first.named
    # a feature of the class named stays
    own = searcher.analyze("Does my bard's Weapon Specialization apply to spells?").named
    assert "pf2e:class-feature:bard--weapon-specialization" in own


def test_a_name_said_only_inside_a_longer_name_does_not_lead(store, searcher):
    q = "Can my rogue use Sneak Attack against a flanked creature?"
    hits = ids(searcher.search(q, k=10))
    assert "pf2e:class-feature:rogue--sneak-attack" in hits[:5], hits
    assert hits.index("pf2e:class-feature:rogue--sneak-attack") < hits.index("pf2e:action:sneak"), hits
    plain = ids(Searcher(store, settings=SearchSettings(subname_penalty=0.0), names=searcher.names).search(q, k=10))
    # the word match "Sneak" ranked above the feature the question names
    assert plain.index("pf2e:action:sneak") < plain.index("pf2e:class-feature:rogue--sneak-attack"), plain
    # said on its own too, the shorter name keeps its place
    both = ids(searcher.search("Can I Sneak and then use Sneak Attack in the same turn?", k=5))
    assert both[0] == "pf2e:action:sneak", both


def test_a_spell_asked_by_casting_it_is_named_in_lowercase(store, searcher):
    # "heal" is an everyday word, so in lowercase it names nothing; after "cast" it is the Heal spell (search.spell_cues)
    q = "An NPC priest wants to cast heal on the fighter. How much does it heal at rank 2?"
    assert searcher.analyze(q).named.get("pf2e:spell:heal") == "hint"
    assert ids(searcher.search(q, k=3))[0] == "pf2e:spell:heal"
    off = Searcher(store, settings=SearchSettings(spell_cues=False), names=searcher.names)
    assert "pf2e:spell:heal" not in off.analyze(q).named
    assert "pf2e:spell:heal" not in searcher.analyze("How much does a potion heal at rank 2?").named  # no cue


def test_a_tables_initials_name_their_entry_in_a_question(store, searcher):
    # "RK", "AoO" (the legacy Attack of Opportunity), "LoH": read as the names they stand for (search.initials)
    qa = searcher.analyze("Can I use RK on a creature I just met?")
    assert qa.named.get("pf2e:action:recall-knowledge") == "hint"
    assert qa.text == "Can I use Recall Knowledge on a creature I just met?"
    assert searcher.names.spelled_out("do ogres get AoO") == "do ogres get Reactive Strike"
    assert searcher.names.spelled_out("I rk the ogre.") == "I rk the ogre."  # initials only as initials
    off = Searcher(store, settings=SearchSettings(initials=False), names=searcher.names)
    assert "pf2e:action:recall-knowledge" not in off.analyze("Can I use RK on a creature I just met?").named
