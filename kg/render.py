"""Markdown views of an entry: the complete entry with its ancestors (``gmprep show``, LSP
``gmprep/entry``) and the one-line stat summary of its type-specific fields."""

from __future__ import annotations

from gmprep.common.errors import GmprepError
from gmprep.common.text import clean_markdown
from gmprep.kg.models import Citation, Node

# fields rendered as "**Label** value", in this order, per entry type (others are ids or already in the text)
STAT_FIELDS: dict[str, list[tuple[str, str]]] = {
    "spell": [("spell_kind", "Kind"), ("cast", "Cast"), ("range", "Range"), ("area", "Area"), ("targets", "Targets"),
              ("defense", "Defense"), ("duration", "Duration"), ("requirements", "Requirements")],
    "action": [("cast", "Actions"), ("granted_by", "Granted by")],
    "feat": [("prerequisites", "Prerequisites"), ("frequency", "Frequency"), ("archetype", "Archetype")],
    "archetype": [("prerequisites", "Prerequisites")],
    "ancestry": [("hp", "Hit Points"), ("size", "Size"), ("speed", "Speed"), ("boosts", "Attribute Boosts"),
                 ("flaws", "Attribute Flaw"), ("languages", "Languages")],
    "background": [("boosts", "Attribute Boosts"), ("skills", "Skills"), ("feats", "Skill Feat")],
    "class": [("key_attribute", "Key Attribute"), ("hp", "Hit Points")],
    "heritage": [("ancestry", "Ancestry")],
    "hazard": [("complex", "Complex"), ("ac", "AC"), ("hardness", "Hardness"), ("hp", "HP"), ("saves", "Saves")],
    "class-feature": [("class", "Class")],
}
_GLYPH_WORDS = {
    "[one-action]": "1 action", "[two-actions]": "2 actions", "[three-actions]": "3 actions",
    "[reaction]": "reaction", "[free-action]": "free action",
}


def _value(v) -> str:
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    if isinstance(v, bool):
        return "yes" if v else "no"
    text = str(v)
    for tag, word in _GLYPH_WORDS.items():
        text = text.replace(tag, word)
    return text


def stat_line(node: Node, markdown: bool = True) -> str:
    """The entry's type-specific fields as one line ("**Range** 500 feet; **Area** 20-foot burst"),
    leaving out those the text already states; empty when there are none."""
    parts = []
    for key, label in STAT_FIELDS.get(node.type, []):
        value = node.fields.get(key)
        if value in (None, "", []):
            continue
        if f"**{label}**" in node.text:
            continue
        parts.append(f"**{label}** {_value(value)}" if markdown else f"{label} {_value(value)}")
    return "; ".join(parts)


def _meta_line(node: Node) -> str:
    bits = [f"*{node.type}*"]
    if node.level is not None:
        word = "rank" if node.type == "spell" else "level"
        bits.append(f"{word} {node.level}")
    if node.rarity:
        bits.append(node.rarity)
    if node.traits:
        bits.append("traits: " + ", ".join(node.traits))
    return " · ".join(bits)


def render_node(node: Node, ancestors: list[Node] | None = None, related: list[Node] | None = None) -> str:
    """Markdown for one node: breadcrumb, title, meta, source, stat line, text, lore, related entries."""
    lines = []
    crumbs = [a.name for a in ancestors] if ancestors else list(node.path)
    if crumbs:
        lines.append(" > ".join(crumbs))
        lines.append("")
    lines.append(f"# {node.name}")
    lines.append("")
    lines.append(_meta_line(node))
    lines.append(f"**Source:** {Citation.from_node(node).where()} · `{node.source_id}`")
    if node.aliases:
        lines.append(f"**Also called:** {', '.join(node.aliases)}")
    stats = stat_line(node)
    if stats:
        lines += ["", stats]
    body = node.text or node.summary
    if body:
        lines += ["", body.strip()]
    lore = node.fields.get("lore") if node.type == "creature" else None
    if lore:
        lines += ["", "## Lore", "", str(lore).strip()]
    if related:
        links = ", ".join(f"{r.name} (`{r.node_id}`)" for r in related)
        lines += ["", f"**Related:** {links}"]
    return "\n".join(lines).rstrip() + "\n"


def render_entry(store, node_id: str) -> str:
    """The complete entry ``node_id`` as Markdown, with its ancestors (breadcrumb) and the entries it
    references. Raises GmprepError for an unknown id."""
    node = store.get(node_id)
    if node is None:
        raise GmprepError(f"no entry {node_id!r} in the index")
    ancestors = store.ancestors(node_id)
    ref_ids = [nid for nid, kind in store.neighbors(node_id, kinds=("ref", "trait"))]
    refs = store.get_many(ref_ids)
    related = [refs[i] for i in dict.fromkeys(ref_ids) if i in refs and refs[i].kind == "entry"]
    return render_node(node, ancestors, related)


def plain_stat_line(node: Node) -> str:
    """``stat_line`` without Markdown markers (for the reranker's passage and an answer's passages)."""
    return clean_markdown(stat_line(node, markdown=False))


def passage_text(node: Node) -> str:
    """A node as an answer reads it (``Hit.passage``): the plain stat line, then the text."""
    stats = plain_stat_line(node)
    return f"{stats}\n{node.text}" if stats else node.text
