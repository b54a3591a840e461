"""Typed outputs of the agent steps. The JSON schema of each model constrains the model's decoding;
string lengths are bounded so a weak model cannot ramble until it hits ``max_tokens``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

MAX_PLAN_NODES = 4


class HistorySelection(BaseModel):
    """Which earlier messages (0-based indices into the history) the new question depends on."""

    relevant: list[int] = Field(max_length=8)


class Rewrite(BaseModel):
    """The latest question rewritten so that it stands alone without the conversation."""

    standalone: str = Field(min_length=3, max_length=300)


class PlanNode(BaseModel):
    """One sub-question of a plan; ``depends_on`` names nodes whose answers it needs."""

    id: str = Field(pattern=r"^q[1-9]$")
    question: str = Field(min_length=3, max_length=240)
    depends_on: list[str] = Field(default_factory=list, max_length=MAX_PLAN_NODES)


class Plan(BaseModel):
    """A DAG of sub-questions; a simple question is a single node."""

    nodes: list[PlanNode] = Field(min_length=1, max_length=MAX_PLAN_NODES)

    @model_validator(mode="after")
    def _acyclic(self) -> Plan:
        ids = [n.id for n in self.nodes]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate node ids in {ids}")
        known = set(ids)
        for n in self.nodes:
            unknown = set(n.depends_on) - known
            if unknown:
                raise ValueError(f"node {n.id} depends on unknown node(s) {sorted(unknown)}")
            if n.id in n.depends_on:
                raise ValueError(f"node {n.id} depends on itself")
        topological_order(self)  # raises on a cycle
        return self


def topological_order(plan: Plan) -> list[PlanNode]:
    """The nodes with every dependency before its dependents (ValueError on a cycle)."""
    remaining = {n.id: set(n.depends_on) for n in plan.nodes}
    by_id = {n.id: n for n in plan.nodes}
    order: list[PlanNode] = []
    while remaining:
        ready = sorted(i for i, deps in remaining.items() if not deps)
        if not ready:
            raise ValueError(f"the plan has a cycle among {sorted(remaining)}")
        for i in ready:
            order.append(by_id[i])
            del remaining[i]
        for deps in remaining.values():
            deps.difference_update(ready)
    return order


class Route(BaseModel):
    """The knowledge source to try first for a sub-question (validated against the available names)."""

    source: str = Field(max_length=40)


class NodeAnswer(BaseModel):
    """An answer to one sub-question, from the given passages only, citing their ids."""

    status: Literal["answered", "partial", "not_found"]
    answer: str = Field(max_length=900)
    citations: list[str] = Field(default_factory=list, max_length=5)

    @field_validator("citations")
    @classmethod
    def _strip(cls, ids: list[str]) -> list[str]:
        return [i.strip().strip("[]") for i in ids if i.strip()]


class Check(BaseModel):
    """Whether an answer really answers its question; ``missing`` says what is lacking."""

    answered: bool
    missing: str = Field(default="", max_length=200)
