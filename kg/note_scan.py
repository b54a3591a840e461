"""The rule mentions of a markdown note: the one decision behind hover, diagnostics, completion
and ``gmprep mentions``.

A note is cut into chunks (``kg.prose.split_chunks``); each chunk is parsed as markdown into masked
prose (``kg.prose.parse_chunk``) and its name matches found (``NameIndex.matches``), and both are
remembered by the chunk's text, so an edit re-reads only the chunks it touched. Each match is then
decided in context: the learned ``MentionScorer`` (when its model is shipped) gives a confidence
from the span, its markdown context (``SpanContext``: heading, list, table, emphasis, link text, the
enclosing headings) and its neighbours; at or above the strictness threshold it is hovered. Below it,
a match the rules of thumb of ``NameIndex`` accept is still hovered when it carries a value, is a
pre-Remaster name, or the scorer is above its "loose" threshold (not with strictness "strict").
Without a model the rules of thumb alone decide (confidence 1 or 0). Last, the user's controls:
the workspace's ``hover.ignore_words`` and the ``<!-- gmprep-ignore -->`` (to the end of the file or
``<!-- gmprep-ignore-end -->``) and ``<!-- gmprep-ignore-next-line -->`` comments.

Every step is linear in the note's length; ``NoteScanner`` is safe to share between threads.
"""

from __future__ import annotations

import bisect
import logging
import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from gmprep.common.errors import GmprepError
from gmprep.common.settings import HoverSettings
from gmprep.kg.names import OTHER_ID_PREFIX, Match, Mention, NameIndex, _at_sentence_start, name_key
from gmprep.kg.prose import (
    ChunkProse,
    Region,
    front_matter_end,
    parse_chunk,
    reference_labels,
    split_chunks,
)

log = logging.getLogger(__name__)

MAX_SCAN_CHARS = 2_000_000  # larger documents are not scanned (a pasted log gets no hovers, quickly)
CHUNK_CACHE = 20_000  # chunks remembered across edits and files
WINDOW = 4096  # characters of masked prose matched at once
SHOWN_MEMO = 50_000  # shown mentions remembered across scans (cleared when full)


@dataclass(slots=True)
class _Chunk:
    prose: ChunkProse
    matches: list[Match]
    regions: list[Region]  # of each match (None-safe: a match outside any region gets a blank one)
    decided: dict[tuple, list[Scored]]  # enclosing headings -> every scored candidate (chunk offsets)
    counts: tuple[int, int] = (0, 0)  # words and number tokens of its prose (its section's share of numbers)


@dataclass(slots=True)
class Scored:
    """A candidate the scorer read: its mention (the scorer's own confidence), whether the rules of
    thumb accept it, and the headings it sits under (its section, for the note's second look)."""

    mention: Mention  # offsets in its chunk: the chunk's decisions are cached and shared
    heuristic: bool
    section: tuple[str, ...]
    offset: int = 0  # where its chunk starts in the document
    etype: str = ""  # the entry's type (the note's other candidates of that type are evidence)
    # its whole-note features (``mention_scorer.NOTE_FEATURES``: the share of number tokens among its
    # section's words and the note's), read by ``note_logits``
    note_features: tuple[float, ...] = ()
    asked: bool = False  # the words before it ask for its type (``Match.asked``: "cast Sleep")

    @property
    def start(self) -> int:
        return self.mention.start + self.offset

    @property
    def end(self) -> int:
        return self.mention.end + self.offset

    def shown(self, confidence: float, memo: dict | None = None) -> Mention:
        """The mention at its document offsets with ``confidence`` (one copy; none when nothing changes).
        ``memo`` keeps the copies across scans: after an edit most mentions keep their offset and
        confidence, and a copy costs more than the rest of the decision."""
        m = self.mention
        if self.offset == 0 and confidence == m.confidence:
            return m
        key = (id(m), self.offset, confidence)
        if memo is not None:
            hit = memo.get(key)
            if hit is not None and hit[0] is m:  # the original is held by the entry: its id is not reused
                return hit[1]
        out = m.model_copy(update={"start": m.start + self.offset, "end": m.end + self.offset,
                                   "confidence": confidence})
        if memo is not None:
            if len(memo) >= SHOWN_MEMO:
                memo.clear()
            memo[key] = (m, out)
        return out


@dataclass(slots=True)
class NoteScan:
    """The mentions of one note text (document offsets, sorted), and why it was not scanned."""

    mentions: list[Mention]
    skipped: str | None = None
    # with a context budget: the (window, entry) pairs left for the context model to read; once they are
    # read (``ContextStack.read``), a rescan gives the corrected mentions
    context_pending: list[tuple[str, str]] = field(default_factory=list)


def load_scorer():
    """The shipped mention scorer, or None (the rules of thumb decide) when it is not there."""
    try:
        from gmprep.kg.mention_scorer import MentionScorer
    except ImportError:
        return None
    try:
        return MentionScorer.load()
    except GmprepError as exc:
        log.info("mention scorer unavailable, using the rules of thumb: %s", exc)
        return None


class NoteScanner:
    """Scans notes with one name index, one scorer and one set of hover settings, remembering
    chunks across edits (and across notes: a chunk's text decides its parse)."""

    def __init__(self, names: NameIndex, settings: HoverSettings | None = None, scorer=None):
        self.settings = settings or HoverSettings()
        # the workspace's own shorthand joins the names (targets that name no entry are left out)
        self.names, self.unknown_aliases = names.with_aliases(self.settings.aliases)
        self.scorer = scorer
        # the context model corrects the scorer near its thresholds (``hover.context_model``)
        self.context = None
        if scorer is not None and self.settings.context_model:
            from gmprep.kg.mention_context import shared_context

            self.context = shared_context()
        self.threshold = scorer.threshold_for(self.settings.strictness) if scorer is not None else 0.5
        # below the threshold, the rules of thumb's matches show from "rescue" on (models calibrated
        # before it had that threshold: "loose")
        self.floor = (scorer.thresholds.get("rescue", scorer.threshold_for("loose")) if scorer is not None else 0.0)
        self._ignore = {name_key(w) for w in self.settings.ignore_words if name_key(w)}
        self._chunks: OrderedDict[tuple, _Chunk] = OrderedDict()
        self._memo: dict = {}  # (mention id, offset, confidence) -> (mention, its copy as shown)
        self._lock = threading.Lock()

    # ---- the one function -----------------------------------------------------------------
    def scan(self, text: str, context_budget: int | None = None) -> NoteScan:
        """The mentions a hover shows in ``text``, each with its confidence. With ``context_budget``, when
        more candidates than that await the context model's first reading, none is read now: they keep the
        scorer's confidence and are listed in ``context_pending`` (the server reads them off the hover's
        path, then rescans)."""
        if len(text) > MAX_SCAN_CHARS:
            return NoteScan([], skipped=f"document too large ({len(text)} characters)")
        if "\x00" in text:
            return NoteScan([], skipped="binary document")
        scored, ignore_from, ignore_lines = self._scored(text)
        pending: list[tuple[str, str]] = []
        shown = self._shown(scored, text, context_budget, pending)
        return NoteScan(self._controls(text, shown, ignore_from, ignore_lines), context_pending=pending)

    def candidates(self, text: str) -> list[Scored]:
        """Every candidate of ``text`` the scorer read, with its own confidence (before the note's
        second look and the thresholds): what calibration fits the note stage on."""
        if len(text) > MAX_SCAN_CHARS or "\x00" in text:
            return []
        return self._scored(text)[0]

    def _scored(self, text: str) -> tuple[list[Scored], list[tuple[int, int]], list[int]]:
        refs = reference_labels(text)
        fm_end = front_matter_end(text)
        headings: list[tuple[int, str]] = []  # the enclosing heading stack: (level, text)
        out: list[Scored] = []
        ignore_from: list[tuple[int, int]] = []  # document ranges silenced by comments
        ignore_lines: list[int] = []  # document offsets of lines silenced by ignore-next-line
        open_ignore: int | None = None
        parts: list[tuple[int, list[Scored]]] = []
        counts: dict[tuple[str, ...], list[int]] = {}  # section -> words, number tokens
        for a, b in split_chunks(text):
            chunk = self._chunk(text[a:b], refs, a == 0 and fm_end > 0)
            prose = chunk.prose
            # headings inside this chunk change the context of what follows them
            marks = sorted(prose.headings)
            key_headings = tuple(h for _, h in headings)
            decided = chunk.decided.get(key_headings)
            if decided is None:
                decided = self._decide(chunk, headings, marks, text[a:b])
                with self._lock:
                    chunk.decided[key_headings] = decided
            for _off, level, title in marks:
                while headings and headings[-1][0] >= level:
                    headings.pop()
                headings.append((level, title))
            if chunk.counts[0]:  # a chunk begins at a heading: its words belong to the section it opens
                acc = counts.setdefault(tuple(h for _, h in headings), [0, 0])
                acc[0] += chunk.counts[0]
                acc[1] += chunk.counts[1]
            for off, kind in sorted(prose.directives):
                if kind == "ignore" and open_ignore is None:
                    open_ignore = a + off
                elif kind == "ignore-end" and open_ignore is not None:
                    ignore_from.append((open_ignore, a + off))
                    open_ignore = None
                elif kind == "ignore-next-line":
                    nl = text.find("\n", a + off)
                    if nl >= 0:
                        ignore_lines.append(nl + 1)
            if decided:
                parts.append((a, decided))
        total = [sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values())]
        share = {sec: c[1] / c[0] for sec, c in counts.items()}
        note_share = total[1] / total[0] if total[0] else 0.0
        for a, decided in parts:
            out.extend(Scored(sc.mention, sc.heuristic, sc.section, a, sc.etype,
                              (share.get(sc.section, note_share), note_share), sc.asked) for sc in decided)
        if open_ignore is not None:
            ignore_from.append((open_ignore, len(text)))
        return out, ignore_from, ignore_lines

    def _shown(self, scored: list[Scored], text: str, budget: int | None = None,
               pending: list[tuple[str, str]] | None = None) -> list[Mention]:
        """The candidates a hover shows. With a scorer: at or above the strictness threshold, or
        rescued below it (``_rescued``); when the model has a note stage, each confidence is first
        read against its section's (``NoteStage``), then, near a threshold, corrected by the context
        model's reading of the candidate in its sentence (``kg.mention_context``). Linear in the
        number of candidates."""
        if self.scorer is None:
            return [sc.shown(sc.mention.confidence) for sc in scored if sc.heuristic]
        stage = getattr(self.scorer, "note_stage", None)
        weights = getattr(self.scorer, "note_weights", None)
        confs = (staged(stage, scored, weights) if stage is not None or weights
                 else [sc.mention.confidence for sc in scored])
        if self.context is not None and scored:
            try:
                confs = self._in_context(scored, confs, text, budget, pending)
            except Exception:  # the model failing on a note must not cost it its hovers: the scorer alone decides
                log.exception("the context model could not read this note")
        out: list[Mention] = []
        for sc, conf in zip(scored, confs, strict=True):
            m = sc.mention
            if conf >= self.threshold or self._rescued(sc.heuristic, m, conf, sc.asked):
                out.append(sc.shown(conf, self._memo))
        return out

    def _in_context(self, scored: list[Scored], confs: list[float], text: str, budget: int | None = None,
                    pending: list[tuple[str, str]] | None = None) -> list[float]:
        """``confs`` with those near the threshold or the rescue floor corrected by the context model
        (within ``budget`` first readings, else only those already read; the rest go to ``pending``)."""
        from gmprep.kg.mention_context import pair
        from gmprep.kg.mention_scorer import logit

        assert self.context is not None
        zs = [logit(c) for c in confs]
        marks = [logit(t) for t in (self.threshold, self.floor) if 0.0 < t < 1.0]
        new = self.context.adjust(
            zs, lambda i: pair(text, scored[i].start, scored[i].end, scored[i].etype, scored[i].mention.name), marks,
            budget=budget, pending=pending)
        return [c if z is None else shown_confidence(z) for c, z in zip(confs, new, strict=True)]

    # ---- steps --------------------------------------------------------------------------------
    def _chunk(self, chunk_text: str, refs: tuple[str, ...], front: bool) -> _Chunk:
        key = (chunk_text, refs if "[" in chunk_text else (), front)
        with self._lock:
            found = self._chunks.get(key)
            if found is not None:
                self._chunks.move_to_end(key)
                return found
        prose = parse_chunk(chunk_text, refs, front_matter=front)
        matches = self._matches(prose.text) if prose.regions else []
        starts = [r.start for r in prose.regions]
        regions = []
        for m in matches:
            i = bisect.bisect_right(starts, m.start) - 1
            regions.append(prose.regions[i] if i >= 0 else Region(0, len(chunk_text)))
        tokens = _TOKEN.findall(prose.text)
        found = _Chunk(prose, matches, regions, {}, (len(tokens), sum(t[0].isdigit() for t in tokens)))
        with self._lock:
            self._chunks[key] = found
            if len(self._chunks) > CHUNK_CACHE:
                self._chunks.popitem(last=False)
        return found

    def _matches(self, text: str) -> list[Match]:
        """``NameIndex.matches`` over windows of ~``WINDOW`` characters cut after a sentence or a
        line (no name runs across either), so a 160k-character line costs 10 times a 16k one
        instead of more (one long token list grows past the CPU caches)."""
        if len(text) <= 2 * WINDOW:
            return self.names.matches(text, note_forms=True, skip=False, spell_cues=self.settings.spell_cues)
        out: list[Match] = []
        a = 0
        while a < len(text):
            b = min(len(text), a + WINDOW)
            if b < len(text):
                cut = max(text.rfind(". ", a, b), text.rfind("\n", a, b))
                b = cut + 1 if cut > a else b
                if cut <= a:  # no sentence end in the window: a longer one, up to the next
                    nxt = min((p for p in (text.find(". ", b), text.find("\n", b)) if p >= 0), default=len(text) - 1)
                    b = nxt + 1
            for m in self.names.matches(text[a:b], note_forms=True, skip=False, spell_cues=self.settings.spell_cues):
                m.start += a
                m.end += a
                m.name_end += a
                out.append(m)
            a = b
        return out

    def _decide(self, chunk: _Chunk, headings: list[tuple[int, str]], marks, source: str) -> list[Scored]:
        prose = chunk.prose
        out: list[Scored] = []
        stack = list(headings)
        k = 0
        for match, region in zip(chunk.matches, chunk.regions, strict=True):
            while k < len(marks) and marks[k][0] <= match.start:
                _, level, title = marks[k]
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, title))
                k += 1
            if match.veto:
                continue
            section = tuple(t for _, t in stack)
            if self.scorer is None:
                conf = 1.0 if match.heuristic else 0.0
            else:
                conf = self._score(prose, match, region, section)
            out.append(Scored(match.mention(source, round(conf, 4)), match.heuristic, section, 0, match.chosen.type,
                              asked=match.asked))
        return out

    def _rescued(self, heuristic: bool, match: Mention, conf: float, asked: bool = False) -> bool:
        """Below the threshold, a match the rules of thumb accept is still shown when it carries a
        value ("reach 10 ft", "slowed 1"), is a pre-Remaster name (kg/legacy.py lists rule names
        only; its hint and quick fix stay), or the scorer is at least loosely for it (on the tuning
        notes this adds 18 rules and 7 noise hovers); with ``hover.spell_cues``, also a spell the words
        before it ask for ("cast Sleep"); "strict" shows only what the scorer is sure of."""
        if match.form == "workspace":
            return True  # the workspace's own alias (hover.aliases) shows at any strictness
        if not heuristic or self.settings.strictness == "strict":
            return False
        return match.value is not None or match.form == "legacy" or (asked and self.settings.spell_cues) \
            or conf >= self.floor

    def _score(self, prose: ChunkProse, match: Match, region: Region, headings: tuple[str, ...]) -> float:
        from gmprep.kg.mention_scorer import Candidate, SpanContext

        text = prose.text
        c = match.chosen
        end = match.name_end if match.name_end > match.start else match.end  # the value stays "after"
        span = text[match.start:end]
        ctx = SpanContext(
            in_heading=region.in_heading, in_list_item=region.in_list_item, in_table_cell=region.in_table_cell,
            bold=_inside(prose.bold, match.start, match.end), italic=_inside(prose.italic, match.start, match.end),
            in_link_text=_inside(prose.links, match.start, match.end), in_blockquote=region.in_blockquote,
            headings=headings, sentence_start=_at_sentence_start(text, match.start),
            segment_start=region.start, segment_end=region.end,
        )
        cand = Candidate(
            node_id=c.node_id, type=c.type, name=c.name, matched=span, exact_case=span == c.name,
            inflected=c.form == "inflected", legacy=c.form == "legacy", plural=c.form in ("plural", "adjective", "plural-note"),
            alternatives=len({o.node_id for o in match.candidates}),
        )
        try:
            return float(self.scorer.score(text, match.start, end, cand, ctx))
        except Exception:  # a scorer bug must not take hovers down: fall back to the rules of thumb
            log.exception("mention scorer failed on %r", span)
            return 1.0 if match.heuristic else 0.0

    def _controls(self, text: str, mentions: list[Mention], ranges, lines) -> list[Mention]:
        if not self.settings.other_books and self.names.has_others:  # turned off since the index was loaded
            mentions = [m for m in mentions if not m.node_id.startswith(OTHER_ID_PREFIX)]
        if not (self._ignore or ranges or lines):
            return mentions
        lines = sorted(lines)
        out = []
        for m in mentions:
            if self._ignore and (name_key(m.text) in self._ignore or name_key(m.name) in self._ignore):
                continue
            if any(a <= m.start < b for a, b in ranges):
                continue
            i = bisect.bisect_right(lines, m.start) - 1
            if i >= 0:
                line_end = text.find("\n", lines[i])
                if line_end < 0 or m.start <= line_end:
                    continue
            out.append(m)
        return out


_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\u2019\-]*|\d+")  # the scorer's word tokens (``mention_scorer.words``)
SECTION_PRIOR = 1.0  # pseudo-candidates at the note's mean added to every section (a short one borrows the note's)


def note_logits(scored: list[Scored], note_weights: dict[str, float] | None = None) -> list[float]:
    """Each candidate's logit: the scorer's own, plus its weighted whole-note features
    (``mention_scorer.NOTE_FEATURES``, weighed by a layer learned from notes; none: the scorer's own)."""
    from gmprep.kg.mention_scorer import NOTE_FEATURES, logit

    ws = [(note_weights or {}).get(f, 0.0) for f in NOTE_FEATURES]
    if not any(ws):
        return [logit(sc.mention.confidence) for sc in scored]
    return [logit(sc.mention.confidence) + sum(w * x for w, x in zip(ws, sc.note_features, strict=False))
            for sc in scored]


def section_means(scored: list[Scored], note_weights: dict[str, float] | None = None) -> list[float]:
    """For each candidate, the mean logit of the candidates under the same headings (itself included),
    shrunk toward the whole note's mean by ``SECTION_PRIOR`` pseudo-candidates: how rule-like the
    part of the note it sits in reads. Linear in the number of candidates."""
    return section_mean_logits([sc.section for sc in scored], note_logits(scored, note_weights))


def staged(stage, scored: list[Scored], note_weights: dict[str, float] | None = None) -> list[float]:
    """Each candidate's confidence after the whole-note features (``note_logits``) and the note stage
    (``NoteStage``, when the model has one): read against its section's mean and, when the stage has
    learned them, the note's evidence about its entry (``kg.note_evidence``). Linear in the number of
    candidates; rounded as a hover shows it."""
    from gmprep.kg.note_evidence import note_evidence

    zs = note_logits(scored, note_weights)
    if stage is None:
        return [shown_confidence(z) for z in zs]
    means = section_mean_logits([sc.section for sc in scored], zs)
    ev = (note_evidence(stage.evidence, [sc.mention.node_id for sc in scored], [sc.etype for sc in scored], zs)
          if stage.evidence else [()] * len(scored))
    return [round(stage.adjust_logit(z, m, e), 4) for z, m, e in zip(zs, means, ev, strict=True)]


def shown_confidence(z: float) -> float:
    """A logit as the confidence a hover shows (rounded to 4 places)."""
    return round(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))), 4)


def section_mean_logits(sections: list[tuple[str, ...]], zs: list[float]) -> list[float]:
    """``section_means`` over one note's candidates given as their sections and logits."""
    if not zs:
        return []
    note_mean = sum(zs) / len(zs)
    sums: dict[tuple[str, ...], list[float]] = {}
    for section, z in zip(sections, zs, strict=True):
        acc = sums.setdefault(section, [0.0, 0.0])
        acc[0] += z
        acc[1] += 1.0
    return [(sums[sec][0] + SECTION_PRIOR * note_mean) / (sums[sec][1] + SECTION_PRIOR) for sec in sections]


def _inside(spans: list[tuple[int, int]], a: int, b: int) -> bool:
    return any(s <= a and b <= e for s, e in spans)


# ---- positions, for the CLI (the server has its own per-document arithmetic) ------------------
def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (LSP columns)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def lsp_position(text: str, line_starts: list[int], offset: int) -> tuple[int, int]:
    """0-based (line, UTF-16 character) of a character offset, as LSP counts them."""
    line = bisect.bisect_right(line_starts, offset) - 1
    return line, utf16_len(text[line_starts[line]:offset])
