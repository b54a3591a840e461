"""Diagnostics: pre-Remaster names as hints, each with its quick fix (see actions.py)."""

from __future__ import annotations

from lsprotocol import types as lsp

from gmprep.server.documents import DocumentMentions

SOURCE = "gmprep"
LEGACY_CODE = "legacy-name"


def replacement_text(original: str, new_name: str) -> str:
    """The Remaster name written in the style of the original (lowercase stays lowercase)."""
    return new_name.lower() if original[:1].islower() else new_name


def legacy_diagnostics(doc: DocumentMentions) -> list[lsp.Diagnostic]:
    """One Hint per legacy name in the document."""
    out = []
    for m in doc.mentions:
        if not m.legacy_name:
            continue
        out.append(
            lsp.Diagnostic(
                range=doc.range_of(m),
                severity=lsp.DiagnosticSeverity.Hint,
                source=SOURCE,
                code=LEGACY_CODE,
                message=f'"{m.text}" is a pre-Remaster name: the Remaster calls it {m.name}.',
                data={"nodeId": m.node_id, "newName": replacement_text(m.text, m.name)},
            )
        )
    return out
