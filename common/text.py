"""Text views of a node: the contextual chunk (for embeddings and the reranker) and plain text.

Contextual chunk headers: a node is embedded with its ancestor path, name, type, level and traits
in front of its text, so that a short entry ("Prone") still carries what it is and where it lives.
"""

from __future__ import annotations

import re

from gmprep.kg.models import Node

_GLYPHS = {
    "[one-action]": "(1 action)",
    "[two-actions]": "(2 actions)",
    "[three-actions]": "(3 actions)",
    "[reaction]": "(reaction)",
    "[free-action]": "(free action)",
}
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_WIKI = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
_MDLINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}.*$", re.M)
_SPACES = re.compile(r"[ \t]+")


def clean_markdown(text: str) -> str:
    """Markdown -> readable plain text: glyph tags as words, no bold markers or link syntax."""
    for tag, word in _GLYPHS.items():
        text = text.replace(tag, word)
    text = _BOLD.sub(r"\1", text)
    text = _WIKI.sub(lambda m: m.group(2) or m.group(1), text)
    text = _MDLINK.sub(r"\1", text)
    text = _TABLE_RULE.sub("", text)
    text = text.replace("|", " ").replace("#", "")
    return _SPACES.sub(" ", text).strip()


def header(node: Node) -> str:
    """The chunk header: ``Book > Chapter > Section > Name`` then type, level and traits."""
    crumbs = " > ".join([*node.path, node.name])
    meta = node.type
    if node.level is not None:
        meta += f" {node.level}"
    if node.traits:
        meta += "; traits: " + ", ".join(node.traits)
    if node.aliases:
        meta += "; also called: " + ", ".join(node.aliases)
    return f"{crumbs}\n{meta}"


def contextual_text(node: Node, max_chars: int = 2000) -> str:
    """Header + body (text, or the summary for structural nodes), cut to ``max_chars``."""
    body = clean_markdown(node.text) if node.text else node.summary
    return f"{header(node)}\n{body}"[:max_chars]


def plain_text(node: Node, max_chars: int = 2000) -> str:
    """The entry text alone, no header: the naive dense baseline embeds this."""
    return clean_markdown(node.text or node.summary)[:max_chars]


def excerpt(text: str, max_chars: int = 240) -> str:
    """A short one-paragraph excerpt cut on a word boundary."""
    flat = clean_markdown(text).replace("\n", " ")
    if len(flat) <= max_chars:
        return flat
    cut = flat[:max_chars].rsplit(" ", 1)[0]
    return cut + " ..."
