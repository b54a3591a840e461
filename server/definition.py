"""textDocument/definition: open the full entry (a generated read-only markdown file)."""

from __future__ import annotations

from lsprotocol import types as lsp

from gmprep.server.documents import DocumentMentions
from gmprep.server.entries import EntryFiles


def definition(entries: EntryFiles, doc: DocumentMentions, pos: lsp.Position) -> lsp.Location | None:
    """The entry file of the mention under the cursor (None before the index is ready)."""
    mention = doc.at(pos)
    if mention is None:
        return None
    path = entries.ensure(mention.node_id)
    if path is None:
        return None
    start = lsp.Position(line=0, character=0)
    return lsp.Location(uri=path.as_uri(), range=lsp.Range(start=start, end=start))
