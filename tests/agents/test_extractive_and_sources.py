"""The no-model answer and the knowledge sources on the real session store: quotes with citations,
declines for other systems' rules and off-topic questions, and the glossary's general filter."""

from __future__ import annotations

import pytest

from gmprep.common.settings import AnswerabilitySettings
from gmprep.core.answer import AnswerContext, ChatTurn, answer_question
from gmprep.core.llm.extractive import followup_query
from gmprep.core.sources import OtherSystemsSource, OtherSystemTerm, load_other_system_terms
from gmprep.kg.legacy import LEGACY_NAMES

pytestmark = pytest.mark.slow


async def test_quotes_the_passage_that_answers(searcher, extractive):
    deltas: list[str] = []
    events: list[tuple[str, object]] = []
    ans = await answer_question("How much does the frightened condition lower checks and DCs?", history=[],
                                searcher=searcher, settings=extractive,
                                on_delta=lambda d: (deltas.append(d), events.append(("delta", d))),
                                on_sources=lambda s: events.append(("sources", s)))
    assert ans.outcome == "answered"
    ids = [c.source_id for c in ans.citations]
    assert "pf2e:condition:frightened" in ids[:5]
    # the sources arrive once, before the text, and are the answer's citations; [n] numbers them
    assert events[0] == ("sources", ans.citations) and [e for e, _ in events].count("sources") == 1
    n = ids.index("pf2e:condition:frightened") + 1
    assert f"[{n}] **Frightened**" in ans.text and "> " in ans.text
    assert ans.used == ids
    assert "".join(deltas) == ans.text
    assert ans.backend == "extractive" and ans.tokens_in == 0 and ans.model == ""
    t = ans.timings_ms
    assert set(t) == {"sources", "first_token", "total"} and t["sources"] <= t["first_token"] <= t["total"]


async def test_declines_other_systems_rules(searcher, extractive):
    question = "How many Hit Dice does a dwarf fighter recover on a long rest?"
    # the other-systems guard alone (the other-edition reader off): not in the books, naming the game
    guard = extractive.model_copy(update={"answerability": AnswerabilitySettings(edition_threshold=1.0)})
    ans = await answer_question(question, history=[], searcher=searcher, settings=guard)
    assert ans.outcome == "not_in_books" and not ans.citations
    assert "Dungeons & Dragons" in ans.text
    # as shipped the whole question reads as another game's too (0.87 >= edition_threshold): that game's rules text is
    # not held, and the decline still names the game the guard found
    ans = await answer_question(question, history=[], searcher=searcher, settings=extractive)
    assert ans.outcome == "not_in_corpus" and not ans.citations
    assert "Dungeons & Dragons 5th Edition rules question" in ans.text


async def test_declines_off_topic_questions(searcher, extractive):
    ans = await answer_question("What is a good banana bread recipe for a rainy afternoon?", history=[],
                                searcher=searcher, settings=extractive)
    assert ans.outcome == "not_in_books" and not ans.citations


async def test_followup_searches_with_the_previous_question(searcher, extractive):
    history = [ChatTurn(role="user", content="What does the Shove action do?"),
               ChatTurn(role="assistant", content="Shove pushes a creature 5 feet.")]
    assert followup_query("And on a critical failure?", history).startswith("What does the Shove action do?")
    ans = await answer_question("And on a critical failure?", history=history, searcher=searcher, settings=extractive)
    assert "pf2e:action:shove" in [c.source_id for c in ans.citations]


async def test_a_followup_that_points_back_reads_back_to_the_question_that_named_its_topic(searcher, extractive):
    history = [ChatTurn(role="user", content="What does Fireball do?"), ChatTurn(role="assistant", content="..."),
               ChatTurn(role="user", content="how much damage at 5th rank?"), ChatTurn(role="assistant", content="...")]
    # "it" points back past a question that names nothing, to the one that names Fireball
    assert followup_query("can it hurt my allies?", history, searcher.names) == \
        "What does Fireball do? how much damage at 5th rank? can it hurt my allies?"
    assert followup_query("can it hurt my allies?", history) == "how much damage at 5th rank? can it hurt my allies?"
    # nothing points back: the question before it only ("and for dragons?" after "what skill for undead?")
    assert followup_query("and for dragons?", history, searcher.names) == "how much damage at 5th rank? and for dragons?"
    ans = await answer_question("can it hurt my allies?", history=history, searcher=searcher, settings=extractive)
    assert "pf2e:spell:fireball" in [c.source_id for c in ans.citations[:3]], [c.name for c in ans.citations]


def test_glossary_never_lists_a_legacy_pathfinder_name():
    legacy = {n.lower() for n in LEGACY_NAMES}
    assert not [t.term for t in load_other_system_terms() if t.term.lower() in legacy]


def test_terms_the_books_use_are_not_foreign(searcher):
    # "spell slot" and "saving throw" are Pathfinder 2e words too: listed on purpose, the store filter drops them
    terms = [OtherSystemTerm(term="spell slot", system="test"), OtherSystemTerm(term="saving throw", system="test"),
             OtherSystemTerm(term="bonus action", system="test")]
    source = OtherSystemsSource(searcher.store, terms)
    assert [t.term for t in source.terms()] == ["bonus action"]
    assert source.retrieve("Which spell slot does it use?").verdict == "nothing_relevant"
    assert source.retrieve("Can I Stride as a bonus action?").verdict == "not_in_books"


def test_a_homebrew_note_that_uses_a_term_makes_it_answerable(notes_searcher):
    # the house-rules note in the notes store defines "bonus action" for that table
    source = OtherSystemsSource(notes_searcher.store)
    assert "bonus action" not in [t.term for t in source.terms()]
    assert "short rest" in [t.term for t in source.terms()]


def test_sources_report_availability(searcher, notes_searcher, extractive):
    assert [s.name for s in AnswerContext(searcher, extractive).search_sources()] == ["books"]
    assert [s.name for s in AnswerContext(notes_searcher, extractive).search_sources()] == ["books", "notes"]


def test_classes_the_trait_glossary_names_without_rules_are_other_books(searcher):
    source = OtherSystemsSource(searcher.store)
    missing = source.missing_classes()
    assert "kineticist" in missing and "magus" in missing
    assert "wizard" not in missing and "swashbuckler" not in missing  # the books hold these classes
    assert [t.term for t in source.match("Which spells suit a 2nd-level magus?")] == ["magus"]
    assert source.match("What does the magus trait mean?") == []  # the trait entry itself is in the books
    assert source.match("Can my wizard cast two spells in a turn?") == []


async def test_another_system_named_in_passing_does_not_decline_a_rule_the_books_hold(searcher, extractive):
    source = OtherSystemsSource(searcher.store)
    # the asker's background is another system; the question names a rule these books hold
    passing = "New to PF2e from 5e and trying to understand Bulk. How much can a Medium character carry?"
    result = source.retrieve(passing)
    assert result.verdict == "nothing_relevant" and "Bulk" in result.note and "5th Edition" in result.note
    ans = await answer_question(passing, history=[], searcher=searcher, settings=extractive)
    assert ans.outcome == "answered" and ans.citations
    # the other system's rule asked about, with only lowercase everyday words beside it: still declined
    asked = "How do advantage and disadvantage work when my rogue attacks a prone target?"
    assert source.retrieve(asked).verdict == "not_in_books"
    assert source.rules_named_besides(asked) == []
    # a rule of the other system asked about beside a rule the books hold still declines
    assert source.retrieve("Can I Stride as a bonus action in 5e?").verdict == "not_in_books"
    # a class from a book gmprep does not hold, as the asker's character, beside rules it does hold
    kineticist = "I'm a flying kineticist with Cat Fall. If I'm knocked prone 50 feet up, do I take damage?"
    assert source.retrieve(kineticist).verdict == "nothing_relevant"
    assert source.retrieve("Which impulses can a 1st-level kineticist pick?").verdict == "not_in_books"


async def test_another_games_term_given_as_an_example_does_not_decline(searcher, extractive):
    # another game's feat named only as an example ("something like Combat Reflexes") in the sentence that asks: the
    # books' rule (reactions per round) is asked, decided with the passages (answerability.guard_asked)
    example = ("The rules say you get 1 reaction per round, so how does something like Combat Reflexes actually let "
               "me use a second one?")
    source = OtherSystemsSource(searcher.store, asked_only=True)
    assert source.retrieve(example).verdict == "nothing_relevant"
    assert OtherSystemsSource(searcher.store).retrieve(example).verdict == "not_in_books"  # the setting off
    # the same feat asked about: still declined
    assert source.retrieve("How many attacks of opportunity per round does the Combat Reflexes feat give?"
                           ).verdict == "not_in_books"
    # and the game named in the setting only, the question asked with the books' words
    setting = ("I've been looking all over the book for the attack penalties in PF1 terms. Is there no special "
               "off-hand penalty, just the standard -5 per follow-up attack?")
    assert source.retrieve(setting).verdict == "nothing_relevant"
    ans = await answer_question(example, history=[], searcher=searcher, settings=extractive)
    assert ans.outcome == "answered" and ans.citations, ans.text
    off = extractive.merged({"answerability": {"guard_asked": False}})
    ans = await answer_question(example, history=[], searcher=searcher, settings=off)
    assert ans.outcome == "not_in_books" and "Pathfinder 1st Edition" in ans.text, ans.text
