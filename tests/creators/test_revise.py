"""A follow-up that edits the conversation's last build ("make it level 7", "make it severe", "now for 5 players"):
read against the user's earlier messages, through the chat's answer path."""

from __future__ import annotations

import pytest

from gmprep.core.creators.revise import is_edit, revise


def test_an_edit_points_back_at_the_build():
    for text in ("make it a level 7 instead", "now make it a sniper", "make it severe", "now for 5 players",
                 "what about level 9?", "Okay, change the encounter to severe", "a spellcaster instead",
                 "give it primal spells"):
        assert is_edit(text), text
    # a request of its own, a rules question, a long message: not edits
    for text in ("make a level 3 goblin", "for level 5 PCs what DC should a lock have?",
                 "what does a ghoul's paralysis do?",
                 "make it so that the ogre in my long prep notes for the session tonight keeps its club and more"):
        assert not is_edit(text), text


def test_edits_are_read_against_the_last_build_and_the_edits_made_to_it():
    earlier = ["make a level 5 bandit captain", "make it a level 7 instead", "what does Demoralize do?"]
    r = revise("now make it a sniper", earlier)
    assert r is not None and r.creature is not None and r.earlier == "make a level 5 bandit captain"
    assert (r.creature.level, r.creature.role, r.creature.concept) == (7, "sniper", "bandit captain")
    assert list(r.changed.values()) == ["level 7", "sniper"]
    # a later role replaces the earlier one in what is said to have changed
    r = revise("make it a spellcaster with divine spells", [*earlier, "now make it a sniper"])
    assert r is not None and r.creature is not None and (r.creature.role, r.creature.tradition) == \
        ("spellcaster", "divine")
    assert list(r.changed.values()) == ["level 7", "spellcaster", "divine spells"]
    r = revise("give it primal spells", ["make a level 3 goblin shaman"])
    assert r is not None and r.creature is not None and r.creature.tradition == "primal"
    # an encounter: its threat, then its party
    enc = ["build a moderate encounter for 4 level 3 PCs with undead", "make it severe"]
    r = revise("now for 5 players", enc)
    assert r is not None and r.encounter is not None
    assert (r.encounter.threat, r.encounter.party_size, r.encounter.party_level, r.encounter.words) == \
        ("severe", 5, 3, ["undead"])
    # a boss for a party: the new threat's level for the same party
    r = revise("make it deadly instead", ["I need a boss for my level 7 party, an ogre"])
    assert r is not None and r.creature is not None and (r.creature.level, r.creature.boss_threat) == (11, "extreme")
    # nothing to edit, or nothing changed: no revision
    assert revise("make it severe", ["what does a ghoul's paralysis do?"]) is None
    assert revise("make it moderate", ["build a moderate encounter for 4 level 3 PCs"]) is None


@pytest.mark.slow
async def test_the_chat_reads_an_edit_against_the_conversation(store_dir):
    from gmprep.common.settings import LLMSettings, SearchSettings, Settings
    from gmprep.core.answer import ChatTurn, answer_question
    from gmprep.kg.search import Searcher
    from gmprep.kg.store import Store

    store = Store.open(store_dir, create=False)
    try:
        searcher = Searcher(store, settings=SearchSettings(rerank=False))
        settings = Settings(store_dir=store_dir, llm=LLMSettings(backend="extractive"))
        first = "make a level 5 bandit captain"
        built = await answer_question(first, history=[], searcher=searcher, settings=settings)
        history = [ChatTurn(role="user", content=first), ChatTurn(role="assistant", content=built.text)]
        edited = await answer_question("make it a level 7 instead", history=history, searcher=searcher,
                                       settings=settings)
        assert edited.backend == "creators" and edited.outcome == "answered"
        assert edited.text.startswith("_Read as the request above (“make a level 5 bandit captain”) with level 7._")
        assert "### Bandit Captain" in edited.text and "**Creature 7**" in edited.text
        assert edited.steps[0].name == "revise_request"
        # without the conversation the same words build nothing ("It Instead", then a "Level 7 Soldier"): the chat says
        # there is no build to change
        for question in ("make it a level 7 instead", "make it severe"):
            alone = await answer_question(question, history=[], searcher=searcher, settings=settings)
            assert alone.outcome == "partial" and "nothing asked above in this conversation is one it changes" in \
                alone.text, alone.text[:200]
    finally:
        store.close()


def test_a_build_without_a_level_asks_for_it_or_takes_the_conversations_party(resolver):
    from gmprep.core.creators.chat import creators_answer
    from gmprep.core.creators.intent import missing_party_or_level

    assert missing_party_or_level("build an encounter with wolves") == "encounter"
    assert missing_party_or_level("make an innkeeper npc") == "creature"
    assert missing_party_or_level("create a goblin boss") == "creature"
    # an imperative about the rules, a question, a request that can be built: none
    for text in ("make an Athletics check to Grapple", "what is an NPC?", "make a level 3 goblin",
                 "build a moderate encounter for 4 level 3 PCs"):
        assert missing_party_or_level(text) is None, text
    # no party in the conversation: the chat asks for it (this went to the rules, which declined or quoted Encounters)
    alone = creators_answer("make an innkeeper npc", lambda: resolver)
    assert alone is not None and alone.outcome == "partial" and alone.text.startswith("To build that, say its level")
    # the party the conversation stated last
    earlier = ["build a moderate encounter for 4 level 3 PCs with undead"]
    wolves = creators_answer("build an encounter with wolves", lambda: resolver, earlier)
    assert wolves is not None and wolves.text.startswith("_For the party stated earlier in this conversation: 4 PCs, "
                                                         "level 3._") and "(matching: wolves)" in wolves.text
    boss = creators_answer("create a goblin boss", lambda: resolver, earlier)
    assert boss is not None and "level 6, the highest level whose XP alone (120 XP) is a severe encounter" in boss.text
    # a creature level said before is no party's
    assert creators_answer("make an innkeeper npc", lambda: resolver, ["make a level 5 bandit captain"]).outcome == \
        "partial"
    # Monster Core's own creature: the rules answer quotes its stat block
    assert creators_answer("I need stats for a goblin warrior", lambda: resolver) is None


def test_how_many_of_them_counts_the_creature_built_last(resolver):
    from gmprep.core.creators.chat import creators_answer

    # it went to the rules (Choosing Creatures): "them" is the creature the chat built, at its level after the edits
    earlier = ["make a level 3 goblin shaman", "make it level 1"]
    answer = creators_answer("how many of them make a severe encounter for 4 level 3 PCs?", lambda: resolver, earlier)
    assert answer is not None and answer.backend == "creators"
    assert answer.text.startswith("**6 × Goblin Shaman (level 1, built above)** make a severe encounter for 4 PCs, "
                                  "level 3 (5 to 6 do: each is 20 XP"), answer.text
    # nothing built: not the builders' question
    assert creators_answer("how many of them make a severe encounter for 4 level 3 PCs?", lambda: resolver,
                           ["what does a goblin shaman do?"]) is None


def test_how_many_takes_the_conversations_party_when_it_states_none(resolver):
    from gmprep.core.creators.chat import creators_answer

    earlier = ["build a moderate encounter for 4 level 3 PCs with goblins"]
    answer = creators_answer("how many goblin warriors make a severe encounter?", lambda: resolver, earlier)
    assert answer is not None and answer.text.startswith(
        "_For the party stated earlier in this conversation: 4 PCs, level 3._\n\n**12 × Goblin Warrior** make a severe "
        "encounter for 4 PCs, level 3"), answer.text[:200]
    # no party anywhere: not the builders' question
    assert creators_answer("how many goblin warriors make a severe encounter?", lambda: resolver, []) is None


def test_a_level_beyond_gm_cores_tables_is_said(resolver):
    from gmprep.core.creators.chat import creators_answer

    for question, level in (("make a level 30 demon lord", 30), ("build an encounter for 4 level 27 PCs", 27)):
        answer = creators_answer(question, lambda: resolver)
        assert answer is not None and answer.outcome == "partial", question
        assert answer.text.startswith(f"GM Core's tables build creatures, hazards and encounters from level -1 to 24; "
                                      f"level {level} is beyond them."), answer.text
    # a rules question about a high level is no build
    assert creators_answer("what is the DC for a level 25 creature?", lambda: resolver) is None
