"""textDocument/completion: entry and creature names by prefix (also several words) and fuzzily."""

from __future__ import annotations

import bisect
import re

from lsprotocol import types as lsp

from gmprep.server.documents import DocumentMentions, utf16_len, utf16_to_index
from gmprep.server.markdown import completion_detail, completion_doc
from gmprep.server.state import RulesBook

MAX_ITEMS = 40
MAX_WORDS = 4
_KIND = {
    "condition": lsp.CompletionItemKind.EnumMember,
    "action": lsp.CompletionItemKind.Event,
    "spell": lsp.CompletionItemKind.Function,
    "feat": lsp.CompletionItemKind.Interface,
    "creature": lsp.CompletionItemKind.Class,
    "equipment": lsp.CompletionItemKind.Value,
    "trait": lsp.CompletionItemKind.Keyword,
    "rule": lsp.CompletionItemKind.Text,
    "class": lsp.CompletionItemKind.Class,
    "class-feature": lsp.CompletionItemKind.Property,
    "ancestry": lsp.CompletionItemKind.Module,
    "heritage": lsp.CompletionItemKind.Module,
    "archetype": lsp.CompletionItemKind.Module,
    "background": lsp.CompletionItemKind.Reference,
    "hazard": lsp.CompletionItemKind.Constant,
}
_TAIL = re.compile(r"[A-Za-z0-9'\u2019+-]+(?: [A-Za-z0-9'\u2019+-]+)*$")


def _prefix_matches(book: RulesBook, prefix: str, limit: int) -> list[str]:
    names = book.sorted_names
    i = bisect.bisect_left(names, (prefix,))
    out: list[str] = []
    while i < len(names) and names[i][0].startswith(prefix) and len(out) < limit:
        out.append(names[i][1])
        i += 1
    return out


def _fuzzy_matches(book: RulesBook, query: str, limit: int, seen: set[str]) -> list[str]:
    """Names with a later word starting with ``query`` ("warrior" -> Goblin Warrior), then names
    with the same initial holding the query's letters in order ("frgtnd" -> Frightened)."""
    out: list[str] = []
    words = book.sorted_words
    i = bisect.bisect_left(words, (query,))
    while i < len(words) and words[i][0].startswith(query) and len(out) < limit:
        node_id = words[i][1]
        if node_id not in seen:
            seen.add(node_id)
            out.append(node_id)
        i += 1
    if len(out) >= limit or len(query) < 3:
        return out
    pattern = re.compile(".*?".join(map(re.escape, query)))
    found = [
        (len(lower), node_id)
        for lower, node_id in book.by_initial.get(query[:1], ())
        if node_id not in seen and pattern.match(lower)
    ]
    found.sort()
    out += [nid for _, nid in found[: limit - len(out)]]
    return out


def _doc(book: RulesBook, node) -> str:
    doc = book.completion_docs.get(node.node_id)
    if doc is None:
        doc = book.completion_docs[node.node_id] = completion_doc(node)
    return doc


def complete(book: RulesBook | None, doc: DocumentMentions, pos: lsp.Position) -> lsp.CompletionList:
    """Completion items for the words before the cursor; always ``isIncomplete`` (re-asked per key)."""
    empty = lsp.CompletionList(is_incomplete=True, items=[])
    if book is None:
        return empty
    line = doc.line_text(pos.line)
    if pos.character > utf16_len(line):
        return empty
    before = line[: utf16_to_index(line, pos.character)]
    tail = _TAIL.search(before)
    if tail is None:
        return empty
    words = tail.group().split(" ")[-MAX_WORDS:]
    # the longest run of trailing words that starts some name wins ("goblin w" -> Goblin Warrior)
    ids: list[str] = []
    typed = ""
    for n in range(len(words), 0, -1):
        typed = " ".join(words[-n:])
        ids = _prefix_matches(book, typed.lower().replace("\u2019", "'"), MAX_ITEMS)
        if ids:
            break
    if not ids:
        typed = words[-1]
    if len(typed) < 2 and not ids:
        return empty
    if len(ids) < MAX_ITEMS and len(typed) >= 2:
        ids += _fuzzy_matches(book, typed.lower(), MAX_ITEMS - len(ids), set(ids))
    start_char = pos.character - utf16_len(typed)
    rng = lsp.Range(start=lsp.Position(line=pos.line, character=start_char), end=pos)
    items = []
    for rank, node_id in enumerate(ids):
        node = book.nodes[node_id]
        items.append(
            lsp.CompletionItem(
                label=node.name,
                kind=_KIND.get(node.type, lsp.CompletionItemKind.Text),
                detail=completion_detail(node),
                documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=_doc(book, node)),
                sort_text=f"{rank:04d}",
                filter_text=node.name if node.name.lower().startswith(typed.lower()) else typed,
                text_edit=lsp.TextEdit(range=rng, new_text=node.name),
                data={"id": node_id},
            )
        )
    return lsp.CompletionList(is_incomplete=True, items=items)
