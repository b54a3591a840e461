"""Code actions on a mention (insert the rule text, replace a legacy name, ask about it) and the
``workspace/executeCommand`` commands behind them."""

from __future__ import annotations

from lsprotocol import types as lsp

from gmprep.kg.names import Mention
from gmprep.server.diagnostics import LEGACY_CODE, replacement_text
from gmprep.server.documents import DocumentMentions
from gmprep.server.markdown import quote_block
from gmprep.server.models import ASK_ABOUT_SELECTION, IGNORE_WORD
from gmprep.server.state import ServerState

MAX_MENTIONS = 3  # a selection over a paragraph offers the first few entries, not dozens


def insert_rule_edit(state: ServerState, doc: DocumentMentions, mention: Mention) -> lsp.WorkspaceEdit | None:
    """A workspace edit inserting the rule quote below the mention's line (blank lines around it,
    so markdown keeps it a block quote of its own)."""
    node = state.node(mention.node_id)
    if node is None:
        return None
    line = doc.position(mention.start).line
    if line + 1 < len(doc.line_starts):
        at = lsp.Position(line=line + 1, character=0)
        text = "\n" + quote_block(node) + "\n"
    else:  # last line without a line break
        at = doc.position(len(doc.text))
        text = "\n\n" + quote_block(node)
    edit = lsp.TextEdit(range=lsp.Range(start=at, end=at), new_text=text)
    return lsp.WorkspaceEdit(changes={doc.uri: [edit]})


def replace_legacy_edit(doc: DocumentMentions, rng: lsp.Range, new_name: str) -> lsp.WorkspaceEdit:
    """A workspace edit writing ``new_name`` over ``rng``."""
    return lsp.WorkspaceEdit(changes={doc.uri: [lsp.TextEdit(range=rng, new_text=new_name)]})


def code_actions(
    state: ServerState, doc: DocumentMentions, params: lsp.CodeActionParams
) -> list[lsp.CodeAction | lsp.Command]:
    """The actions for the mentions in the requested range, and "Ask" for any selection. "Ask" is
    a bare Command (no edit): some clients take any result carrying a ``command`` for one anyway."""
    out: list[lsp.CodeAction | lsp.Command] = []
    mentions = doc.in_range(params.range)[:MAX_MENTIONS]
    only = params.context.only if params.context else None
    for m in mentions:
        rng = doc.range_of(m)
        if m.legacy_name:
            new = replacement_text(m.text, m.name)
            diags = [
                d for d in (params.context.diagnostics if params.context else [])
                if d.code == LEGACY_CODE and d.range == rng
            ]
            out.append(
                lsp.CodeAction(
                    title=f'Replace legacy name "{m.text}" with "{new}"',
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=diags or None,
                    is_preferred=True,
                    edit=replace_legacy_edit(doc, rng, new),
                )
            )
        edit = insert_rule_edit(state, doc, m)
        if edit is not None:
            out.append(
                lsp.CodeAction(title=f"Insert rule text: {m.name}", kind=lsp.CodeActionKind.RefactorRewrite, edit=edit)
            )
        if state.workspace_root is not None and not only:
            # a bare Command, like "Ask": clients read a CodeAction that carries a command as one
            title = f"Don't hover '{m.text}' in this workspace"
            out.append(lsp.Command(title=title, command=IGNORE_WORD, arguments=[m.text]))
    if only:
        out = [
            a for a in out
            if isinstance(a, lsp.CodeAction) and a.kind and any(str(a.kind).startswith(str(k)) for k in only)
        ]
    selected = _selected_text(doc, params.range)
    text = selected or (mentions[0].text if mentions else "")
    if text.strip() and not only:
        out.append(lsp.Command(title="Ask gmprep about this", command=ASK_ABOUT_SELECTION, arguments=[text, doc.uri]))
    return out


def _selected_text(doc: DocumentMentions, rng: lsp.Range) -> str:
    a, b = doc.offset(rng.start), doc.offset(rng.end)
    if a is None or b is None or b <= a:
        return ""
    return doc.text[a:b][:4000]
