"""The typed step pipeline that answers with a model, from retrieved passages only.

    select_history -> rewrite -> other-systems guard -> answerability (answer / not_in_books / not_in_corpus)
      -> plan (DAG of sub-questions)
      -> per node, dependencies first, independent nodes concurrently:
           route -> retrieve -> answer -> check  (not answered: next source, remembering what was tried)
      -> collate -> coverage check -> summarize (streamed) -> citation check

Every model step is a ``Step`` (pydantic schema + YAML pattern, one retry, then ``StepFailed``).
Failures degrade where a safe default exists (a failed plan is one node; a failed route tries the
sources in default order; a failed check keeps the answer's own status); a failed answer step makes
its node a model error. The outcome is computed, never asked of the model: all nodes answered ->
answered, some -> partial, none and nothing relevant -> not_in_books, all failed -> model_error.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, Field, create_model

from gmprep.core.agents.answerability import decline_text, renamed_note
from gmprep.core.agents.passages import focused_excerpt
from gmprep.core.agents.schemas import (
    Check,
    HistorySelection,
    NodeAnswer,
    Plan,
    PlanNode,
    Rewrite,
    Route,
    topological_order,
)
from gmprep.core.agents.steps import Step, StepCancelled, StepFailed, TextStep
from gmprep.core.answer import NOT_IN_BOOKS, Answer, AnswerContext, ChatTurn
from gmprep.core.llm.base import LLMBackend
from gmprep.core.sources import KnowledgeSource, SourceResult
from gmprep.core.traces import TraceStep
from gmprep.kg.models import Citation, Hit

PASSAGES = 4  # passages shown to the answer step
PASSAGE_CHARS = (900, 900, 600, 600)  # per rank: the best two at length, the rest shorter
HISTORY_CHARS = 400  # each earlier message is cut to this for the history steps
# words that point back into the conversation: a rewrite that still contains them did not stand alone
_ANAPHORA = re.compile(r"\b(?:it|its|it's|that|those|them|they|their|this|these|he|she|him|her|one|ones|instead|"
                       r"the next|the first|the same)\b", re.IGNORECASE)
_CITE = re.compile(r"\[([a-z0-9]+:[^\]\s]+)\]")

NodeStatus = Literal["answered", "partial", "not_found", "not_in_books", "model_error"]


class NodeResult(BaseModel):
    """What one plan node ended with."""

    node: PlanNode
    status: NodeStatus
    answer: str = ""
    citations: list[str] = Field(default_factory=list)
    sources: list[Citation] = Field(default_factory=list)  # the cited passages, for the final citations
    tried: list[str] = Field(default_factory=list)  # sources tried, in order
    note: str = ""


def render_passages(hits: list[Hit], query: str) -> str:
    """Passages for the answer step: ``[id] Name (type)`` then the part of the text about ``query``."""
    blocks = []
    for h, chars in zip(hits[:PASSAGES], PASSAGE_CHARS, strict=False):
        body = focused_excerpt(h.text, query, chars)
        blocks.append(f"[{h.source_id}] {h.name} ({h.type})\n{body}")
    return "\n".join(blocks)


def render_history(history: list[ChatTurn], numbered: bool) -> str:
    """The history as lines ``[i ]role: text`` (texts cut to HISTORY_CHARS)."""
    lines = []
    for i, turn in enumerate(history):
        text = " ".join(turn.content.split())[:HISTORY_CHARS]
        lines.append(f"{i} {turn.role}: {text}" if numbered else f"{turn.role}: {text}")
    return "\n".join(lines)


def _with_context(question: str, history: list[ChatTurn]) -> str:
    """The question prefixed with the last earlier user message (the concatenated-history query)."""
    users = [t.content for t in history if t.role == "user"]
    return f"{users[-1]} {question}" if users else question


def _search_phrasings(plan: Plan, question: str, standalone: str, history: list[ChatTurn]) -> list[str]:
    """What a one-node plan searches: the question in the user's words, made standalone, rather than the
    planner's paraphrase (which can drop the very word that finds the entry: "Trips ... and succeeds"),
    and, for a follow-up, also the conversation's phrasing (last user message + question), fused with it
    so that a rewrite naming the wrong thing cannot lose the entry. Empty for a split plan: each
    sub-question asks for something narrower than the whole and is searched as the planner wrote it."""
    if len(plan.nodes) != 1:
        return []
    out = [standalone]
    context_query = _with_context(question, history) if history else ""
    if context_query and context_query != standalone:
        out.append(context_query)
    return out


class AgentPipeline:
    """Runs the steps for one question against one backend."""

    def __init__(self, llm: LLMBackend, ctx: AnswerContext):
        self.llm = llm
        self.ctx = ctx
        self.select_history = Step("select_history", HistorySelection)
        self.rewrite = Step("rewrite", Rewrite)
        self.plan = Step("plan", Plan)
        self.route = Step("route", Route)
        self.answer_step = Step("answer", NodeAnswer)
        self.check = Step("check", Check)
        self.summarize = TextStep("summarize")

    async def run(
        self,
        question: str,
        history: list[ChatTurn],
        *,
        on_delta: Callable[[str], None] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> Answer:
        """Answer ``question``; never raises for model failures or cancellation (see Answer.outcome)."""
        trace: list[TraceStep] = []
        standalone = question
        streamed: list[str] = []

        def delta(piece: str) -> None:
            streamed.append(piece)
            if on_delta:
                on_delta(piece)

        try:
            standalone = await self._standalone(question, history, trace, cancel)
            declined = self._guard(standalone, trace)
            if declined is not None:
                return self._emit(declined, delta)
            assessed = await self._assess(standalone, trace)
            if isinstance(assessed, Answer):
                return self._emit(assessed, delta)
            if assessed:
                delta(assessed + "\n\n")  # the rename, said before the answer
            plan = await self._plan(standalone, trace, cancel)
            results = await self._run_plan(plan, trace, cancel, _search_phrasings(plan, question, standalone, history))
            answer = await self._compose(standalone, results, trace, delta, cancel)
            if assessed and answer.outcome in ("answered", "partial"):
                answer.text = f"{assessed}\n\n{answer.text}"
            return answer
        except StepCancelled as exc:
            trace.extend(exc.trace)
            text = "".join(streamed) or exc.partial
            return Answer(text=text, outcome="cancelled", steps=trace, question=standalone, backend=self.llm.name)

    # ---- conversation ---------------------------------------------------------------------
    async def _standalone(
        self, question: str, history: list[ChatTurn], trace: list[TraceStep], cancel: asyncio.Event | None
    ) -> str:
        if not history:
            return question
        if len(history) <= 2:
            selected = list(history)
            trace.append(TraceStep(name="select_history", status="skipped", input={"messages": len(history)},
                                   output={"relevant": list(range(len(history)))}))
        else:
            try:
                sel, steps = await self.select_history.run(
                    self.llm, {"history": render_history(history, True), "question": question}, cancel=cancel
                )
                trace.extend(steps)
                picked = sorted({i for i in sel.relevant if 0 <= i < len(history)})
                selected = [history[i] for i in picked] or history[-2:]
            except StepFailed as exc:
                trace.extend(exc.trace)
                selected = history[-2:]  # the last exchange is the usual referent
        try:
            out, steps = await self.rewrite.run(
                self.llm, {"history": render_history(selected, False), "question": question}, cancel=cancel
            )
            trace.extend(steps)
        except StepFailed as exc:
            trace.extend(exc.trace)
            return _with_context(question, selected)
        unchanged = " ".join(out.standalone.lower().split()) == " ".join(question.lower().split())
        if unchanged and _ANAPHORA.search(question):
            # the model left the references unresolved: keep the conversation's last question in the query
            standalone = _with_context(question, selected)
            trace.append(TraceStep(name="rewrite_fallback", input={"standalone": out.standalone},
                                   output={"standalone": standalone, "reason": "references left unresolved"}))
            return standalone
        return out.standalone

    def _guard(self, question: str, trace: list[TraceStep]) -> Answer | None:
        t0 = time.perf_counter()
        result = self.ctx.other_systems.retrieve(question)
        trace.append(TraceStep(name="other_systems", input={"query": question},
                               output=result.model_dump(include={"verdict", "note"}), ms=(time.perf_counter() - t0) * 1000))
        if result.verdict != "not_in_books":
            return None
        return Answer(text=f"{NOT_IN_BOOKS} {result.note}.", outcome="not_in_books", steps=trace, question=question,
                      backend=self.llm.name)

    async def _assess(self, question: str, trace: list[TraceStep]) -> Answer | str:
        """The answerability decision on the books' passages for the whole question (the same judge the
        extractive answerer uses): a decline Answer, or the rename note to say first ("" when none)."""
        books = self.ctx.books
        if not books.available():
            return ""
        t0 = time.perf_counter()
        result = await asyncio.to_thread(books.retrieve, question, PASSAGES + 1)
        verdict = await asyncio.to_thread(self.ctx.answerability.assess, question, result.hits)
        trace.append(TraceStep(name="answerability", input={"query": question},
                               output=verdict.model_dump(include={"outcome", "probabilities", "rule", "renamed"}),
                               retrieved=[h.source_id for h in result.hits], ms=(time.perf_counter() - t0) * 1000))
        notes = self.ctx.notes
        if verdict.outcome != "answer" and notes.available():
            if (await asyncio.to_thread(notes.retrieve, question, PASSAGES)).verdict == "found":
                return ""  # the GM's own notes cover it: let the plan answer from them
        if verdict.outcome == "not_in_books":
            return Answer(text=decline_text(verdict, []) or NOT_IN_BOOKS, outcome="not_in_books", steps=trace,
                          question=question, backend=self.llm.name)
        if verdict.outcome == "not_in_corpus":
            mentions = [h for h in result.hits if verdict.rule in h.text.lower()][:3]
            return Answer(text=decline_text(verdict, mentions), outcome="not_in_corpus",
                          citations=[Citation.from_hit(h) for h in mentions], steps=trace, question=question,
                          backend=self.llm.name)
        return renamed_note(verdict.renamed)

    # ---- plan -----------------------------------------------------------------------------
    async def _plan(self, question: str, trace: list[TraceStep], cancel: asyncio.Event | None) -> Plan:
        try:
            plan, steps = await self.plan.run(self.llm, {"question": question}, cancel=cancel)
            trace.extend(steps)
            return plan
        except StepFailed as exc:
            trace.extend(exc.trace)
            return Plan(nodes=[PlanNode(id="q1", question=question)])

    async def _run_plan(
        self, plan: Plan, trace: list[TraceStep], cancel: asyncio.Event | None, search_as: Sequence[str] = ()
    ) -> list[NodeResult]:
        """Run every node once its dependencies are done; independent nodes run concurrently."""
        order = topological_order(plan)
        futures: dict[str, asyncio.Future] = {n.id: asyncio.get_running_loop().create_future() for n in order}
        node_traces: dict[str, list[TraceStep]] = {n.id: [] for n in order}

        async def run_node(node: PlanNode) -> NodeResult:
            deps = [await futures[d] for d in node.depends_on]
            try:
                result = await self._node(node, deps, node_traces[node.id], cancel, search_as)
            except BaseException as exc:
                futures[node.id].set_exception(exc)
                futures[node.id].exception()  # retrieved here; dependents re-raise it
                raise
            futures[node.id].set_result(result)
            return result

        tasks = [asyncio.ensure_future(run_node(n)) for n in order]
        try:
            results = await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for n in order:
                trace.extend(node_traces[n.id])
            raise
        for n in order:
            trace.extend(node_traces[n.id])
        return list(results)

    async def _node(
        self, node: PlanNode, deps: list[NodeResult], trace: list[TraceStep], cancel: asyncio.Event | None,
        search_as: Sequence[str] = (),
    ) -> NodeResult:
        """Route, retrieve, answer and check one plan node. ``search_as``: the phrasings to search
        instead of the node's question (see ``_search_phrasings``)."""
        context = " ".join(d.answer for d in deps if d.status in ("answered", "partial"))
        if search_as:
            query, alternates = search_as[0], list(search_as[1:])
        else:
            query, alternates = f"{node.question} {context}".strip()[:400], []
        sources = await self._route(node, trace, cancel)
        tried: list[str] = []
        best: NodeResult | None = None
        attempts = errors = 0
        for source in sources:
            tried.append(source.name)
            result = await self._retrieve(source, query, node, trace, alternates)
            if result.verdict != "found":
                continue
            question = node.question if not context else f"{node.question} (Known so far: {context[:300]})"
            attempts += 1
            try:
                ans, steps = await self.answer_step.run(
                    self.llm, {"passages": render_passages(result.hits, query), "question": question}, cancel=cancel, node=node.id
                )
                trace.extend(steps)
            except StepFailed as exc:
                trace.extend(exc.trace)
                errors += 1
                continue
            shown = {h.source_id for h in result.hits[:PASSAGES]}
            cited = [c for c in dict.fromkeys(ans.citations) if c in shown]
            status = ans.status
            if status != "not_found" and not cited:
                status = "partial"  # an answer that cites none of its passages is not grounded enough
                cited = [result.hits[0].source_id]
            if status == "not_found":
                continue
            by_id = {h.source_id: h for h in result.hits}
            found = dict(answer=ans.answer, citations=cited, sources=[Citation.from_hit(by_id[c]) for c in cited])
            confirmed = await self._check(node, ans.answer, trace, cancel)
            # the checker is the arbiter (small models often label a complete answer "partial");
            # when the checker itself failed, the answer's own status stands
            if confirmed is True or (confirmed is None and status == "answered"):
                return NodeResult(node=node, status="answered", tried=tried, **found)
            best = best or NodeResult(node=node, status="partial", **found)
        if best is not None:
            best.tried = tried
            return best
        if errors and errors == attempts:
            return NodeResult(node=node, status="model_error", tried=tried, note="the answer step failed")
        return NodeResult(node=node, status="not_found", tried=tried, note="no relevant passage")

    async def _route(self, node: PlanNode, trace: list[TraceStep], cancel: asyncio.Event | None) -> list[KnowledgeSource]:
        """The sources for a node, the routed one first; the others follow as fallbacks."""
        sources = self.ctx.search_sources()
        if len(sources) <= 1:
            trace.append(TraceStep(name="route", status="skipped", node=node.id,
                                   output={"source": sources[0].name if sources else None, "reason": "one source"}))
            return sources
        names = tuple(s.name for s in sources)
        narrowed = create_model("Route", __base__=Route, source=(Literal[names], ...))  # type: ignore[arg-type]  # built at run time
        listing = "\n".join(f"{s.name}: {s.description}" for s in sources)
        try:
            out, steps = await self.route.run(
                self.llm, {"sources": listing, "question": node.question}, schema=narrowed, cancel=cancel, node=node.id
            )
            trace.extend(steps)
            first = next(s for s in sources if s.name == out.source)
        except StepFailed as exc:
            trace.extend(exc.trace)
            first = sources[0]
        return [first, *[s for s in sources if s is not first]]

    async def _retrieve(
        self, source: KnowledgeSource, query: str, node: PlanNode, trace: list[TraceStep], alternates: Sequence[str] = ()
    ) -> SourceResult:
        t0 = time.perf_counter()
        result = await asyncio.to_thread(source.retrieve, query, PASSAGES + 2, alternates)
        trace.append(TraceStep(name="retrieve", node=node.id,
                               input={"source": source.name, "query": query, "alternates": list(alternates)},
                               output={"verdict": result.verdict, "relevance": round(result.relevance, 4)},
                               retrieved=[h.source_id for h in result.hits], ms=(time.perf_counter() - t0) * 1000))
        return result

    async def _check(self, node: PlanNode, answer: str, trace: list[TraceStep], cancel: asyncio.Event | None) -> bool | None:
        """The checker's verdict, or None when the checker itself failed (the answer's status stands)."""
        try:
            out, steps = await self.check.run(self.llm, {"question": node.question, "answer": answer}, cancel=cancel,
                                              node=node.id)
            trace.extend(steps)
            return out.answered
        except StepFailed as exc:
            trace.extend(exc.trace)
            return None

    # ---- compose --------------------------------------------------------------------------
    async def _compose(
        self, question: str, results: list[NodeResult], trace: list[TraceStep],
        delta: Callable[[str], None], cancel: asyncio.Event | None,
    ) -> Answer:
        trace.append(TraceStep(name="collate", output=[r.model_dump(include={"status", "answer", "citations", "tried"})
                                                       for r in results]))
        statuses = [r.status for r in results]
        if all(s == "model_error" for s in statuses):
            outcome = "model_error"
        elif all(s == "answered" for s in statuses):
            outcome = "answered"
        elif any(s in ("answered", "partial") for s in statuses):
            outcome = "partial"
        else:
            outcome = "not_in_books"
        trace.append(TraceStep(name="check_coverage", output={"outcome": outcome, "nodes": statuses}))
        if outcome in ("not_in_books", "model_error"):
            text = NOT_IN_BOOKS if outcome == "not_in_books" else (
                "The local model failed to produce a valid answer; try again or use the extractive backend.")
            return self._emit(Answer(text=text, outcome=outcome, steps=trace, question=question,
                                     backend=self.llm.name), delta)
        findings = "\n".join(
            f"- {r.node.question} " + (f"{r.answer} " + " ".join(f"[{c}]" for c in r.citations)
                                       if r.status in ("answered", "partial") else "The books do not say.")
            for r in results
        )
        try:
            text, steps = await self.summarize.run(self.llm, {"question": question, "findings": findings},
                                                   on_token=delta, cancel=cancel)
            trace.extend(steps)
        except StepFailed as exc:
            trace.extend(exc.trace)
            text = findings
            delta(text)
        allowed = [c for r in results for c in r.citations]
        text, cited = self._verify_citations(text, allowed, trace)
        by_id = {c.source_id: c for r in results for c in r.sources}
        return Answer(text=text, outcome=outcome, citations=[by_id[c] for c in cited if c in by_id], steps=trace, question=question, backend=self.llm.name)

    @staticmethod
    def _verify_citations(text: str, allowed: list[str], trace: list[TraceStep]) -> tuple[str, list[str]]:
        """Drop bracketed ids the findings did not cite; cite every finding's ids (text order first)."""
        allowed_set = set(allowed)
        used = [m.group(1) for m in _CITE.finditer(text)]
        unknown = sorted({u for u in used if u not in allowed_set})
        for u in unknown:
            text = text.replace(f"[{u}]", "")
        cited = list(dict.fromkeys([u for u in used if u in allowed_set] + allowed))
        trace.append(TraceStep(name="check_citations", output={"cited": cited, "removed": unknown}))
        return text, cited

    @staticmethod
    def _emit(answer: Answer, delta: Callable[[str], None]) -> Answer:
        delta(answer.text)
        return answer
