"""The creators' view of a note: its encounter blocks evaluated and its statblocks checked by
``gmprep.core.creators``, cached.

Per note version the analysis is computed once (inlay hints, lenses, hovers and diagnostics of that
version all read it); per block the report is cached by its text and party, so an edit re-evaluates
only the block it touched. Statblocks are found and checked by core's ``check_note``. The LSP shapes are built by
encounters.py and statblocks.py from this analysis.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gmprep.core.creators.models import EncounterReport, StatIssue
from gmprep.server.blocks import EncounterBlock, NoteBlocks, find_blocks
from gmprep.server.documents import MAX_SCAN_CHARS, DocumentMentions

if TYPE_CHECKING:
    from gmprep.core.creators.resolver import CreatureResolver
    from gmprep.server.state import ServerState

log = logging.getLogger(__name__)

REPORT_CACHE = 2000  # evaluated blocks remembered (text + party -> report)


@dataclass
class EncounterResult:
    """One block and what core made of it: a report, or why there is none."""

    block: EncounterBlock
    report: EncounterReport | None = None
    party_from: str | None = None  # "block", or the note line the party was taken from
    error: str | None = None


@dataclass
class NoteAnalysis:
    """The creators' view of one note version."""

    version: int | None
    text: str
    doc: DocumentMentions  # the text's lines and LSP positions (no mentions)
    blocks: NoteBlocks
    encounters: list[EncounterResult] = field(default_factory=list)
    stat_issues: list[StatIssue] = field(default_factory=list)  # offsets in the document

    def encounter_at(self, line: int) -> EncounterResult | None:
        return next((e for e in self.encounters if e.block.contains_line(line)), None)


class Creators:
    """Per-server cache of note analyses and evaluated blocks, and the creature resolver (built from
    the corpus's Monster Core entries once the name index is loaded: no store needed)."""

    def __init__(self, state: ServerState):
        self.state = state
        self._resolver: CreatureResolver | None = None
        self._resolver_book: object | None = None
        self._lock = threading.Lock()
        self._resolver_lock = threading.Lock()
        self._notes: dict[str, NoteAnalysis] = {}
        self._reports: OrderedDict[tuple, EncounterResult] = OrderedDict()

    def resolver(self) -> CreatureResolver | None:
        """The creature resolver over the bundled corpus's creatures, or None while it loads."""
        book = self.state.book
        if book is None:
            return None
        with self._resolver_lock:  # its own lock: cached analyses stay readable while it builds
            if self._resolver is None or self._resolver_book is not book:
                from gmprep.core.creators.resolver import CreatureResolver

                self._resolver = CreatureResolver.from_nodes(book.nodes.values())
                self._resolver_book = book
            return self._resolver

    def analyse(self, uri: str, version: int | None, text: str) -> NoteAnalysis:
        """The analysis of this document version (cached). It needs the text only, never the rule
        mentions: the creators' features do not wait for a note's mention scan."""
        with self._lock:
            cached = self._notes.get(uri)
        if cached is not None and cached.version == version and (cached.text is text or cached.text == text):
            return cached
        doc = DocumentMentions(uri, version, text, [])  # positions only
        too_big = len(text) > MAX_SCAN_CHARS or "\x00" in text
        blocks = NoteBlocks() if too_big else find_blocks(text, doc.line_starts)
        note = NoteAnalysis(version, text, doc, blocks)
        resolver = self.resolver() if blocks.encounters else None
        spans = [] if too_big else self._statblocks(text)
        known = self._own_creatures(text, spans) if blocks.encounters else {}
        for block in blocks.encounters:
            note.encounters.append(self._evaluate(block, blocks, resolver, known))
        note.stat_issues = [] if too_big else self._check(text, spans)
        if resolver is not None or not blocks.encounters:  # not while the creature index loads
            with self._lock:
                self._notes[uri] = note
        return note

    def drop(self, uri: str) -> None:
        with self._lock:
            self._notes.pop(uri, None)

    # ---- core calls (cached) ----------------------------------------------------------------
    def _evaluate(self, block: EncounterBlock, blocks: NoteBlocks, resolver, known: dict[str, int]) -> EncounterResult:
        if resolver is None:
            return EncounterResult(block, error="the creature index is still loading")
        fallback = _party_above(blocks, block.first_line)
        key = (block.text, fallback[1] if fallback else None, tuple(sorted(known.items())))
        with self._lock:
            hit = self._reports.get(key)
            if hit is not None:
                self._reports.move_to_end(key)
        if hit is not None:  # the party line may have moved: say where it is now
            party_from = hit.party_from if hit.party_from in (None, "block") or fallback is None else f"line {fallback[0] + 1}"
            return EncounterResult(block, hit.report, party_from, hit.error)
        result = _evaluate_block(block, fallback, resolver, known)
        with self._lock:
            self._reports[key] = result
            if len(self._reports) > REPORT_CACHE:
                self._reports.popitem(last=False)
        return result

    @staticmethod
    def _statblocks(text: str) -> list:
        """The note's statblocks (core's ``find_statblocks``), found once for the check and the blocks."""
        from gmprep.core.creators.statblock import find_statblocks

        try:
            return find_statblocks(text)
        except Exception:  # a note core cannot read gets no statblock features, not a dead server
            log.exception("find_statblocks failed")
            return []

    @staticmethod
    def _own_creatures(text: str, spans: list) -> dict[str, int]:
        """The creatures the note stats itself, for its blocks to count (``statblock.note_creatures``)."""
        from gmprep.core.creators.statblock import note_creatures

        return note_creatures(text, spans)

    def _check(self, text: str, spans: list) -> list[StatIssue]:
        """Core's statblock check of the note's statblocks (``check_note``)."""
        from gmprep.core.creators.statblock import check_note

        try:
            return check_note(text, spans)
        except Exception:  # a statblock core cannot read gets no diagnostics, not a dead server
            log.exception("check_note failed")
            return []


def _party_above(blocks: NoteBlocks, line: int) -> tuple[int, tuple[int, int]] | None:
    """The nearest ``Party: 4 PCs, level 3`` line above ``line``: (its line, (size, level))."""
    from gmprep.core.creators.encounter import parse_encounter

    for at, text in reversed(blocks.party_lines):
        if at >= line:
            continue
        spec = parse_encounter(text)
        if spec.party_size is not None and spec.party_level is not None:
            return at, (spec.party_size, spec.party_level)
    return None


def _evaluate_block(block: EncounterBlock, fallback, resolver, known: dict[str, int]) -> EncounterResult:
    from gmprep.core.creators.encounter import evaluate_encounter, parse_encounter

    try:
        spec = parse_encounter(block.text)
        if spec.party_size is not None and spec.party_level is not None:
            return EncounterResult(block, evaluate_encounter(spec, resolver, known=known), "block")
        if fallback is None:
            return EncounterResult(block, error="no party stated: write the block's first line as "
                                                "`Encounter (4 PCs, level 3)` or add a `Party: 4 PCs, level 3` line above")
        at, (size, level) = fallback
        return EncounterResult(
            block, evaluate_encounter(spec, resolver, party_size=spec.party_size or size,
                                      party_level=spec.party_level if spec.party_level is not None else level,
                                      known=known),
            f"line {at + 1}",
        )
    except Exception as exc:  # bad input: one clear diagnostic, the server stays up
        log.info("encounter at line %d: %s", block.first_line + 1, exc)
        return EncounterResult(block, error=str(exc) or type(exc).__name__)
