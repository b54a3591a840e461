"""Trace storage next to the conversations, and the step patterns' own validation."""

from __future__ import annotations

import pytest

from gmprep.core.agents import schemas
from gmprep.core.agents.steps import load_pattern
from gmprep.core.conversations import ConversationStore
from gmprep.core.traces import TraceStep, TraceStore

PATTERNS = {
    "select_history": schemas.HistorySelection, "rewrite": schemas.Rewrite, "cited_answer": None,
}


def test_traces_live_beside_conversations_keyed_by_message(tmp_path):
    convs = ConversationStore.in_store(tmp_path)
    conv = convs.create("prep/session-1.md")
    msg = convs.add_message(conv.id, "assistant", "Prone: -2 to attacks.", outcome="answered")
    traces = TraceStore(convs.db_path)
    steps = [TraceStep(name="plan", input={"question": "q"}, output={"nodes": []}, ms=12.5, tokens_in=40, tokens_out=9),
             TraceStep(name="retrieve", retrieved=["pf2e:condition:prone"], node="q1")]
    traces.save(msg.id, steps)
    again = TraceStore.in_store(tmp_path).load(msg.id)
    assert again == steps
    assert again[0].wire()["tokens"] == 49
    traces.save(msg.id, steps[:1])  # saving again replaces
    assert len(traces.load(msg.id)) == 1
    assert traces.load("no-such-message") == []
    assert len(convs.messages(conv.id)) == 1  # the conversation tables are untouched


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_every_pattern_loads_and_its_examples_validate(name):
    pattern = load_pattern(name, PATTERNS[name])
    assert pattern.examples
    msgs = pattern.messages({f: "x" for f in pattern.fields()})
    assert msgs[0].role == "system" and msgs[-1].role == "user"
    assert len(msgs) == 2 + 2 * len(pattern.examples)
