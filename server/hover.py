"""textDocument/hover: the rule card of the entry named under the cursor."""

from __future__ import annotations

from lsprotocol import types as lsp

from gmprep.server.documents import DocumentMentions
from gmprep.server.entries import EntryFiles
from gmprep.server.markdown import hover_markdown, other_book_markdown
from gmprep.server.state import ServerState

MAX_ALTERNATIVES = 3  # "did you mean": the next best entries the same words name


def hover(state: ServerState, entries: EntryFiles, doc: DocumentMentions, pos: lsp.Position) -> lsp.Hover | None:
    """The hover for ``pos``, or None where no entry is named (never a guess)."""
    mention = doc.at(pos)
    if mention is None:
        return None
    node = state.node(mention.node_id)
    if node is None:
        other = state.other_entry(mention.node_id)
        if other is None:
            return None
        return lsp.Hover(
            contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=other_book_markdown(other, state.held_books())),
            range=doc.range_of(mention),
        )
    own = entries.path_if_ready(node.node_id)
    related = []
    for other in state.related(node.node_id):
        path = entries.path_if_ready(other.node_id)
        related.append((other, path.as_uri() if path else None))
    alternatives = []
    for other_id in mention.alternatives[:MAX_ALTERNATIVES]:
        alt = state.node(other_id)
        if alt is not None:
            path = entries.path_if_ready(other_id)
            alternatives.append((alt, path.as_uri() if path else None))
    value = hover_markdown(node, mention, related, own.as_uri() if own else None, alternatives)
    return lsp.Hover(
        contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=value),
        range=doc.range_of(mention),
    )
