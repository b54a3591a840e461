"""The quote reader (``core/agents/quotes.py``) on the shipped table: another game's rules text quoted in a question
is that game's rule; Pathfinder 2e's own text, and a question that says it is about Pathfinder 2e, are not."""

from __future__ import annotations

from gmprep.common.settings import AnswerabilitySettings
from gmprep.core.agents import quotes
from gmprep.core.answer import answer_question

# a real gap post of the tuning set (nicm-013): the Pathfinder 1e Core Rulebook's somatic component, quoted
PF1_QUOTE = ("My group has recently started a Pathfinder game and I'm finding the grappling rules confusing. 'To cast "
             "a spell with a somatic component, you must gesture freely with at least one hand. You can't cast a spell "
             "of this type while bound, grappling, or with both your hands full or occupied.' Can my wizard cast "
             "while grappling?")


def test_a_quoted_rule_of_another_game_is_found_and_named():
    found = quotes.find(PF1_QUOTE)
    assert found is not None and found.game == "Pathfinder 1st Edition" and found.count >= 1
    assert found.words.lower() in PF1_QUOTE.lower()  # as the question writes it
    manifest = quotes.manifest()
    assert manifest["shingle"] == quotes.SHINGLE and manifest["sample"] == quotes.SAMPLE
    assert set(manifest["sources"]) == set(quotes.GAMES) and all(s["commit"] for s in manifest["sources"].values())


def test_pathfinder_2e_text_and_plain_questions_are_no_quote(store_dir):
    from gmprep.kg.render import passage_text
    from gmprep.kg.store import Store

    with Store.open(store_dir, create=False) as st:
        # the held books' own text: its shingles were left out of the table
        for nid in ("pf2e:action:cast-a-spell", "pf2e:condition:grabbed", "pf2e:action:ready"):
            assert quotes.find(passage_text(st.get(nid))) is None, nid
    assert quotes.find("Can I cast a spell while holding a longspear in both hands?") is None
    assert quotes.find("") is None


async def test_a_question_quoting_another_game_is_not_in_corpus(searcher, extractive):
    ans = await answer_question(PF1_QUOTE, history=[], searcher=searcher, settings=extractive)
    assert ans.outcome == "not_in_corpus" and not ans.citations
    assert "quotes Pathfinder 1st Edition's rules text" in ans.text
    # said to be about Pathfinder 2e, the quote is a comparison: not declined for it
    said = "In PF2e, does this still hold? " + PF1_QUOTE
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(quote_decline=False)})
    for question, settings in ((said, extractive), (PF1_QUOTE, off)):
        ans = await answer_question(question, history=[], searcher=searcher, settings=settings)
        assert "quotes Pathfinder 1st Edition" not in ans.text
