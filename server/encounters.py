"""Encounter blocks in the editor: inlay hints (XP per creature, total and threat), a code lens with
the total, diagnostics (unknown creatures with "did you mean", core's warnings, no party) and the
hover that explains the arithmetic with its citations. The numbers are core's (creators.py)."""

from __future__ import annotations

from lsprotocol import types as lsp

from gmprep.core.creators.chat import report_markdown
from gmprep.core.creators.models import EncounterReport
from gmprep.server.creators import NoteAnalysis
from gmprep.server.documents import DocumentMentions, diagnostic_data, utf16_len

SOURCE = "gmprep"
UNKNOWN_CODE = "encounter-unknown-creature"
WARNING_CODE = "encounter-warning"
NO_PARTY_CODE = "encounter-no-party"
ERROR_CODE = "encounter-error"


def _pos(doc: DocumentMentions, offset: int) -> lsp.Position:
    return doc.position(offset)


def _line_end(doc: DocumentMentions, line: int) -> lsp.Position:
    return lsp.Position(line=line, character=utf16_len(doc.line_text(line)))


def creature_label(c) -> str:
    """``2 × 10 XP (level -1)`` / ``40 XP (elite, level 4)``."""
    level = f"{c.adjustment}, level {c.level}" if c.adjustment else \
        f"{c.hazard} hazard, level {c.level}" if c.hazard else f"level {c.level}"
    if c.count > 1:
        return f"{c.count} × {c.xp_each} = {c.count * c.xp_each} XP ({level})"
    return f"{c.xp_each} XP ({level})"


def total_label(r: EncounterReport) -> str:
    """``80 XP · moderate (4 PCs, level 3)``."""
    return f"{r.xp} XP · {r.threat} ({r.party_size} PC{'s' if r.party_size != 1 else ''}, level {r.party_level})"


def inlay_hints(note: NoteAnalysis, rng: lsp.Range) -> list[lsp.InlayHint]:
    """XP after each creature group, the total and threat after the block's first line."""
    doc = note.doc
    out: list[lsp.InlayHint] = []
    for e in note.encounters:
        b, r = e.block, e.report
        if r is None or b.last_line < rng.start.line or b.first_line > rng.end.line:
            continue
        out.append(lsp.InlayHint(
            position=_line_end(doc, b.first_line), label=f"  {total_label(r)}", kind=lsp.InlayHintKind.Type,
            padding_left=True, tooltip=_budget_text(r),
        ))
        for c in r.creatures:
            if c.end is None:
                continue
            out.append(lsp.InlayHint(
                position=_pos(doc, b.doc_offset(c.end)), label=creature_label(c), kind=lsp.InlayHintKind.Parameter,
                padding_left=True,
            ))
    return out


def code_lenses(note: NoteAnalysis) -> list[lsp.CodeLens]:
    """A lens above each evaluated block: total, threat and the budgets (a label, no action)."""
    out = []
    for e in note.encounters:
        line = e.block.first_line
        rng = lsp.Range(start=lsp.Position(line=line, character=0), end=lsp.Position(line=line, character=0))
        if e.report is not None:
            title = f"Encounter: {total_label(e.report)} · budget {_budget_text(e.report)}"
        else:
            title = f"Encounter: {e.error}"
        out.append(lsp.CodeLens(range=rng, command=lsp.Command(title=title, command="")))
    return out


def _budget_text(r: EncounterReport) -> str:
    return ", ".join(f"{t} {xp}" for t, xp in r.budget.items())


def diagnostics(note: NoteAnalysis) -> list[lsp.Diagnostic]:
    """Unknown creatures (with suggestions), core's warnings, a missing party."""
    doc = note.doc
    out: list[lsp.Diagnostic] = []
    for e in note.encounters:
        b = e.block
        head = lsp.Range(start=lsp.Position(line=b.first_line, character=0), end=_line_end(doc, b.first_line))
        if e.error is not None:
            code = NO_PARTY_CODE if e.error.startswith("no party") else ERROR_CODE
            out.append(lsp.Diagnostic(range=head, message=e.error, severity=lsp.DiagnosticSeverity.Information,
                                      source=SOURCE, code=code))
            continue
        r = e.report
        assert r is not None
        for u in r.unknown:
            if u.start is not None and u.end is not None:
                rng = lsp.Range(start=_pos(doc, b.doc_offset(u.start)), end=_pos(doc, b.doc_offset(u.end)))
            else:
                rng = head
            hint = f"; did you mean {', '.join(u.suggestions)}?" if u.suggestions else ""
            out.append(lsp.Diagnostic(
                range=rng, severity=lsp.DiagnosticSeverity.Warning, source=SOURCE, code=UNKNOWN_CODE,
                message=f'"{u.text}" is not a Monster Core creature{hint} (from another book? write its level: '
                        f'"{u.text} (level N)")', data={"suggestions": u.suggestions},
            ))
        for w in r.warnings:
            if any(f"'{u.text}'" in w for u in r.unknown):
                continue  # an unknown creature has its own diagnostic, on its name
            out.append(lsp.Diagnostic(range=head, severity=lsp.DiagnosticSeverity.Warning, source=SOURCE,
                                      code=WARNING_CODE, message=w))
    return out


def hover(note: NoteAnalysis, pos: lsp.Position) -> lsp.Hover | None:
    """On an encounter block: the arithmetic, step by step, with the rules and creatures it cites."""
    doc = note.doc
    e = note.encounter_at(pos.line)
    if e is None:
        return None
    b = e.block
    rng = lsp.Range(start=lsp.Position(line=b.first_line, character=0), end=_line_end(doc, b.last_line))
    if e.report is None:
        value = f"### Encounter\n\n{e.error}"
    else:
        value = hover_markdown(e.report, e.party_from)
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=value), range=rng)


def hover_markdown(r: EncounterReport, party_from: str | None) -> str:
    """The arithmetic of one encounter (core's ``report_markdown``, which the chat answers with too)."""
    return report_markdown(r, party_from)


def quick_fixes(note: NoteAnalysis, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """For an unknown creature: write one of the suggested names instead (best first)."""
    doc = note.doc
    out: list[lsp.CodeAction] = []
    for d in params.context.diagnostics if params.context else []:
        data = diagnostic_data(d)
        if d.code != UNKNOWN_CODE or not data:
            continue
        for i, name in enumerate(list(data.get("suggestions") or [])[:3]):
            out.append(lsp.CodeAction(
                title=f'Did you mean "{name}"?', kind=lsp.CodeActionKind.QuickFix, diagnostics=[d], is_preferred=i == 0,
                edit=lsp.WorkspaceEdit(changes={doc.uri: [lsp.TextEdit(range=d.range, new_text=name)]}),
            ))
    return out

