"""Training queries generated from corpus entries only (never from the evaluation questions).

- ``name``: the entry name and the ways people type it ("stunned condition", "Stats for an ogre warrior",
  "What does Bless do?");
- ``masked``: a sentence of the entry with the entry's name masked out, sometimes wrapped in a question
  ("Which condition: you gain 1 additional action at the start of your turn?"): paraphrase-like queries that
  describe an effect without naming it;
- ``keywords``: a handful of content words drawn from one paragraph, the way a terse query reads
  (stop words: the one list of ``common.text``);
- ``field``: templated questions about the entry's stat fields (a creature's HP or AC, an item's price,
  a spell's range, a feat's prerequisites, a rules table's row labels, an action's critical failure);
- ``link``: a question about what an entry does to its target, answered by the condition it links.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from gmprep.common.text import STOP_WORDS, clean_markdown
from gmprep.kg.models import Node

TYPE_WORDS = {
    "condition": ["condition"], "action": ["action", "basic action", "skill action"], "spell": ["spell"],
    "feat": ["feat"], "creature": ["creature", "monster"], "equipment": ["item"], "rule": ["rule", "table"],
    "trait": ["trait"], "hazard": ["hazard", "trap"], "ancestry": ["ancestry"], "heritage": ["heritage"],
    "class": ["class"], "background": ["background"], "archetype": ["archetype"],
    "class-feature": ["class feature"],
}
# How much of the query budget each entry type gets, relative to sqrt(entries of that type): small,
# heavily used types (conditions, actions, rules pages) get several queries per entry. The books' rules-prose
# sections ("rule-prose", see ``quota_group``) are a group of their own: 1,248 of them under the "rule" boost
# would take 27 % of the queries and crowd out the few rules pages (tables) that boost was set for; at 1.5
# they get about 15 % (they are 18 % of the entries), about 2.5 queries per section.
TYPE_BOOST = {
    "condition": 3.0, "action": 2.5, "rule": 3.0, "rule-prose": 1.5, "spell": 1.3, "creature": 1.3, "equipment": 1.0, "feat": 0.9,
    "trait": 1.0, "hazard": 2.0, "ancestry": 1.5, "heritage": 1.2, "class": 1.5, "background": 0.6,
    "archetype": 0.6, "class-feature": 0.6,
}
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])|\n+")
_WORDS = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d+")
_BOLD_LABEL = re.compile(r"\*\*([^*\n]{3,40})\*\*")
_TABLE_ROW = re.compile(r"^\|\s*([^|\n]{2,60}?)\s*\|", re.M)
# Bold labels that every stat block has: a query "<name> dex" teaches nothing.
_PLAIN_LABELS = frozenset(
    "trigger requirements price bulk usage perception hp ac str dex con int wis cha fort ref will skills languages "
    "damage melee strike ranged strike activate access prerequisites frequency effect cost".split()
) | {"melee strike", "ranged strike"}
_SUMMARY_PAGES = ("gm-screen--conditions", "gm-screen--basic-actions", "gm-screen--skill-actions", "gm-screen--traits")


class TrainQuery(BaseModel):
    """One generated query and the entry it was made from."""

    query: str
    positive: str
    generator: str
    masked_sentence: str | None = None  # the source sentence: entries containing it are not negatives
    also_relevant: list[str] = Field(default_factory=list)  # other entries that answer it (never negatives)
    mentioned: list[str] = Field(default_factory=list)  # entries the query names but does not ask about: first negatives
    context: str | None = None  # generator "context": how its context was told and found (training.negatives.context_written)


# ----- query generation ------------------------------------------------------------------------------
def _article(name: str) -> str:
    return "an" if name[:1].lower() in "aeiou" else "a"


def _sentences(node: Node) -> list[str]:
    text = clean_markdown(node.text)
    out = []
    for s in _SENT_SPLIT.split(text):
        s = s.strip(" -*")
        n = len(s.split())
        if 6 <= n <= 40 and not s.startswith(("Price", "Usage", "Perception", "Languages", "Skills", "Str ", "AC ")):
            out.append(s)
    return out


def _mask(sentence: str, node: Node) -> str:
    """The sentence with the entry's name (and its base name before a parenthesis) replaced."""
    names = {node.name, node.name.split(" (")[0]}
    out = sentence
    for name in sorted(names, key=len, reverse=True):
        if len(name) < 3:
            continue
        out = re.sub(rf"\b{re.escape(name)}(?:s|es)?\b", "it", out, flags=re.I)
    return out


def _keywords(text: str, rng: random.Random, exclude: set[str]) -> list[str]:
    words = [w for w in _WORDS.findall(text) if w.lower() not in STOP_WORDS and w.lower() not in exclude and len(w) > 2]
    if len(words) < 3:
        return []
    n = min(len(words), rng.randint(3, 7))
    start = rng.randint(0, max(0, len(words) - n * 2))
    window = words[start : start + n * 2]
    picked = sorted(rng.sample(range(len(window)), min(n, len(window))))
    return [window[i].lower() for i in picked]


def name_queries(node: Node, rng: random.Random) -> list[str]:
    """How people type an entry's name."""
    name = node.name
    base = name.split(" (")[0]
    tw = rng.choice(TYPE_WORDS.get(node.type, [node.type]))
    qs = [name, name.lower(), f"{name} {tw}", f"What does {name} do?", f"How does {name} work?",
          f"What does the {name} {tw} do?", f"Tell me about {name}", f"{base.lower()} {tw}"]
    if node.type == "creature":
        qs += [f"Stats for {_article(name)} {name.lower()}", f"{name} stat block", f"{name} monster"]
    if node.type == "condition":
        qs += [f"{name.lower()} {rng.randint(1, 4)}", f"What happens when a creature is {name.lower()}?"]
    if node.type == "rule":
        qs += [f"{name} table", f"rules for {name.lower()}"]
    if node.type in ("heritage", "ancestry", "class", "background", "archetype"):
        qs += [f"What does the {name} {tw} give?"]
    if node.level is not None and node.type in ("spell", "feat", "equipment"):
        qs += [f"{name} level {node.level}" if node.type != "spell" else f"rank {node.level} spell {name}"]
    for alias in node.aliases[:2]:
        qs += [alias, f"What is {alias}?"]
    return qs


def masked_queries(node: Node, rng: random.Random) -> list[tuple[str, str]]:
    """Sentences with the name masked, some turned into questions: (query, source sentence)."""
    out = []
    tw = rng.choice(TYPE_WORDS.get(node.type, [node.type]))
    for s in _sentences(node):
        m = _mask(s, node).rstrip(".")
        low = m[0].lower() + m[1:]
        templates = [
            m, f"Which {tw}: {low}?", f"Is there {_article(tw)} {tw} where {low}?", f"{m}. What {tw} is that?",
            f"What {tw} says {low}?", f"How does it work when {low}?",
        ]
        q = rng.choice(templates)
        if rng.random() < 0.35:  # drop some words: queries are rarely full sentences
            words = q.split()
            keep = [w for w in words if rng.random() > 0.3]
            q = " ".join(keep if len(keep) >= 4 else words)
        out.append((q, s))
    return out


def keyword_queries(node: Node, rng: random.Random) -> list[str]:
    """A few content words of one paragraph, optionally with a question word."""
    paras = [p for p in clean_markdown(node.text).split("\n") if len(p.split()) >= 5]
    exclude = {w.lower() for w in _WORDS.findall(node.name)}
    out = []
    for p in paras[:6]:
        words = _keywords(p, rng, exclude)
        if words:
            lead = rng.choice(["", "", "what ", "how ", f"which {rng.choice(TYPE_WORDS.get(node.type, ['entry']))} "])
            out.append(lead + " ".join(words))
    return out


def field_queries(node: Node, rng: random.Random) -> list[str]:
    """Templated questions about the entry's stat fields and labelled parts."""
    name, f, qs = node.name, node.fields, []
    if node.type == "creature":
        a = _article(name)
        qs += [f"How many Hit Points does {a} {name.lower()} have?", f"What is the AC of {a} {name.lower()}?",
               f"What are the saves of {a} {name.lower()}?", f"{name} perception and senses",
               f"What can {a} {name.lower()} attack with?", f"What languages does {a} {name.lower()} speak?"]
        for ability in (f.get("abilities") or [])[:4]:
            qs += [f"What does the {name.lower()}'s {ability} do?", f"{ability} ability of the {name.lower()}"]
        if f.get("hp") and re.search(r"[Ww]eakness|[Rr]esistance|[Ii]mmunit", str(f.get("hp"))):
            qs += [f"What is {a} {name.lower()} weak or resistant to?"]
        lore = clean_markdown(str(f.get("lore") or ""))
        for s in _SENT_SPLIT.split(lore)[:2]:
            if 6 <= len(s.split()) <= 35:
                qs.append(_mask(s, node))
    elif node.type == "equipment":
        qs += [f"How much does {_article(name)} {name} cost?", f"What level is {name}?", f"Price of {name}",
               f"What does {name} do?", f"How do I activate {name}?"]
    elif node.type == "spell":
        qs += [f"What does the {name} spell do?", f"What rank is {name}?", f"{name} heightened",
               f"What is the range and area of {name}?", f"What save does {name} use?"]
        if node.level is not None:
            first = _sentences(node)[:1]
            if first:
                qs.append(f"Which rank {node.level} spell {_mask(first[0], node).rstrip('.').lower()}?")
    elif node.type == "feat":
        qs += [f"What are the prerequisites for {name}?", f"What does the {name} feat do?", f"{name} feat"]
    elif node.type == "action":
        qs += [f"How does the {name} action work?", f"What are the requirements to {name}?",
               f"What skill do I roll to {name}?"]
    elif node.type == "rule":
        rows = [r.strip() for r in _TABLE_ROW.findall(node.text) if not set(r) <= set("-: ")]
        for row in rows[1:6]:
            qs += [row, f"What does the {name} table say about {row.lower()}?"]
    elif node.type in ("ancestry", "heritage", "class"):
        qs += [f"How many Hit Points does {_article(name)} {name} get?", f"What does the {name} {node.type} give?"]
    for label in _BOLD_LABEL.findall(node.text)[:6]:
        if label.lower() not in _PLAIN_LABELS:
            qs.append(f"{name} {label.lower()}")
    return qs


_OUTCOMES = {
    "critical success": ["critically succeed", "crit", "get a critical success"],
    "success": ["succeed", "succeed at it", "pull it off"],
    "failure": ["fail", "fail the save"],
    "critical failure": ["critically fail", "critically fail the save"],
}
_OUTCOME_LABEL = re.compile(r"^\W*\*\*(Critical Success|Success|Failure|Critical Failure)\*\*", re.I)
_LINK_SOURCES = ("action", "spell", "equipment", "hazard", "creature", "feat")


def link_queries(node: Node, rng: random.Random, conditions: dict[str, str]) -> list[tuple[str, str]]:
    """Questions about what an entry does to its target, answered by the condition its text links:
    (query, condition id). "If I Trip someone and succeed, what does the target end up with?" -> Prone.
    These teach the reranker that the linked condition is relevant to a question about the source."""
    out = []
    for para in node.text.split("\n"):
        low = para.lower()
        found = [cid for cname, cid in conditions.items() if re.search(rf"\b{re.escape(cname)}\b", low)]
        if not found:
            continue
        label = _OUTCOME_LABEL.match(para)
        outcome = rng.choice(_OUTCOMES[label.group(1).lower()]) if label else rng.choice(["use it", "get hit by it", "hit"])
        name = node.name
        templates = [
            f"If I {outcome} with {name}, what does the target end up with?",
            f"What condition does {name} leave a creature with when I {outcome}?",
            f"{name}: what happens to the target if I {outcome}?",
            f"The enemy is affected by {name}. What does that condition do?",
        ]
        if node.type == "creature":
            templates.append(f"The {name.lower()} uses its ability on my character. What state is she in?")
        out.append((rng.choice(templates), rng.choice(found)))
    return out


def quota_group(node: Node) -> str:
    """The entry's share of the query budget is set by this group: its type, except that a book's
    rules-prose section (``fields.hover_name`` False: ingest/aon_rules.py) is "rule-prose", not "rule"."""
    return "rule-prose" if node.type == "rule" and node.is_prose else node.type


def _type_quota(nodes: Sequence[Node], total: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    for n in nodes:
        counts[quota_group(n)] = counts.get(quota_group(n), 0) + 1
    weight = {t: math.sqrt(c) * TYPE_BOOST.get(t, 1.0) for t, c in counts.items()}
    s = sum(weight.values())
    return {t: max(1, round(total * w / s)) for t, w in weight.items()}


def generate_queries(nodes: Sequence[Node], n_queries: int, seed: int = 13) -> list[TrainQuery]:
    """``n_queries`` training queries spread over entry types (see ``TYPE_BOOST``), reproducible by ``seed``."""
    rng = random.Random(seed)
    by_type: dict[str, list[Node]] = {}
    for n in nodes:
        if n.kind == "entry" and n.node_id.rsplit(":", 1)[-1] not in _SUMMARY_PAGES:
            by_type.setdefault(quota_group(n), []).append(n)
    quota = _type_quota([n for ns in by_type.values() for n in ns], n_queries)
    conditions = {n.name.lower(): n.node_id for n in by_type.get("condition", []) if len(n.name) > 3}
    gens = ["name", "masked", "masked", "masked", "keywords", "field", "field"]
    out: list[TrainQuery] = []
    for etype in sorted(by_type):
        pool = sorted(by_type[etype], key=lambda n: n.node_id)
        want = quota.get(etype, 0)
        tries, max_tries = 0, want * 6
        while want > 0 and tries < max_tries:
            tries += 1
            node = rng.choice(pool)
            gen = rng.choice(gens + (["link"] if etype in _LINK_SOURCES else []))
            if gen == "link":
                pairs = link_queries(node, rng, conditions)
                if not pairs:
                    continue
                q, target = rng.choice(pairs)
                out.append(TrainQuery(query=q, positive=target, generator=gen, also_relevant=[node.node_id]))
                want -= 1
                continue
            cands: list[tuple[str, str | None]]
            if gen == "name":
                cands = [(q, None) for q in name_queries(node, rng)]
            elif gen == "masked":
                cands = list(masked_queries(node, rng))
            elif gen == "keywords":
                cands = [(q, None) for q in keyword_queries(node, rng)]
            else:
                cands = [(q, None) for q in field_queries(node, rng)]
            if not cands:
                continue
            q, sentence = rng.choice(cands)
            q = re.sub(r"\s+", " ", q).strip()
            if len(q) < 3:
                continue
            out.append(TrainQuery(query=q, positive=node.node_id, generator=gen, masked_sentence=sentence))
            want -= 1
    rng.shuffle(out)
    # every type gets at least one query, so a small request can overshoot: keep exactly n_queries
    return out[:n_queries]


def written_queries(pairs: Sequence[tuple[str, str]], nodes: Mapping[str, Node], limit: int, seed: int = 13) -> list[TrainQuery]:
    """Training queries from questions written for entries (``(node_id, question)``, e.g. the question
    index's data files: a GM describing a situation the entry answers, without its name). At most
    ``limit``, drawn reproducibly by ``seed``; questions of entries the store lacks are skipped."""
    rows = [(nid, re.sub(r"\s+", " ", q).strip()) for nid, q in pairs if nid in nodes]
    rows = [(nid, q) for nid, q in dict.fromkeys(rows) if len(q) >= 3]
    random.Random(seed + 7).shuffle(rows)
    return [TrainQuery(query=q, positive=nid, generator="written") for nid, q in rows[: max(0, limit)]]
