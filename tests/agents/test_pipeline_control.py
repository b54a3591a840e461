"""Control flow of the step pipeline with a scripted test double instead of a model (ScriptedFakeLLM)
and real retrieval over the session store: routing, retries, checker failures, DAG concurrency,
cancellation, malformed output, declines."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from fakes import ScriptedFakeLLM, first_passage_id

from gmprep.core.agents.pipeline import AgentPipeline
from gmprep.core.answer import AnswerContext, ChatTurn, answer_question
from gmprep.core.llm.base import LLMError

pytestmark = pytest.mark.slow


def one_node(question: str) -> str:
    return json.dumps({"nodes": [{"id": "q1", "question": question, "depends_on": []}]})


def faithful_answer(messages) -> str:
    """Answers 'from' the first passage shown and cites it, as a grounded model would."""
    return json.dumps({"status": "answered", "answer": "Per the passage, it applies.", "citations": [first_passage_id(messages)]})


def cite_findings(messages) -> str:
    ids = re.findall(r"\[([a-z0-9]+:[^\]\s]+)\]", messages[-1].content)
    return "Here is the rule, in short " + " ".join(f"[{i}]" for i in dict.fromkeys(ids)) + " and an invented [pf2e:spell:made-up]."


CHECK_OK = '{"answered": true, "missing": ""}'
CHECK_NO = '{"answered": false, "missing": "the actual numbers"}'


@pytest.fixture(scope="module")
def ctx(searcher, settings):
    return AnswerContext(searcher, settings)


def fake(**script) -> ScriptedFakeLLM:
    return ScriptedFakeLLM(
        script=script,
        default={"answer": faithful_answer, "check": CHECK_OK, "summarize": cite_findings},
    )


async def test_answer_cites_retrieved_passages_and_traces_every_step(ctx, settings):
    llm = fake(plan=[one_node("What does the frightened condition do?")])
    deltas: list[str] = []
    ans = await answer_question("What does the frightened condition do?", history=[], searcher=ctx.searcher,
                                settings=settings, context=ctx, llm=llm, on_delta=deltas.append)
    assert ans.outcome == "answered"
    retrieved = next(s for s in ans.steps if s.name == "retrieve").retrieved
    assert ans.citations and ans.citations[0].source_id in retrieved
    assert "pf2e:condition:frightened" in retrieved
    # the invented id the "model" added is removed from the text and never cited
    assert "made-up" not in ans.text and all("made-up" not in c.source_id for c in ans.citations)
    names = [s.name for s in ans.steps]
    assert names == ["other_systems", "answerability", "plan", "route", "retrieve", "answer", "check", "collate", "check_coverage",
                     "summarize", "check_citations"]
    assert "".join(deltas).startswith("Here is the rule")
    assert ans.tokens_in > 0 and ans.tokens_out > 0
    assert llm.steps_called() == ["plan", "answer", "check", "summarize"]


async def test_invalid_output_is_retried_once_with_the_error(ctx):
    llm = fake(plan=["{\"nodes\": [", one_node("What does the prone condition do?")])
    ans = await AgentPipeline(llm, ctx).run("What does the prone condition do?", [])
    plan_steps = [s for s in ans.steps if s.name == "plan"]
    assert [s.status for s in plan_steps] == ["failed", "retried"]
    retry_messages = llm.calls[1][1]
    assert "invalid" in retry_messages[-1].content and retry_messages[-2].content.startswith("{\"nodes\"")
    assert ans.outcome == "answered"


async def test_answer_step_invalid_twice_is_a_model_error(ctx):
    llm = fake(plan=[one_node("What does the prone condition do?")],
               answer=['{"status": "maybe", "answer": "", "citations": []}', "not json at all"])
    ans = await AgentPipeline(llm, ctx).run("What does the prone condition do?", [])
    assert ans.outcome == "model_error"
    assert "summarize" not in llm.steps_called()
    assert [s.status for s in ans.steps if s.name == "answer"] == ["failed", "failed"]


async def test_backend_errors_degrade_to_a_typed_model_error(ctx):
    def broken(messages):
        raise LLMError("connection refused")

    llm = ScriptedFakeLLM(default={name: broken for name in ("plan", "answer", "check", "summarize")})
    ans = await AgentPipeline(llm, ctx).run("What does the prone condition do?", [])
    assert ans.outcome == "model_error"
    plan = [s for s in ans.steps if s.name == "plan"]
    assert plan[0].status == "failed" and "connection refused" in plan[0].error


async def test_cyclic_plan_is_rejected_then_falls_back_to_one_node(ctx):
    cyclic = json.dumps({"nodes": [{"id": "q1", "question": "What is prone?", "depends_on": ["q2"]},
                                   {"id": "q2", "question": "What does Trip do?", "depends_on": ["q1"]}]})
    llm = fake(plan=[cyclic, cyclic])
    ans = await AgentPipeline(llm, ctx).run("What does Trip do to a target?", [])
    assert [s.status for s in ans.steps if s.name == "plan"] == ["failed", "failed"]
    assert "cycle" in next(s for s in ans.steps if s.name == "plan").error
    assert llm.steps_called().count("answer") == 1 and ans.outcome == "answered"


async def test_independent_nodes_run_concurrently_and_dependents_wait(ctx):
    plan = json.dumps({"nodes": [
        {"id": "q1", "question": "What happens when Trip succeeds?", "depends_on": []},
        {"id": "q2", "question": "What does the Demoralize action do?", "depends_on": []},
        {"id": "q3", "question": "How do prone and frightened combine?", "depends_on": ["q1", "q2"]},
    ]})
    llm = fake(plan=[plan])
    llm.call_delay_s = {"answer": 0.4}
    ans = await AgentPipeline(llm, ctx).run("Trip and Demoralize the same goblin: what is it left with?", [])
    assert llm.max_in_flight["answer"] >= 2  # q1 and q2 overlapped
    answers = [(kind, msg) for kind, step, msg in llm.events if step == "answer"]
    q3_start = next(i for i, (kind, msg) in enumerate(answers) if kind == "start" and "combine" in msg)
    ends_before = [msg for kind, msg in answers[:q3_start] if kind == "end"]
    assert any("Trip succeeds" in m for m in ends_before) and any("Demoralize" in m for m in ends_before)
    # q3 retrieves with what q1 and q2 found
    q3_retrieve = next(s for s in ans.steps if s.name == "retrieve" and s.node == "q3")
    assert "Per the passage" in q3_retrieve.input["query"]
    assert ans.outcome == "answered"


async def test_checker_rejection_routes_to_the_next_source(notes_searcher, settings):
    ctx = AnswerContext(notes_searcher, settings)
    assert [s.name for s in ctx.search_sources()] == ["books", "notes"]
    llm = fake(plan=[one_node("How many hero points does a PC start a session with?")],
               route=['{"source": "books"}'], check=[CHECK_NO, CHECK_OK])
    ans = await AgentPipeline(llm, ctx).run("How many hero points does a PC start a session with?", [])
    collate = next(s for s in ans.steps if s.name == "collate").output[0]
    assert collate["tried"] == ["books", "notes"] and collate["status"] == "answered"
    sources = [s.input["source"] for s in ans.steps if s.name == "retrieve"]
    assert sources == ["books", "notes"]
    assert any(c.source_id.startswith("note:") for c in ans.citations)


async def test_partial_when_the_checker_never_confirms(ctx):
    llm = fake(plan=[one_node("What does the prone condition do?")], check=[CHECK_NO])
    ans = await AgentPipeline(llm, ctx).run("What does the prone condition do?", [])
    assert ans.outcome == "partial" and ans.citations


async def test_checker_failure_keeps_the_answer_status(ctx):
    llm = fake(plan=[one_node("What does the prone condition do?")], check=["nope", "still nope"])
    ans = await AgentPipeline(llm, ctx).run("What does the prone condition do?", [])
    assert [s.status for s in ans.steps if s.name == "check"] == ["failed", "failed"]
    assert ans.outcome == "answered"


async def test_cancel_while_streaming_returns_the_partial_answer(ctx):
    long_text = "Word " * 200 + "[pf2e:condition:prone]"
    llm = fake(plan=[one_node("What does the prone condition do?")], summarize=[long_text])
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
    assert ans.steps[-1].status == "cancelled"


async def test_other_systems_question_is_declined_without_the_model(ctx):
    llm = fake()
    ans = await AgentPipeline(llm, ctx).run("How many bonus actions can my monk take each turn?", [])
    assert ans.outcome == "not_in_books" and not ans.citations
    assert "bonus action" in ans.text
    assert llm.calls == []


async def test_off_topic_question_finds_nothing_relevant(ctx):
    llm = fake(plan=[one_node("What is a good banana bread recipe?")])
    ans = await AgentPipeline(llm, ctx).run("What is a good banana bread recipe?", [])
    assert ans.outcome == "not_in_books"
    assert "answer" not in llm.steps_called()


async def test_followup_is_rewritten_with_the_history(ctx):
    history = [ChatTurn(role="user", content="What does the Shove action do?"),
               ChatTurn(role="assistant", content="Shove pushes a creature away on a success.")]
    llm = fake(rewrite=['{"standalone": "What happens if I critically fail a Shove?"}'],
               plan=[one_node("What happens if I critically fail a Shove?")])
    ans = await AgentPipeline(llm, ctx).run("What happens if I critically fail it?", history)
    assert ans.question == "What happens if I critically fail a Shove?"
    assert [s.status for s in ans.steps if s.name == "select_history"] == ["skipped"]
    rewrite_prompt = llm.calls[0][1][-1].content
    assert "Shove pushes" in rewrite_prompt and "critically fail it" in rewrite_prompt
    assert "pf2e:action:shove" in next(s for s in ans.steps if s.name == "retrieve").retrieved


async def test_a_wrong_rewrite_is_rescued_by_the_conversation_phrasing(ctx):
    # the rewrite names the wrong action; the fused search still finds Shove from the conversation
    history = [ChatTurn(role="user", content="What does the Shove action do?"),
               ChatTurn(role="assistant", content="Shove pushes a creature away on a success.")]
    llm = fake(rewrite=['{"standalone": "What happens if I critically fail a Feint?"}'],
               plan=[one_node("What happens if I critically fail a Feint?")])
    ans = await AgentPipeline(llm, ctx).run("What happens if I critically fail it?", history)
    step = next(s for s in ans.steps if s.name == "retrieve")
    assert step.input["query"] == "What happens if I critically fail a Feint?"
    assert step.input["alternates"] == ["What does the Shove action do? What happens if I critically fail it?"]
    assert {"pf2e:action:shove", "pf2e:action:feint"} <= set(step.retrieved)


async def test_a_one_node_plan_is_searched_in_the_users_words(ctx):
    # the planner dropped "Trips" and "succeeds"; the search uses the user's own question
    llm = fake(plan=[one_node("What condition does a fighter leave an ogre with?")])
    question = "If my fighter Trips the ogre and succeeds, what condition is it left with?"
    ans = await AgentPipeline(llm, ctx).run(question, [])
    step = next(s for s in ans.steps if s.name == "retrieve")
    assert step.input["query"] == question and step.input["alternates"] == []
    assert {"pf2e:action:trip", "pf2e:condition:prone"} <= set(step.retrieved)
    answer_prompt = next(c for c in llm.calls if c[0] == "answer")[1][-1].content
    assert "What condition does a fighter leave an ogre with?" in answer_prompt  # the node's question is answered


async def test_split_plans_search_each_sub_question_alone(ctx):
    llm = fake(plan=['{"nodes": [{"id": "q1", "question": "What does Trip do?", "depends_on": []}, '
                     '{"id": "q2", "question": "What does the prone condition do?", "depends_on": ["q1"]}]}'])
    ans = await AgentPipeline(llm, ctx).run("If I Trip an ogre, what does prone do to it?", [])
    steps = [s for s in ans.steps if s.name == "retrieve"]
    assert [s.input["alternates"] for s in steps] == [[], []]
    assert steps[0].input["query"] == "What does Trip do?"


async def test_long_history_selects_relevant_messages_first(ctx):
    history = [ChatTurn(role="user", content="What does fireball do?"),
               ChatTurn(role="assistant", content="Fireball deals fire damage in a burst."),
               ChatTurn(role="user", content="What does the Shove action do?"),
               ChatTurn(role="assistant", content="Shove pushes a creature away on a success.")]
    llm = fake(select_history=['{"relevant": [2, 3, 99]}'],
               rewrite=['{"standalone": "What happens on a critical failure to Shove?"}'],
               plan=[one_node("What happens on a critical failure to Shove?")])
    await AgentPipeline(llm, ctx).run("And if I critically fail it?", history)
    assert llm.steps_called()[:2] == ["select_history", "rewrite"]
    rewrite_prompt = llm.calls[1][1][-1].content
    assert "Shove" in rewrite_prompt and "Fireball" not in rewrite_prompt


async def test_unresolved_rewrite_falls_back_to_the_conversation_context(ctx):
    history = [ChatTurn(role="user", content="What does the Shove action do?"),
               ChatTurn(role="assistant", content="Shove pushes a creature away on a success.")]
    llm = fake(rewrite=['{"standalone": "What happens if I critically fail it?"}'],
               plan=[one_node("What happens if I critically fail a Shove?")])
    ans = await AgentPipeline(llm, ctx).run("What happens if I critically fail it?", history)
    assert ans.question == "What does the Shove action do? What happens if I critically fail it?"
    assert [s.name for s in ans.steps][:3] == ["select_history", "rewrite", "rewrite_fallback"]


async def test_the_checker_confirms_an_answer_the_model_called_partial(ctx):
    def modest(messages):
        return json.dumps({"status": "partial", "answer": "It applies.", "citations": [first_passage_id(messages)]})

    llm = fake(plan=[one_node("What does the prone condition do?")], answer=[modest])
    ans = await AgentPipeline(llm, ctx).run("What does the prone condition do?", [])
    assert ans.outcome == "answered"
