"""Control flow of the model pipeline with a scripted test double instead of a model (ScriptedFakeLLM)
and real retrieval over the session store: one generation per question, sources before the answer,
citations read back from [n], the fixed not-found line, model failures, cancellation, declines
before any model call, follow-up rewriting, and the notes source."""

from __future__ import annotations

import asyncio

import pytest
from fakes import ScriptedFakeLLM, passage_numbers, passage_sentence

from gmprep.core.agents.pipeline import ALL_STRUCK, NOT_FOUND, AgentPipeline
from gmprep.core.answer import AnswerContext, ChatTurn, answer_question
from gmprep.core.llm.base import LLMError

pytestmark = pytest.mark.slow


def cite_first(messages) -> str:
    """Restates the first passage shown and cites it (and a number no passage has), as a grounded model would."""
    n = passage_numbers(messages)[0]
    return f"{passage_sentence(messages, n)} [{n}][9]."


@pytest.fixture(scope="module")
def ctx(searcher, settings):
    return AnswerContext(searcher, settings)


def fake(**script) -> ScriptedFakeLLM:
    return ScriptedFakeLLM(script=script, default={"cited_answer": cite_first})


async def test_single_need_question_takes_one_generation_after_its_sources(ctx, settings):
    llm = fake()
    events: list[tuple[str, object]] = []
    ans = await answer_question("What does the frightened condition do?", history=[], searcher=ctx.searcher,
                                settings=settings, context=ctx, llm=llm,
                                on_delta=lambda d: events.append(("delta", d)),
                                on_sources=lambda s: events.append(("sources", s)))
    assert llm.steps_called() == ["cited_answer"]  # no planner, router or checker call
    assert ans.outcome == "answered"
    assert events[0][0] == "sources" and [e for e, _ in events].count("sources") == 1
    assert events[0][1] == ans.citations and len(ans.citations) == 5
    assert "pf2e:condition:frightened" in [c.source_id for c in ans.citations]
    # [1] maps to the first source; the out-of-range [9] is not a citation
    assert ans.used == [ans.citations[0].source_id]
    assert "".join(d for e, d in events if e == "delta") == ans.text
    names = [s.name for s in ans.steps]
    assert names == ["other_systems", "answerability", "plan", "retrieve", "cited_answer", "support_check",
                     "check_citations"]
    assert next(s for s in ans.steps if s.name == "plan").status == "skipped"
    t = ans.timings_ms
    assert t["sources"] <= t["first_token"] <= t["total"]
    prompt = llm.calls[0][1]
    assert prompt[-1].content.startswith("Question: What does the frightened condition do?")
    assert "[1] Frightened" in prompt[-1].content or "[1] " in prompt[-1].content


async def test_a_claim_its_passage_does_not_state_is_struck_from_the_answer(ctx, settings):
    """The support check runs on the finished answer: an invented number leaves the saved answer (listed
    struck through, so the reader knows what was streamed and withdrawn); the grounded sentences stay with
    their citations, and with two of three claims standing no passages are quoted."""
    def grounded_then_invented(messages) -> str:
        first, second = passage_numbers(messages)[:2]
        return (f"{passage_sentence(messages, first)} [{first}]. {passage_sentence(messages, second)} [{second}]. "
                f"The condition lasts exactly 17 rounds [{first}].")

    events: list[str] = []
    ans = await answer_question("What does the frightened condition do?", history=[], searcher=ctx.searcher,
                                settings=settings, context=ctx, llm=fake(cited_answer=[grounded_then_invented]),
                                on_delta=events.append)
    check = next(s for s in ans.steps if s.name == "support_check")
    assert [u["reason"] for u in check.output["unsupported"]] == ["number not in passage"]
    # what the check read is kept, so bench/replay_support.py can check the same generation again
    assert "17 rounds" in check.output["checked"] and check.output["question"].startswith("What does the frightened")
    assert check.output["passages"][:2] == [c.source_id for c in ans.citations[:2]]
    assert ans.outcome == "answered" and ans.used == [c.source_id for c in ans.citations[:2]]
    body, note = ans.text.split("_Left out", 1)
    assert "17 rounds" not in body and "From the books" not in ans.text
    assert "~~The condition lasts exactly 17 rounds.~~" in note
    assert "".join(events).endswith(note)  # the note reaches a streaming reader too


async def test_the_models_reading_strikes_a_kept_claim_when_the_setting_is_on(ctx, settings):
    """``llm.support_reader``: after the answer, each claim the check keeps is read by the model (here a scripted
    reading, not a model) off the event loop; a clear "no" strikes it and the note streams in order. Off (the
    default), the model is never asked."""
    def two_grounded(messages) -> str:
        first, second = passage_numbers(messages)[:2]
        return f"{passage_sentence(messages, first)} [{first}]. {passage_sentence(messages, second)} [{second}]."

    on = settings.merged({"llm": {"support_reader": True}})
    reading_ctx = AnswerContext(ctx.searcher, on, judge=ctx.judge)
    events: list[str] = []
    # the struck claim is then offered to the other passages (``recite``): the first one the score keeps is read
    # once, and no other
    llm = ScriptedFakeLLM(script={"cited_answer": [two_grounded]}, readings=[8.0] + [-8.0] * 6)
    ans = await answer_question("What does the frightened condition do?", history=[], searcher=ctx.searcher,
                                settings=on, context=reading_ctx, llm=llm, on_delta=events.append)
    check = next(s for s in ans.steps if s.name == "support_check")
    assert check.output["model_readings"] == 2 and len(llm.read_calls) in (2, 3) and check.output["recited"] == []
    assert [u["reason"] for u in check.output["unsupported"]] == ["the model reads it as unsupported"]
    assert llm.read_calls[0][1].content.startswith("Passage 1: ")
    note = "_Left out" + ans.text.split("_Left out", 1)[1]
    assert "".join(events).endswith(note)  # the note (and the passages, half being struck) reached the stream, in order
    off = ScriptedFakeLLM(script={"cited_answer": [two_grounded]}, readings=[-8.0, -8.0])
    plain = await answer_question("What does the frightened condition do?", history=[], searcher=ctx.searcher,
                                  settings=settings, context=ctx, llm=off)
    assert off.read_calls == [] and "_Left out" not in plain.text


async def test_an_answer_mostly_struck_is_followed_by_the_passages(ctx, settings):
    """When the check strikes at least half of the claims, what is left is too thin to answer by: the
    passages the quoting answer shows are quoted below it, and the answer is partial."""
    def grounded_then_invented(messages) -> str:
        n = passage_numbers(messages)[0]
        return (f"{passage_sentence(messages, n)} [{n}]. The condition lasts exactly 17 rounds [{n}]. "
                "Most game masters ignore this rule entirely at their tables.")

    events: list[str] = []
    ans = await answer_question("What does the frightened condition do?", history=[], searcher=ctx.searcher,
                                settings=settings, context=ctx, llm=fake(cited_answer=[grounded_then_invented]),
                                on_delta=events.append)
    check = next(s for s in ans.steps if s.name == "support_check")
    assert sorted(u["reason"] for u in check.output["unsupported"]) == ["no citation", "number not in passage"]
    assert ans.outcome == "partial" and not ans.declined
    assert ans.used == [c.source_id for c in ans.citations[:5]]
    body, rest = ans.text.split("_Left out", 1)
    assert "17 rounds" not in body and "[5] **" in rest
    assert "".join(events).endswith(rest)  # the quotes reach a streaming reader too


async def test_a_claim_citing_the_wrong_passage_is_cited_again_to_the_one_that_states_it(ctx, settings):
    """A small model often restates one passage and cites its neighbour: the support check finds the passage
    that does state it, the saved answer cites that one (and says so), nothing is struck."""
    def wrong_number(messages) -> str:
        first, second = passage_numbers(messages)[:2]
        return f"{passage_sentence(messages, second)} [{first}]."

    events: list[str] = []
    ans = await answer_question("What does the frightened condition do?", history=[], searcher=ctx.searcher,
                                settings=settings, context=ctx, llm=fake(cited_answer=[wrong_number]),
                                on_delta=events.append)
    check = next(s for s in ans.steps if s.name == "support_check")
    assert len(check.output["recited"]) == 1 and check.output["recited"][0].endswith("[2].")
    assert ans.outcome == "answered" and ans.used == [ans.citations[1].source_id]
    assert "_Cited again, to the passage that states it:_\n- [2] " in ans.text
    assert "Left out" not in ans.text
    # the reader saw the first citation streamed, then the note that corrects it
    assert "".join(events).endswith(ans.text[ans.text.index("\n\n_Cited again"):])


async def test_a_repeated_sentence_is_cited_again_once(ctx, settings):
    """The 1.5B model repeats its last sentence (the sentence cap stops it at the repeat): the note that cites it again
    lists it once, not once per copy."""
    def repeated(messages) -> str:
        first, second = passage_numbers(messages)[:2]
        sentence = f"{passage_sentence(messages, second)} [{first}]."
        return f"{sentence} {sentence}"

    ans = await answer_question("What does the frightened condition do?", history=[], searcher=ctx.searcher,
                                settings=settings, context=ctx, llm=fake(cited_answer=[repeated]))
    note = ans.text[ans.text.index("_Cited again, to the passage that states it:_"):]
    assert note.count("\n- [2] ") == 1, note
    # the saved answer (what the panel shows once the stream ends) says it once too
    body = ans.text[:ans.text.index("_Cited again")]
    assert body.count(" [2].") == 1 and ans.text.count("[1].") == 0, body


async def test_multi_need_question_searches_each_need_and_still_generates_once(ctx):
    llm = fake()
    q = "My fighter is frightened 2. What does that do to his attacks, and how does he get rid of it?"
    ans = await AgentPipeline(llm, ctx).run(q, [])
    retrieve = next(s for s in ans.steps if s.name == "retrieve")
    assert len(retrieve.input["needs"]) == 2
    assert llm.steps_called() == ["cited_answer"]


async def test_not_found_line_is_partial_with_the_closest_passages_quoted(ctx):
    llm = fake(cited_answer=[NOT_FOUND])
    ans = await AgentPipeline(llm, ctx).run("What does the prone condition do?", [])
    assert ans.outcome == "partial" and not ans.declined
    assert ans.text.startswith(NOT_FOUND) and "[1] **" in ans.text and "[5] **" in ans.text
    assert ans.used == [c.source_id for c in ans.citations[:5]]  # what the quoting answer would cite


async def test_answer_citing_nothing_is_partial(ctx):
    """An answer with no cited claim that any passage states is not grounded: it is struck and the closest
    passages are quoted. An uncited claim a passage does state gets that passage's citation instead."""
    llm = fake(cited_answer=["Prone makes you immune to dragons for 40 rounds."])
    ans = await AgentPipeline(llm, ctx).run("What does the prone condition do?", [])
    assert ans.outcome == "partial" and ans.text.startswith(ALL_STRUCK) and NOT_FOUND not in ans.text
    assert "~~Prone makes you immune to dragons for 40 rounds.~~" in ans.text
    assert ans.used == [c.source_id for c in ans.citations[:5]]

    llm = fake(cited_answer=["Prone means you lie on the ground."])
    ans = await AgentPipeline(llm, ctx).run("What does the prone condition do?", [])
    assert ans.outcome == "answered" and "pf2e:condition:prone" in ans.used
    assert "_Cited again, to the passage that states it:_" in ans.text


async def test_backend_error_quotes_the_passages(ctx):
    def boom(messages):
        raise LLMError("connection refused")

    llm = fake(cited_answer=[boom])
    ans = await AgentPipeline(llm, ctx).run("What does the prone condition do?", [])
    assert ans.outcome == "model_error" and "connection refused" in ans.text and "[1] **" in ans.text
    assert next(s for s in ans.steps if s.name == "cited_answer").status == "failed"


async def test_cancel_while_streaming_returns_the_partial_answer(ctx):
    long_text = "Word " * 200 + "[1]"
    llm = fake(cited_answer=[long_text])
    llm.word_delay_s = 0.005
    cancel = asyncio.Event()
    seen: list[str] = []

    def on_delta(piece: str) -> None:
        seen.append(piece)
        if len(seen) == 5:
            cancel.set()

    ans = await AgentPipeline(llm, ctx).run("What does the prone condition do?", [], on_delta=on_delta, cancel=cancel)
    assert ans.outcome == "cancelled"
    assert ans.text.startswith("Word") and len(ans.text) < len(long_text)
    assert ans.steps[-1].status == "cancelled" and ans.citations


async def test_other_systems_question_is_declined_without_the_model(ctx):
    llm = fake()
    sources: list = []
    ans = await AgentPipeline(llm, ctx).run("How many bonus actions can my monk take each turn?", [],
                                            on_sources=sources.append)
    assert ans.outcome == "not_in_books" and not ans.citations and sources == [[]]
    assert "bonus action" in ans.text
    assert llm.calls == []


async def test_off_topic_question_is_declined_before_any_model_call(ctx):
    llm = fake()
    ans = await AgentPipeline(llm, ctx).run("What is a good banana bread recipe?", [])
    assert ans.outcome == "not_in_books"
    assert llm.calls == []


async def test_followup_is_searched_with_the_conversation_in_one_generation(ctx):
    history = [ChatTurn(role="user", content="What does the Shove action do?"),
               ChatTurn(role="assistant", content="Shove pushes a creature away on a success.")]
    llm = fake()
    ans = await AgentPipeline(llm, ctx).run("What happens if I critically fail it?", history)
    assert ans.question == "What does the Shove action do? What happens if I critically fail it?"
    assert llm.steps_called() == ["cited_answer"]  # no rewrite call before the sources
    assert next(s for s in ans.steps if s.name == "rewrite").status == "skipped"
    retrieve = next(s for s in ans.steps if s.name == "retrieve")
    assert "pf2e:action:shove" in retrieve.retrieved and retrieve.input["needs"] == []  # one need, not two
    assert llm.calls[0][1][-1].content.startswith(f"Question: {ans.question}")


async def test_rewrite_steps_measured_by_the_eval(ctx):
    """``_standalone`` (select_history -> rewrite) is what ``eval answers --rewrite-vs-concat`` measures."""
    history = [ChatTurn(role="user", content="What does the Shove action do?"),
               ChatTurn(role="assistant", content="Shove pushes a creature away on a success.")]
    pipeline = AgentPipeline(fake(rewrite=['{"standalone": "What happens if I critically fail a Shove?"}',
                                           '{"standalone": "What happens if I critically fail it?"}']), ctx)
    trace: list = []
    assert await pipeline._standalone("What happens if I critically fail it?", history, trace, None) == \
        "What happens if I critically fail a Shove?"
    rewrite_prompt = pipeline.llm.calls[0][1][-1].content
    assert "Shove pushes" in rewrite_prompt and "critically fail it" in rewrite_prompt
    trace = []  # the model left "it" unresolved: the conversation's phrasing is kept
    assert await pipeline._standalone("What happens if I critically fail it?", history, trace, None) == \
        "What does the Shove action do? What happens if I critically fail it?"
    assert [s.name for s in trace][-2:] == ["rewrite", "rewrite_fallback"]


async def test_notes_answer_when_they_are_the_most_relevant_source(notes_searcher, settings):
    ctx = AnswerContext(notes_searcher, settings)
    assert [s.name for s in ctx.search_sources()] == ["books", "notes"]
    llm = fake()
    # (the books state hero points too since the rules prose: "how many at our table" is a tie between the
    # sources, books 1.18 / notes 1.16; the house rule itself is what only the notes hold)
    ans = await AgentPipeline(llm, ctx).run("What is our house rule for hero points?", [])
    step = next(s for s in ans.steps if s.name == "retrieve")
    assert set(step.output["relevance"]) == {"books", "notes"}
    assert step.output["source"] == "notes" and ans.citations[0].source_id.startswith("note:")
    assert llm.steps_called() == ["cited_answer"]


async def test_another_pf2e_books_class_asked_is_declined_without_the_model(ctx):
    # the guard's Pathfinder 2e name now goes through the answerability judge with the passages: asked on its own,
    # it is still declined, naming the book, before any model call
    llm = fake()
    ans = await AgentPipeline(llm, ctx).run("Is my summoner unconscious or dying when his eidolon drops to 0 Hit "
                                            "Points?", [])
    assert ans.outcome == "not_in_corpus", ans.text
    assert ans.text.startswith("“summoner” (class) is from Secrets of Magic"), ans.text
    assert llm.calls == []
