"""Code actions of the creators: "Build encounter" (from a request line such as ``moderate encounter
for 4 level-3 PCs, undead, in a swamp``, or from the party of the encounter block whose first line the
cursor is on)
inserts an encounter block per option; "Insert creature statblock" (from ``level 5 brute: bog
troll``) inserts a cited statblock. Reading the request and building are core's
(``gmprep.core.creators``); this module places the text."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

from lsprotocol import types as lsp

from gmprep.core.creators.chat import creature_line, option_summary
from gmprep.core.creators.encounter import render_encounter_block
from gmprep.core.creators.intent import EncounterRequest, parse_creature_request, parse_encounter_request
from gmprep.core.creators.models import CreatureRequest
from gmprep.server.creators import Creators, NoteAnalysis
from gmprep.server.documents import DocumentMentions

log = logging.getLogger(__name__)

KIND = lsp.CodeActionKind.RefactorRewrite
OPTIONS = 3  # encounter options offered per request
_CACHE = 64


class Builders:
    """The build actions with a small cache: the editor asks for code actions on every cursor move,
    and a request line should not be rebuilt each time."""

    def __init__(self, creators: Creators):
        self.creators = creators
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple, object] = OrderedDict()

    def _cached(self, key: tuple, fn):
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        value = fn()
        with self._lock:
            self._cache[key] = value
            if len(self._cache) > _CACHE:
                self._cache.popitem(last=False)
        return value

    def actions(self, note: NoteAnalysis, rng: lsp.Range) -> list[lsp.CodeAction]:
        """Build/insert actions for the line under the cursor (or the block it is in)."""
        doc = note.doc
        resolver = self.creators.resolver()
        if resolver is None:
            return []
        line = rng.start.line
        text = doc.line_text(line)
        out: list[lsp.CodeAction] = []
        block = note.encounter_at(line)
        if block is None:
            enc = parse_encounter_request(text)
            if enc is not None:
                out += self._encounter_actions(doc, enc, line, resolver)
            else:
                req = parse_creature_request(text)
                if req is not None:
                    out += self._statblock_actions(doc, req, line, resolver)
        elif block.report is not None and line == block.block.first_line:
            # on the block's first line only: building takes a moment, and the editor asks for code
            # actions on every cursor move through the block
            r = block.report
            enc = EncounterRequest(threat=r.threat, party_size=r.party_size, party_level=r.party_level)
            out += self._encounter_actions(doc, enc, block.block.last_line, resolver, for_block=True)
        elif block.report is not None:
            # on a creature counted at the level written beside it (no Monster Core entry: "1 cultist boss (level 7)",
            # as the builder writes people): its statblock, built below the block
            for c in block.report.creatures:
                if c.start is None or doc.position(block.block.doc_offset(c.start)).line != line:
                    continue
                if c.id is None:
                    req = CreatureRequest(level=min(max(c.base_level, -1), 24), concept=c.name)
                    out += self._statblock_actions(doc, req, block.block.last_line, resolver)
                elif c.adjustment and not c.hazard:
                    # "elite ogre warrior": the Monster Core creature with Monster Core's adjustments, as the chat
                    # and `gmprep creature "elite ogre warrior"` give it
                    out += self._adjusted_actions(doc, c.id, c.adjustment, block.block.last_line, resolver)
        return out

    def _adjusted_actions(self, doc, node_id: str, adjustment, after_line: int, resolver):
        from gmprep.core.creators.adjust import adjust_creature, render_adjusted_markdown

        node = next((n for n in resolver.creatures() if n.node_id == node_id), None)
        if node is None or node.level is None:
            return []
        try:
            md = self._cached(("adj", node_id, adjustment),
                              lambda: render_adjusted_markdown(adjust_creature(node, adjustment)))
        except Exception:
            log.exception("adjust_creature failed")
            return []
        return [lsp.CodeAction(title=f"Insert creature statblock: {adjustment} {node.name}", kind=KIND,
                               edit=_insert_below(doc, after_line, md))]

    def _encounter_actions(self, doc, enc: EncounterRequest, after_line: int, resolver, for_block: bool = False):
        from gmprep.core.creators.encounter import build_encounters

        key = ("enc", enc.model_dump_json())
        try:
            reports = self._cached(key, lambda: build_encounters(
                enc.party_size, enc.party_level, enc.threat, enc.phrases or enc.words, resolver, n=OPTIONS))
        except Exception:
            log.exception("build_encounters failed")
            return []
        out = []
        for i, r in enumerate(reports, 1):
            names = ", ".join(creature_line(c.count, c.adjustment, c.name, None if c.id else c.base_level)
                              for c in r.creatures)
            what = "another " if for_block else ""
            out.append(lsp.CodeAction(
                title=f"Build {what}encounter, option {i} ({option_summary(r)}): {names}",
                kind=KIND, edit=_insert_below(doc, after_line, render_encounter_block(r)),
            ))
        return out

    def _statblock_actions(self, doc, req, line: int, resolver):
        from gmprep.core.creators.build import build_request

        def build() -> tuple[str, str | None, str]:
            built = build_request(req, resolver)  # what the chat and `gmprep creature` build for the same request
            return built.kind, built.role, built.markdown

        try:
            kind, role, md = self._cached(("sb", req.model_dump_json()), build)
        except Exception:
            log.exception("build_request failed")
            return []
        concept = f" ({req.concept})" if req.concept else ""
        # the role the statblock is built as: the GM's, else the one its concept's class, background or kind gives
        title = {"hazard": f"Insert hazard: level {req.level}{concept}",
                 "scaled": f"Insert creature statblock: {req.concept} at level {req.level}"}.get(
            kind, f"Insert creature statblock: level {req.level} {role}{concept}")
        return [lsp.CodeAction(title=title, kind=KIND, edit=_insert_below(doc, line, md))]


def _insert_below(doc: DocumentMentions, line: int, block: str) -> lsp.WorkspaceEdit:
    """Insert ``block`` after ``line``, with a blank line before it (markdown keeps it a block)."""
    block = block.rstrip("\n") + "\n"
    if line + 1 < len(doc.line_starts):
        at = lsp.Position(line=line + 1, character=0)
        text = "\n" + block
        if doc.line_text(line + 1).strip():
            text += "\n"
    else:  # the last line has no line break
        at = doc.position(len(doc.text))
        text = "\n\n" + block
    return lsp.WorkspaceEdit(changes={doc.uri: [lsp.TextEdit(range=lsp.Range(start=at, end=at), new_text=text)]})
