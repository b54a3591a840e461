"""Markdown the editor shows: hover cards, inserted rule quotes, completion documentation.

Presentation only: every fact comes from a ``Node`` of the knowledge graph.
"""

from __future__ import annotations

import re

from gmprep.common.text import excerpt
from gmprep.kg.models import Citation, Node
from gmprep.kg.names import Mention

HOVER_TEXT_CHARS = 1200
QUOTE_TEXT_CHARS = 6000
_GLYPHS = {
    "[one-action]": "◆",
    "[two-actions]": "◆◆",
    "[three-actions]": "◆◆◆",
    "[reaction]": "⤾",
    "[free-action]": "◇",
}
_WIKI = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")


def readable(text: str) -> str:
    """Entry markdown for display: action glyph tags as symbols, wiki links as plain names."""
    for tag, glyph in _GLYPHS.items():
        text = text.replace(tag, glyph)
    return _WIKI.sub(lambda m: m.group(2) or m.group(1), text)


def where(node: Node) -> str:
    """``Book, p. N`` (or the notes file), for citations."""
    return Citation.from_node(node).where()


def meta_line(node: Node) -> str:
    """``spell 3 · uncommon`` style summary of type, level and rarity."""
    kind = node.type.replace("-", " ")
    if node.level is not None:
        kind += f" {node.level}"
    if node.rarity:
        kind += f" · {node.rarity}"
    return kind


def cut(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut at a paragraph or sentence boundary before ``limit`` characters."""
    if len(text) <= limit:
        return text, False
    head = text[:limit]
    for sep in ("\n\n", "\n", ". "):
        pos = head.rfind(sep)
        if pos > limit // 2:
            return head[: pos + (1 if sep == ". " else 0)].rstrip(), True
    return head.rsplit(" ", 1)[0] + " …", True


def hover_markdown(
    node: Node,
    mention: Mention | None = None,
    related: list[tuple[Node, str | None]] | None = None,
    entry_uri: str | None = None,
    alternatives: list[tuple[Node, str | None]] | None = None,
) -> str:
    """The hover card: name, type/level, traits, book and page, the rule text (cut, with a link
    to the full entry), the legacy-name note, the other entries the words could mean ("did you
    mean", best first, linked) and related rules."""
    parts = [f"### {node.name}", f"*{meta_line(node)}* — {where(node)} · `{node.source_id}`"]
    if alternatives:
        links = [
            (f"[{n.name}]({uri})" if uri else n.name) + f" ({meta_line(n)}, {where(n)})" for n, uri in alternatives
        ]
        parts.append("**Did you mean** " + " · ".join(links) + "?")
    if node.traits:
        parts.append("**Traits** " + ", ".join(node.traits))
    if mention is not None and mention.legacy_name:
        parts.append(
            f"> **{mention.text}** is the pre-Remaster name; the Remaster calls it **{node.name}**."
        )
    if mention is not None and mention.value is not None and node.type == "condition":
        parts.append(f"**Value:** {mention.value}")
    body, was_cut = cut(readable(node.text or node.summary).strip(), HOVER_TEXT_CHARS)
    if body:
        parts += ["---", body]
    if was_cut:
        parts.append(f"*… [full entry]({entry_uri})*" if entry_uri else "*… (text cut; Go to Definition opens the full entry)*")
    elif entry_uri:
        parts.append(f"[Open full entry]({entry_uri})")
    if related:
        links = [f"[{n.name}]({uri})" if uri else n.name for n, uri in related]
        parts.append("**Related:** " + " · ".join(links))
    return "\n\n".join(parts)


def other_book_markdown(node: Node, held: list[str]) -> str:
    """The card of a name-only entry of a book gmprep does not hold (``core.agents.otherbooks.catalogue_entries``):
    which book prints it and of what kind, and that there is no text to show (never a guess at its rule)."""
    books = list(node.fields.get("books") or [node.book or "another book"])
    kind = str(node.fields.get("category") or node.type.replace("-", " ")).lower()
    held_text = ", ".join(held) if held else "the Pathfinder 2e Remaster core books"
    added = [b for b in books if b in held]
    if added:  # the user added that book (`gmprep books add`): its text is searchable, not hoverable by this name
        return "\n\n".join([f"### {node.name}", f"*{kind} — {' · '.join(books)}* · `{node.source_id}`", "---",
                             f"**{node.name}** is from {' and '.join(added)}, which you added: "
                             f"`gmprep search \"{node.name}\"` finds its text."])
    if node.fields.get("superseded"):
        head = f"*{kind} — {' · '.join(books)} (pre-Remaster)*"
        body = (f"A pre-Remaster name: the Remaster books gmprep holds ({held_text}) do not print **{node.name}** "
                "(renamed or left out), so there is no rule text to show.")
    else:
        head = f"*{kind} — {' · '.join(books)}*"
        body = (f"**{node.name}** is from {' and '.join(books)}, which gmprep does not hold ({held_text}), so there "
                "is no rule text to show. If you own the book, add its PDF with `gmprep books add` to search it.")
    return "\n\n".join([f"### {node.name}", f"{head} · `{node.source_id}`", "---", body])


def quote_block(node: Node, limit: int = QUOTE_TEXT_CHARS) -> str:
    """The rule as a markdown block quote with its citation, for inserting into a note."""
    head = f"> **{node.name}** ({node.type.replace('-', ' ')}) — {where(node)} [{node.source_id}]"
    body, was_cut = cut(readable(node.text or node.summary).strip(), limit)
    lines = [head, ">"] if body else [head]
    lines += [f"> {line}".rstrip() for line in body.splitlines()]
    if was_cut:
        lines.append(f"> … (full text: `{node.source_id}`)")
    return "\n".join(lines) + "\n"


def completion_detail(node: Node) -> str:
    """Completion item detail: type, level and book."""
    return f"{meta_line(node)} — {node.book or 'no book'}"


def completion_doc(node: Node) -> str:
    """Completion item documentation: a short excerpt of the rule text."""
    text = excerpt(node.text or node.summary, 400)
    traits = f"**Traits** {', '.join(node.traits)}\n\n" if node.traits else ""
    return f"{traits}{text}\n\n`{node.source_id}`"


def mention_label(mention: Mention) -> str:
    """How a mention is named in code action titles."""
    return mention.name
