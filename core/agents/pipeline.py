"""The model pipeline: one generation per question, from retrieved passages only.

    follow-up: the last user message + the question (no model call; see below)
      -> other-systems guard -> answerability (answer / not_in_books / not_in_corpus; no model call)
      -> needs (structural split, no model call) -> retrieve the whole question and each need
         concurrently, structural route (the source whose passages are most relevant, as extractive)
      -> sources sent (the numbered passages) -> cited_answer (one streamed generation: the answer
         with inline [n], or the fixed not-found line) -> citations read back from the text

Why one generation: on a 2-core CPU every model call costs seconds of prompt evaluation before its
first token. The planner and router decided what the structure already says (one need, one source
with relevant passages); the separate check is folded into the answer (the model either answers
citing passages or says the fixed not-found line); the summarize step is the answer itself. The
answer prompt is the pattern's fixed system prompt and examples (llama.cpp reuses their KV cache)
then the question and the passages, trimmed to the part that bears on the question.

A follow-up is searched as the last user message + the question, fused with nothing else: on the 15
dev follow-ups that query has the same recall@5 (1.000) as the model's rewrite fused with it
(docs/benchmarks.md section 2), and it costs no model call before the sources are on screen. The
rewrite steps (``_standalone``: select_history -> rewrite) stay for ``gmprep eval answers
--rewrite-vs-concat``, which measures that comparison.

Declines are the answerability decision's, before any model call. A model that says the passages
do not answer makes the outcome ``partial`` (the closest passages are quoted beneath), never a decline.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence

from gmprep.core.agents.answerability import answer_note, decline_text
from gmprep.core.agents.needs import split_needs
from gmprep.core.agents.passages import focused_excerpt
from gmprep.core.agents.schemas import HistorySelection, Rewrite
from gmprep.core.agents.steps import Step, StepCancelled, StepFailed, TextStep
from gmprep.core.agents.support import Passage, Reader, SupportChecker, unmarked
from gmprep.core.answer import NOT_IN_BOOKS, Answer, AnswerContext, ChatTurn
from gmprep.core.llm.base import ChatMessage, LLMBackend, LLMError
from gmprep.core.llm.extractive import ANAPHORA, followup_query
from gmprep.core.progress import AnswerProgress, OnSources, cited_ids
from gmprep.core.sources import SourceResult
from gmprep.core.traces import TraceStep
from gmprep.kg.models import Citation, Hit

_MARKS = re.compile(r"\[\d+(?:,\s*\d+)*\]")  # [n] markers, dropped from a retracted sentence
PASSAGES = 5  # the whole question's passages, numbered first: the ones the quoting answer shows
NEED_EXTRA = 2  # a multi-need question's extra passages: each need's best one not already shown
# characters per rank: the best passage at length, the rest shorter, so a single-need prompt stays
# near 300 tokens beyond the cached prefix (prompt evaluation is ~60 tokens/s on a 2-core CPU, so ~5 s
# to the first token). (520, 360, 260, 180, 160) measured 346 new prompt tokens p50 on 8 dev questions
PASSAGE_CHARS = (440, 260, 180, 110, 100, 100, 100)
NOT_FOUND = "The passages do not answer this."
# every claim the model wrote was struck: the passages may well answer (Grabbed does say what casting while grabbed
# takes); it is the model's answer they do not state, and saying "the passages do not answer this" above them misled
# (a lead-in, ending in ":", so that the support check does not read it as a claim of its own)
ALL_STRUCK = "_The passages do not state what the model wrote; here is what they say:_"
# When the model's answer cannot stand (it found nothing, or the support check struck at least half of
# its claims), the passages the quoting answer would show are quoted below it: the same five, so a model
# answer never cites less than the no-model answer would have.
FALLBACK_QUOTES = PASSAGES
# A small model at temperature 0 tends to run on past the answer (more facts from the later passages,
# then the same sentence again until max_tokens); the prompt asks for two to four sentences
MAX_SENTENCES = 4
_SENTENCE_END = re.compile(r"[.!?](?:\s*\[\d{1,2}(?:\s*,\s*\d{1,2})*\])?(?=\s)")


class SentenceCap:
    """Says when a streamed answer should stop: ``MAX_SENTENCES`` sentences, or a sentence repeated."""

    def __init__(self, limit: int = MAX_SENTENCES):
        self.limit = limit
        self.text = ""
        self.reason = ""
        self.cut: int | None = None  # where the repeated sentence starts: the answer ends before it

    def add(self, piece: str) -> bool:
        """Add a piece; True once the answer is long enough (``reason`` says why)."""
        self.text += piece
        ends = list(_SENTENCE_END.finditer(self.text + " "))
        sentences, starts, start = [], [], 0
        for m in ends:
            sentences.append(" ".join(self.text[start:m.end()].split()).lower())
            starts.append(start)
            start = m.end()
        if len(sentences) >= 2 and sentences[-1] in sentences[:-1]:
            self.reason = "a sentence repeated"
            self.cut = starts[-1]
        elif len(sentences) >= self.limit:
            self.reason = f"{self.limit} sentences"
        return bool(self.reason)
HISTORY_CHARS = 400  # each earlier message is cut to this for the history steps

def render_passages(hits: Sequence[Hit], query: str) -> str:
    """Passages for the answer step: ``[n] Name (type; traits)``, the stat line the text leaves out (a spell's
    range and duration), then the part of its text about ``query``."""
    blocks = []
    for i, (h, chars) in enumerate(zip(hits[:PASSAGES + NEED_EXTRA], PASSAGE_CHARS, strict=False), 1):
        body = focused_excerpt(h.text, query, chars)
        kind = "; ".join([h.type, ", ".join(h.traits)]) if h.traits else h.type
        stats = f"{h.stats}\n" if h.stats else ""
        blocks.append(f"[{i}] {h.name} ({kind})\n{stats}{body}")
    return "\n".join(blocks)


def render_history(history: list[ChatTurn], numbered: bool) -> str:
    """The history as lines ``[i ]role: text`` (texts cut to HISTORY_CHARS)."""
    lines = []
    for i, turn in enumerate(history):
        text = " ".join(turn.content.split())[:HISTORY_CHARS]
        lines.append(f"{i} {turn.role}: {text}" if numbered else f"{turn.role}: {text}")
    return "\n".join(lines)


def merge_ranked(lists: Sequence[Sequence[Hit]], k: int, extra: int = NEED_EXTRA) -> list[Hit]:
    """The whole question's first ``k`` passages (``lists[0]``: exactly what the quoting answer shows, so
    both answers show the same five sources), then each need's best passage not already among them, at
    most ``extra`` of them: a need the whole question's search missed still reaches the model."""
    out: dict[str, Hit] = {h.source_id: h for h in list(lists[0])[:k]} if lists else {}
    added = 0
    for hits in lists[1:]:
        best = next((h for h in hits if h.source_id not in out), None)
        if best is not None and added < extra:
            out[best.source_id] = best
            added += 1
    return list(out.values())


async def _relay(source: asyncio.Event, target: asyncio.Event) -> None:
    """Set ``target`` once ``source`` is set."""
    await source.wait()
    target.set()


class _LoopDeltas:
    """``AnswerProgress.delta`` for code running in a worker thread: each piece is handed to the event loop, in order."""

    def __init__(self, on: AnswerProgress, loop: asyncio.AbstractEventLoop):
        self._on = on
        self._loop = loop

    def delta(self, text: str) -> None:
        self._loop.call_soon_threadsafe(self._on.delta, text)


class AgentPipeline:
    """Runs the steps for one question against one backend."""

    def __init__(self, llm: LLMBackend, ctx: AnswerContext):
        self.llm = llm
        self.ctx = ctx
        self.select_history = Step("select_history", HistorySelection)
        self.rewrite = Step("rewrite", Rewrite)
        self.answer_step = TextStep("cited_answer")
        self._loading: asyncio.Future[None] | None = None

    async def run(
        self,
        question: str,
        history: list[ChatTurn],
        *,
        on_delta: Callable[[str], None] | None = None,
        on_sources: OnSources | None = None,
        cancel: asyncio.Event | None = None,
        progress: AnswerProgress | None = None,
    ) -> Answer:
        """Answer ``question``; never raises for model failures or cancellation (see Answer.outcome)."""
        on = progress or AnswerProgress(on_delta, on_sources)
        answer = await self._run(question, history, on, cancel)
        on.sources(answer.citations)
        answer.backend = self.llm.name
        answer.model = self.llm.model_name
        return answer

    async def _run(self, question: str, history: list[ChatTurn], on: AnswerProgress,
                   cancel: asyncio.Event | None) -> Answer:
        trace: list[TraceStep] = []
        standalone = question
        # the model loads (first question of a process: seconds) while the question is searched
        self._loading = asyncio.ensure_future(asyncio.to_thread(self._load))
        try:
            if history:
                standalone = followup_query(question, history, getattr(self.ctx.searcher, "names", None))
                trace.append(TraceStep(name="rewrite", status="skipped", input={"question": question},
                                       output={"standalone": standalone,
                                               "reason": "structural: the last user messages back to one that "
                                                         "names an entry + question"}))
            declined = self._guard(standalone, trace)
            if isinstance(declined, Answer):
                return self._emit(declined, on)
            deferred = declined if isinstance(declined, SourceResult) else None
            assessed = await self._assess(standalone, trace, declined if isinstance(declined, list) else [])
            if isinstance(assessed, Answer):
                return self._emit(assessed, on)
            if deferred is not None:  # another system's derived term: declined where the books would answer
                return self._emit(self.ctx.other_game_decline(deferred, trace, standalone, self.llm.name) or Answer(
                    text=f"{NOT_IN_BOOKS} {deferred.note}.", outcome="not_in_books", steps=trace,
                    question=standalone, backend=self.llm.name), on)
            note, books = assessed
            if note:
                on.delta(note + "\n\n")  # the rename, said before the sources and the answer
            hits = await self._gather(question, standalone, history, books, trace)
            answer = await self._answer(standalone, hits, trace, on, cancel)
            if note:
                answer.text = f"{note}\n\n{answer.text}"
            return answer
        except StepCancelled as exc:
            trace.extend(exc.trace)
            text = on.text() or exc.partial
            return Answer(text=text, outcome="cancelled", citations=list(on.sent or []), steps=trace,
                          question=standalone)

    def _load(self) -> None:
        try:
            self.llm.load()
        except Exception:  # noqa: BLE001 - the answer step meets the same error and reports it (model_error)
            pass

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
            return followup_query(question, selected)
        unchanged = " ".join(out.standalone.lower().split()) == " ".join(question.lower().split())
        if unchanged and ANAPHORA.search(question):
            # the model left the references unresolved: keep the conversation's last question in the query
            standalone = followup_query(question, selected)
            trace.append(TraceStep(name="rewrite_fallback", input={"standalone": out.standalone},
                                   output={"standalone": standalone, "reason": "references left unresolved"}))
            return standalone
        return out.standalone

    def _guard(self, question: str, trace: list[TraceStep]) -> Answer | list[str] | SourceResult | None:
        """A decline for another game's terms; a Pathfinder 2e book's name (a class: summoner) to decide with the
        passages (``AnswerabilityJudge.assess``: a held rule may be asked beside it); another system's derived term
        (``SourceResult.derived``), declined only if the books' own decision answers; None when none of these."""
        t0 = time.perf_counter()
        result = self.ctx.other_systems.retrieve(question)
        trace.append(TraceStep(name="other_systems", input={"query": question},
                               output=result.model_dump(include={"verdict", "note"}), ms=(time.perf_counter() - t0) * 1000))
        if result.verdict != "not_in_books":
            return None
        if result.derived and self.ctx.books.available():
            return result
        if result.other_book and self.ctx.books.available():
            return result.other_books  # decided with the passages, like another book's entry
        if result.other_book:  # a Pathfinder 2e book gmprep does not hold: not_in_corpus, "add your book"
            verdict = self.ctx.answerability.other_book(result.other_book)
            trace.append(TraceStep(name="answerability", input={"source": result.source},
                                   output=verdict.trace_output()))
            return Answer(text=decline_text(verdict, []), outcome="not_in_corpus", steps=trace, question=question,
                          backend=self.llm.name)
        return self.ctx.other_game_decline(result, trace, question, self.llm.name) or Answer(
            text=f"{NOT_IN_BOOKS} {result.note}.", outcome="not_in_books", steps=trace, question=question,
            backend=self.llm.name)

    async def _assess(self, question: str, trace: list[TraceStep],
                      guard: Sequence[str] = ()) -> Answer | tuple[str, SourceResult | None]:
        """The answerability decision on the books' passages for the whole question (the same judge the
        extractive answerer uses): a decline Answer, or (the rename note to say first, the books' result)."""
        books = self.ctx.books
        if not books.available():
            return "", None
        t0 = time.perf_counter()
        result = await asyncio.to_thread(books.retrieve, question, PASSAGES)
        verdict = await asyncio.to_thread(self.ctx.answerability.assess, question, result.hits, guard)
        trace.append(TraceStep(name="answerability", input={"query": question},
                               output=verdict.trace_output(),
                               retrieved=[h.source_id for h in result.hits], ms=(time.perf_counter() - t0) * 1000))
        notes = self.ctx.notes
        if verdict.outcome != "answer" and notes.available():
            if (await asyncio.to_thread(notes.retrieve, question, PASSAGES)).verdict == "found":
                return "", result  # the GM's own notes cover it: answer from them
        if verdict.outcome == "not_in_books":
            return Answer(text=decline_text(verdict, []) or NOT_IN_BOOKS, outcome="not_in_books", steps=trace,
                          question=question)
        if verdict.outcome == "not_in_corpus":
            mentions = [h for h in result.hits if verdict.rule in h.text.lower()][:3]
            return Answer(text=decline_text(verdict, mentions), outcome="not_in_corpus",
                          citations=[Citation.from_hit(h) for h in mentions], steps=trace, question=question)
        return answer_note(verdict), result

    # ---- passages -------------------------------------------------------------------------
    async def _gather(self, question: str, standalone: str, history: list[ChatTurn], books: SourceResult | None,
                      trace: list[TraceStep]) -> list[Hit]:
        """The numbered passages: the whole question's (reused from the answerability search when nothing
        else is asked), fused with a follow-up's conversation phrasing, and each need's, searched
        concurrently; from the source whose passages are most relevant (books, or the GM's notes)."""
        t0 = time.perf_counter()
        # the needs of the user's own question; a follow-up's each carry the conversation's last question
        # (split after joining, "What does Shove do? What if I critically fail it?" would search "it")
        needs = [followup_query(n, history) for n in split_needs(question)]
        context = followup_query(question, history) if history else ""
        alternates = [context] if context and context != standalone else []
        trace.append(TraceStep(name="plan", status="skipped",
                               output={"needs": needs or [standalone], "reason": "structural: clauses of the question"}))
        results: list[SourceResult] = []
        for source in self.ctx.search_sources():
            if source is self.ctx.books and books is not None and not alternates:
                whole = books
            else:
                whole = await asyncio.to_thread(source.retrieve, standalone, PASSAGES, alternates)
            parts = await asyncio.gather(*(asyncio.to_thread(source.retrieve, n, PASSAGES) for n in needs))
            merged = merge_ranked([whole.hits, *(p.hits for p in parts)], PASSAGES)
            results.append(whole.model_copy(update={"hits": merged}))
        best = max(results, key=lambda r: (r.verdict == "found", r.relevance), default=None)
        hits = best.hits[:PASSAGES + NEED_EXTRA] if best else []
        trace.append(TraceStep(name="retrieve", input={"query": standalone, "needs": needs, "alternates": alternates},
                               output={"source": best.source if best else None,
                                       "relevance": {r.source: round(r.relevance, 4) for r in results},
                                       "reason": "structural route: the most relevant source"},
                               retrieved=[h.source_id for h in hits], ms=(time.perf_counter() - t0) * 1000))
        return hits

    # ---- answer ---------------------------------------------------------------------------
    async def _answer(self, question: str, hits: list[Hit], trace: list[TraceStep], on: AnswerProgress,
                      cancel: asyncio.Event | None) -> Answer:
        """One streamed generation over the numbered passages; citations are read back from ``[n]``."""
        shown = [Citation.from_hit(h) for h in hits]
        if not hits:
            return self._emit(Answer(text=NOT_IN_BOOKS, outcome="not_in_books", steps=trace, question=question), on)
        on.sources(shown)
        if self._loading is not None:
            await self._loading
        enough = asyncio.Event()  # set by the user's cancel or by the sentence cap
        relay = asyncio.ensure_future(_relay(cancel, enough)) if cancel is not None else None
        cap = SentenceCap()
        said: list[str] = []

        def on_token(piece: str) -> None:
            if enough.is_set():
                return  # pieces still queued after the stop
            said.append(piece)
            on.delta(piece)
            if cap.add(piece):
                enough.set()

        try:
            text, steps = await self.answer_step.run(
                self.llm, {"question": question, "passages": render_passages(hits, question)},
                on_token=on_token, cancel=enough)
            trace.extend(steps)
        except StepCancelled as exc:
            if not cap.reason:
                raise  # the user cancelled
            text = "".join(said)
            for step in exc.trace:
                step.status, step.output = "ok", text
            trace.extend(exc.trace)
            trace.append(TraceStep(name="stop", output={"reason": cap.reason}))
        except StepFailed as exc:
            trace.extend(exc.trace)
            from gmprep.core.llm.extractive import render_quotes

            text = f"The local model failed ({exc}); the closest passages:\n\n{render_quotes(hits, question)}"
            on.delta(text)
            return Answer(text=text, outcome="model_error", citations=shown, steps=trace, question=question)
        finally:
            if relay is not None:
                relay.cancel()
        if cap.cut is not None and text.startswith(cap.text[:cap.cut]):
            # "... unconscious [2]. If they lose the dying condition ... [2]. If they lose the dying condition ... [2]."
            # was saved with the repeat: the answer is the text before it (the stream showed it; the saved answer,
            # which replaces the stream, does not)
            text = text[:cap.cut].rstrip()
        used = cited_ids(text, shown)
        if text.strip().startswith(NOT_FOUND[:-1]):
            # the answerability judge found the books relevant; the model did not find the answer in the
            # trimmed passages: say so, and quote the passages so the GM can read them
            from gmprep.core.llm.extractive import render_quotes

            more = "\n\n" + render_quotes(hits[:FALLBACK_QUOTES], question)
            on.delta(more)
            text += more
            outcome = "partial"
            used = [h.source_id for h in hits[:FALLBACK_QUOTES]]
        else:
            reader = self._support_reader()
            if reader is None:
                text, used, quoted = self._keep_supported(text, question, hits, shown, trace, on)
            else:
                # the model's readings are seconds of blocking calls: off the event loop, and the notes the check
                # streams are handed back to it in order
                deltas = _LoopDeltas(on, asyncio.get_running_loop())
                text, used, quoted = await asyncio.to_thread(
                    self._keep_supported, text, question, hits, shown, trace, deltas, reader)
            outcome = "answered" if used and not quoted else "partial"  # an answer citing no passage is not grounded enough
        trace.append(TraceStep(name="check_citations", output={"used": used, "outcome": outcome}))
        return Answer(text=text, outcome=outcome, citations=shown, used=used, steps=trace, question=question)

    def _support_reader(self) -> Reader | None:
        """The answering model as the support check's reader (``llm.support_reader``), or None when it is off."""
        if not self.ctx.settings.llm.support_reader:
            return None
        llm = self.llm

        def read(messages: list[dict[str, str]]) -> float | None:
            try:
                return llm.yes_no([ChatMessage.model_validate(m) for m in messages])
            except LLMError:
                return None  # the check's own verdict stands

        return read

    @staticmethod
    def _keep_supported(text: str, question: str, hits: list[Hit], shown: list[Citation], trace: list[TraceStep],
                        on: AnswerProgress | _LoopDeltas, reader: Reader | None = None) -> tuple[str, list[str], bool]:
        """The support check (core/agents/support.py, the same one ``eval answers --faithfulness`` uses) on
        the finished answer: a claim its cited passages do not state (no citation, a number they do not
        give, too few of its words) is left out of the saved answer, and the reader is told which, since it
        was already streamed. When no supported claim is left, or at least half of the claims were struck, the
        quoting answer's passages (``FALLBACK_QUOTES``) are quoted below: the third value says so."""
        t0 = time.perf_counter()
        passages = [Passage(source_id=h.source_id, name=h.name, text=h.passage()) for h in hits]
        checker = SupportChecker(reader=reader)
        report = checker.check(text, passages, given=question)
        bad = [s for s in report.sentences if s.claim and not s.supported]
        # what the check read (the model's text as generated, the question, the passages in their numbered order),
        # so a saved trace can be checked again by another version of the check (bench/replay_support.py)
        trace.append(TraceStep(name="support_check", output={
            "claims": len(report.claims), "unsupported": [{"text": s.text, "reason": s.reason} for s in bad],
            "checked": text, "question": question, "passages": [h.source_id for h in hits],
            "model_readings": sum(1 for s in report.sentences if "model_reading" in (s.features or {}))},
            ms=(time.perf_counter() - t0) * 1000))
        if not bad:
            return text, cited_ids(text, shown), False
        # a claim that another shown passage states is kept, citing that passage instead; the reader, who
        # saw it streamed with the first citation, is told which
        kept, recited = text, []
        for s in list(bad):
            fixed = checker.recite(s.text, passages, given=question)
            if fixed is not None and s.text in kept:
                kept = kept.replace(s.text, fixed, 1)
                recited.append(fixed)
                bad.remove(s)
        trace[-1].output["recited"] = recited
        # each line starts with its new marker: the support check reads it as a source line, not a claim
        # a sentence the model repeated (the cap stops it at the repeat) is listed once
        fixes = ("\n\n_Cited again, to the passage that states it:_\n" + "\n".join(dict.fromkeys(
            f"- {_MARKS.findall(r)[-1]} {unmarked(r)}" for r in recited)) if recited else "")
        if not bad:
            on.delta(fixes)
            return kept + fixes, cited_ids(kept, shown), False
        for s in bad:
            kept = kept.replace(s.text, "", 1)
        kept = re.sub(r"[ \t]+\n", "\n", re.sub(r"[ \t]{2,}", " ", kept))
        kept = re.sub(r"\n\s*[-*+]\s*(?=\n|$)", "", kept).strip()  # bullets left empty
        # struck through: the support check reads a retracted sentence as no claim (support.is_claim)
        note = "\n\n_Left out, because the cited passages do not state it:_\n" + "\n".join(dict.fromkeys(
            "- ~~" + unmarked(s.text) + "~~" for s in bad))
        if len(bad) == len(report.claims):
            from gmprep.core.llm.extractive import render_quotes

            quotes = "\n\n" + render_quotes(hits[:FALLBACK_QUOTES], question)
            on.delta(note + "\n\n" + ALL_STRUCK + quotes)
            return ALL_STRUCK + note + quotes, [h.source_id for h in hits[:FALLBACK_QUOTES]], True
        if 2 * len(bad) >= len(report.claims):
            # at least half of what the model said is not in the passages: what is left is too thin to
            # answer by, so the passages follow it (a lone kept sentence is often beside the point)
            from gmprep.core.llm.extractive import render_quotes

            quotes = "\n\n" + render_quotes(hits[:FALLBACK_QUOTES], question)
            on.delta(fixes + note + quotes)
            used = list(dict.fromkeys([*cited_ids(kept, shown), *(h.source_id for h in hits[:FALLBACK_QUOTES])]))
            return kept + fixes + note + quotes, used, True
        on.delta(fixes + note)
        return kept + fixes + note, cited_ids(kept, shown), False

    @staticmethod
    def _emit(answer: Answer, on: AnswerProgress) -> Answer:
        on.sources(answer.citations)
        on.delta(answer.text)
        return answer
