"""The learned other-edition reader (helper ed41, issue 10): word n-gram weights fitted on other games' rules text
(Pathfinder 1e, D&D 5e SRD, Starfinder 1e) against Pathfinder 2e's (``scripts/fit_other_edition_reader.py`` ->
``core/agents/data/other-edition-ngrams.json.gz``). A question it reads as another game's is not_in_corpus
(``answerability.edition_threshold``); a Remaster rename forces the held rule only when the rest of the question does
not read so (``answerability.edition_rename``). The end-to-end tests run on the real test store."""

from __future__ import annotations

import pytest

from gmprep.common.settings import AnswerabilitySettings
from gmprep.core.agents import edition
from gmprep.core.answer import answer_question, context_for

# Pathfinder 1e's action economy (standard / move / full-round actions): "full-round action" is also on the guard's
# hand list, which declines it not_in_books without the reader
PF1 = ("Can I take a 5-foot step and then a full-round action, or does drinking a potion as a standard action use up "
       "my move action too?")
# Pathfinder 1e's tumble: "attack of opportunity" is a Remaster rename (Reactive Strike) that forced an answer
TUMBLE = ("When I tumble at half speed through a threatened square, do I still provoke an attack of opportunity if my "
          "Acrobatics check fails, or only when I move at full speed?")
# a Pathfinder 2e question in pre-Remaster words ("flat-footed" is Off-Guard now)
PF2 = "If the enemy is flat-footed, does my Strike get a bonus, and does that stack with flanking?"


def test_the_shipped_table_records_its_sources_and_weighs_rules_words_not_prose():
    table = edition._table()
    systems = {s["system"]: s for s in table["sources"]}
    for name in ("Pathfinder 1e", "D&D 5e SRD", "Starfinder 1e", "Pathfinder 2e (pre-Remaster, Pf2eTools)"):
        assert len(systems[name]["commit"]) == 40 and systems[name]["licence"], systems[name]
    w = table["weights"]
    assert w["standard action"] > 2 and w["full-round"] > 2  # Pathfinder 1e's action types
    assert w["critical success"] < -2 and w["off-guard"] < -1  # Pathfinder 2e's degrees of success, the Remaster
    assert "flat-footed" not in w  # pre-Remaster PF2e uses it as much as PF1: no evidence either way
    # function words and an asker's casual prose weigh nothing
    assert not {"he", "his", "she", "does", "i"} & set(w)
    assert edition.read("I'm a bit confused, hoping someone can help").raw == pytest.approx(0, abs=1.5)


def test_reading_a_question():
    pf1 = edition.read(PF1)
    assert pf1.probability > 0.95 and edition.shown(pf1)[0] == "standard action", pf1
    assert edition.read(PF2).probability < AnswerabilitySettings().edition_threshold
    # the rename's own words can be set aside: what is left still reads as Pathfinder 1e ("provoke", "threatened")
    aside = edition.read(TUMBLE, without=("attack of opportunity",))
    assert not {g for g, _ in aside.evidence} & {"opportunity", "attack of", "of opportunity", "an attack"}
    assert aside.probability > AnswerabilitySettings().edition_threshold, aside


@pytest.mark.slow
async def test_end_to_end_another_editions_question_is_not_in_corpus(searcher, extractive):
    ans = await answer_question(PF1, history=[], searcher=searcher, settings=extractive)
    assert ans.outcome == "not_in_corpus", ans.text
    assert "This reads as" in ans.text and "“standard action”" in ans.text and "Pathfinder 2e" in ans.text, ans.text
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(edition_threshold=1.0)})
    ans_off = await answer_question(PF1, history=[], searcher=searcher, settings=off)
    assert ans_off.outcome != "not_in_corpus", ans_off.text  # the guard's not_in_books


@pytest.mark.slow
async def test_end_to_end_a_pf2e_question_in_pre_remaster_words_is_answered(searcher, extractive):
    pf2 = await answer_question(PF2, history=[], searcher=searcher, settings=extractive)
    assert pf2.outcome == "answered", pf2.text


@pytest.mark.slow
def test_a_rename_forces_the_held_rule_only_when_the_rest_is_not_another_games(searcher, extractive):
    # the judge on its own (the guard's "threatened square" aside): the rename ("attack of opportunity" ->
    # Reactive Strike) forced an answer; what else the question says reads as Pathfinder 1e
    def judged(**knobs):
        settings = extractive.model_copy(update={"answerability": AnswerabilitySettings(**knobs)})
        ctx = context_for(searcher, settings)
        return ctx.answerability.assess(TUMBLE, ctx.books.retrieve(TUMBLE).hits)

    read = judged()
    assert read.outcome == "not_in_corpus" and read.foreign_kind == "edition", read
    assert ("attack of opportunity", "Reactive Strike") in read.renamed
    assert judged(edition_rename=False).outcome == "answer"
