"""Statblocks in a note checked against GM Core's Building Creatures tables: one diagnostic per number
off its table for the stated level ("AC 25 is above extreme for level 3; high is 19"), each with a
quick fix writing the table's value. The check is ``gmprep.core.creators.statblock``'s (creators.py)."""

from __future__ import annotations

from lsprotocol import types as lsp

from gmprep.server.creators import NoteAnalysis
from gmprep.server.documents import diagnostic_data

SOURCE = "gmprep"
STAT_CODE = "statblock-number"


def diagnostics(note: NoteAnalysis) -> list[lsp.Diagnostic]:
    """One Warning per number outside its table column range, the fix value in ``data``."""
    doc = note.doc
    out: list[lsp.Diagnostic] = []
    for issue in note.stat_issues:
        rng = lsp.Range(start=doc.position(issue.start), end=doc.position(issue.end))
        label = issue.citation.label() if issue.citation else ""
        cite = f" ({label})" if label and label not in issue.message else ""  # the source, once
        out.append(lsp.Diagnostic(
            range=rng, severity=lsp.DiagnosticSeverity.Warning, source=SOURCE, code=STAT_CODE,
            message=issue.message + cite,
            data={"fix": issue.fix_value, "field": issue.field, "expected": list(issue.expected_range)},
        ))
    return out


def fix_text(written: str, value: int) -> str:
    """``value`` written the way the original number was (a ``+`` kept on modifiers)."""
    if written.lstrip().startswith("+") and value >= 0:
        return f"+{value}"
    return str(value)


def quick_fixes(note: NoteAnalysis, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """A quick fix for each statblock diagnostic in the request's context."""
    doc = note.doc
    out: list[lsp.CodeAction] = []
    for d in params.context.diagnostics if params.context else []:
        data = diagnostic_data(d)
        if d.code != STAT_CODE or not data or "fix" not in data:
            continue
        a, b = doc.offset(d.range.start), doc.offset(d.range.end)
        if a is None or b is None:
            continue
        new = fix_text(doc.text[a:b], int(data["fix"]))
        out.append(lsp.CodeAction(
            title=f"Use the table value {new} ({d.message.split(';')[0]})",
            kind=lsp.CodeActionKind.QuickFix, diagnostics=[d], is_preferred=True,
            edit=lsp.WorkspaceEdit(changes={doc.uri: [lsp.TextEdit(range=d.range, new_text=new)]}),
        ))
    return out

