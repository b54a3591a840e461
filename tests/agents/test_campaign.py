"""Rules of the organized-play campaign (``core/agents/campaign.py``) on the real session store: a question that
names the campaign and a section of its guide is declined as not_in_corpus naming the guide; naming the campaign
beside a core rule is answered; a book named for the guide makes its sections held. And the term a question turns
on that no retrieved passage uses (``otherbooks.hinge_terms``'s ``passages``)."""

from __future__ import annotations

import shutil

import pytest

from gmprep.common.settings import AnswerabilitySettings, Settings
from gmprep.core.agents.campaign import CampaignRules, load_campaign
from gmprep.core.agents.otherbooks import BookUse, held_books, hinge_terms, quoted_in
from gmprep.core.answer import answer_question

pytestmark = pytest.mark.slow


def _verdict(ans) -> dict:
    return next(s for s in ans.steps if s.name == "answerability").output


def test_the_guides_outline_loads_with_sources():
    outline = load_campaign()
    assert outline.manifest["sources"] and "PFS" in outline.campaign.names
    assert all(s.source_url and s.book == outline.campaign.book for s in outline.sections)
    assert len({s.id for s in outline.sections}) == len(outline.sections)


def test_the_campaign_and_a_section_of_its_guide(searcher):
    rules = CampaignRules(searcher.store)
    m = rules.about("In PFS, do boons stay slotted after the session, or do I slot them again?")
    assert m is not None and (m.section.title, m.named) == ("Boons", "PFS")
    # the most specific section named: "Rebuilding Your Character", not a one-word title inside the question
    m = rules.about("Can my pathfinder society character rebuild after her first game?")
    assert m is not None and m.section.title == "Rebuilding Your Character"
    # the campaign named beside a core rule, or a section's words without the campaign: not the guide's rule
    assert rules.about("Running a PFS scenario with an ambush: do the monsters act before initiative?") is None
    assert rules.about("Do boons from my deity stack with a blessing?") is None


def test_the_guide_named_by_its_title(searcher):
    rules = CampaignRules(searcher.store)
    assert rules.guide_named("I can't find this in the new PFS2 Guide: how do GM chronicles apply?") == "PFS2 Guide"
    assert rules.guide_named("What does the Guide to Organized Play say about pets?") == "Guide to Organized Play"
    assert rules.guide_named("Are there PFS guidelines for ambushes?") == ""
    assert rules.guide_named("Which guide should a new GM read first?") == ""


async def test_the_guide_named_is_not_in_corpus_naming_it(searcher, extractive):
    q = ("I can't find this in the new PFS2 Guide: what are the current rules for applying GM chronicles to a "
         "character? Can I still apply a high-level chronicle to a first-level character?")
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    verdict = _verdict(ans)
    assert ans.outcome == "not_in_corpus" and ans.declined, verdict
    assert (verdict["foreign"], verdict["foreign_book"], verdict["foreign_kind"]) == (
        "PFS2 Guide", "Guide to Organized Play", "book")
    assert ans.text.startswith("This question is about Guide to Organized Play, which is not among the books gmprep "
                               "holds (")


async def test_a_campaign_rule_is_not_in_corpus_naming_the_guide(searcher, extractive):
    q = "Since the PFS rules are strict, can I trade an item to another player who lacks the access for it?"
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    verdict = _verdict(ans)
    assert ans.outcome == "not_in_corpus" and ans.declined, verdict
    assert verdict["campaign"] == "PFS" and verdict["section"]["title"] == "Access"
    assert ans.text.startswith("Access in PFS play is a rule of the organized-play campaign: its Guide to Organized")
    assert "`gmprep books add`" in ans.text
    # the campaign named in words: not "organized play play"
    ans = await answer_question("Playing in organized play, do my boons stay slotted after the session ends?", history=[],
                                searcher=searcher, settings=extractive)
    assert ans.text.startswith("Boons in organized play is a rule of the organized-play campaign"), ans.text


async def test_a_core_rule_in_a_campaign_game_is_answered(searcher, extractive):
    q = "Running a PFS scenario: if the monsters beat our Perception DCs with Stealth, who acts first in the round?"
    ans = await answer_question(q, history=[], searcher=searcher, settings=extractive)
    assert not _verdict(ans).get("campaign"), _verdict(ans)


def test_a_book_named_for_the_guide_makes_it_held(store_dir, tmp_path):
    from gmprep.ingest.books.store import add_book
    from gmprep.kg.store import Store

    target = tmp_path / "store"
    shutil.copytree(store_dir, target)
    md = tmp_path / "guide.md"
    md.write_text("# Guide to Organized Play: Pathfinder Society (Second Edition)\n\n## Player Rewards\n\n"
                  "### Boons\n\nBoons are rewards applied to a character.\n", encoding="utf-8")
    q = "In PFS, do boons stay slotted after the session?"
    with Store.open(target, create=False) as store:
        rules = CampaignRules(store)
        assert rules.about(q) is not None
        add_book(Settings(store_dir=target), md, embed=False, progress=False)
        assert rules.held() and rules.about(q) is None


def test_a_term_no_retrieved_passage_uses_may_be_used_more_by_the_books(searcher):
    use = BookUse(searcher.store.db)
    held = held_books(use.db)
    q = ("The implement we start with is mundane. If we find a wand of fireball, can that be my new wand implement, "
         "and does the implement keep its charges?")
    assert use.uses("implement") > 3 + 2  # cooking and writing implements, "implement the rule"
    assert hinge_terms(q, use, held, slack=2, min_repeats=3) == []
    off_topic = ["Wand of Fireball\nThis wand holds fireball.", "Craft\nYou can make an item from raw materials."]
    [t] = hinge_terms(q, use, held, slack=2, min_repeats=3, passages=off_topic, unquoted_slack=30)
    assert (t.shown, t.repeats) == ("implement", 3)
    # a passage that uses it (any inflection) is about it: the books' own limit applies
    assert quoted_in("implement", ["A light pick is a modified mining implement."])
    on_topic = [*off_topic, "Held Items\nThey are most often tools, implements, items that can be thrown."]
    assert hinge_terms(q, use, held, slack=2, min_repeats=3, passages=on_topic, unquoted_slack=30) == []
    assert hinge_terms(q, use, held, slack=2, min_repeats=3, passages=off_topic, unquoted_slack=5) == []


async def test_the_unquoted_slack_setting_turns_the_widening_on_and_off(searcher, extractive):
    q = ("The implement we start with is mundane. If we find a wand of fireball, can that be my new wand implement, "
         "and does the implement keep its charges?")
    # the widening alone (the rule that reads what the books state, core/agents/stated.py, off)
    on = extractive.model_copy(update={"answerability": AnswerabilitySettings(hinge_unquoted_slack=30,
                                                                              unstated_repeats=0)})
    ans = await answer_question(q, history=[], searcher=searcher, settings=on)
    verdict = _verdict(ans)
    assert ans.outcome == "not_in_corpus" and verdict["foreign"] == "implement", verdict
    assert extractive.answerability.hinge_unquoted_slack == -1  # off by default (docs/answerability.md)
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(unstated_repeats=0)})
    ans = await answer_question(q, history=[], searcher=searcher, settings=off)
    assert _verdict(ans).get("foreign") != "implement"
