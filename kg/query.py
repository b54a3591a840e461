"""Reading a search query before retrieval: names, legacy names, action verbs and asked-for types.

- **Names** (``kg.names.NameIndex``): an entry named in the query is a strong lead. When the name is
  the whole query ("Bless", "Stats for an ogre warrior", "flourish trait") it is ``exact``; inside a
  longer question it is a ``hint``. A class or ancestry after a possessive or "the" ("my fighter",
  "the rogue") names a character, not the rules entry: ``character``, demoted.
- **Legacy names** are rewritten to the Remaster name ("flat-footed" -> "Off-Guard") so BM25, the
  vectors and the reranker all read the current term.
- **Action verbs**: one-word actions used as inflected verbs ("Trips", "Feints", "Demoralizing",
  "stepping") are ``verb`` hints; the name index matches names only in their base forms.
- **What a long question asks** (``condense``): the question sentences of a forum post within a token budget,
  for the cross-encoder, whose short window a whole post would fill (the first stage reads the whole post).
- **Asked-for type and rank**: "Which condition ...", "Is there a spell ...", "a 3rd-rank spell" say
  what kind of entry answers; matching entries get a small boost.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from pydantic import BaseModel, Field

from gmprep.kg.models import Node

_TYPE_WORDS = {
    "spell": "spell", "cantrip": "spell", "ritual": "spell", "condition": "condition", "feat": "feat",
    "trait": "trait", "heritage": "heritage", "ancestry": "ancestry", "background": "background",
    "archetype": "archetype", "hazard": "hazard", "trap": "hazard", "rune": "equipment", "item": "equipment",
    "potion": "equipment", "elixir": "equipment", "bomb": "equipment",
}
_ASKS_TYPE = re.compile(
    r"\b(?:which|what|is there (?:a|an|any|some)|are there(?: any)?|any|name (?:a|an|the)|looking for (?:a|an))"
    r"((?:\s+[\w'\-]+){0,4}?)\s+(" + "|".join(_TYPE_WORDS) + r")s?\b",
    re.I,
)
_RANK = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)[- ]rank\b|\brank[- ](\d{1,2})\b", re.I)
_CHARACTER_TYPES = {"class", "ancestry", "heritage", "background", "archetype"}
_CHARACTER_LEAD = re.compile(r"\b(?:my|our|your|his|her|their|the)\s+$", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
# Words around a name that do not change what is asked ("Stats for an ogre warrior", "Bless spell").
_FRAME = frozenset(
    """what whats what's does do did is are the a an of for about how work works tell me stats stat block
    statblock entry rules rule table trait traits spell spells cantrip feat condition action reaction activity
    creature monster item hazard trap ancestry heritage background class archetype give gives say says mean
    means show look up lookup define definition explain it its""".split()
)


class QueryAnalysis(BaseModel):
    """What the query says before any retrieval."""

    text: str  # the query with legacy names replaced by their Remaster names
    # ``text`` with the words that name a character ("the wizard", "my goblin") replaced by "someone":
    # what seeds and the reranker read, so a participant's class or ancestry does not become the topic
    # (the class entry itself stays a demoted ``character`` lead)
    situation: str | None = None
    named: dict[str, str] = Field(default_factory=dict)  # node_id -> exact | hint | verb | character
    # where ``text`` names each entry of ``named`` (start, end): what kg.hint_share reads to tell the name a
    # question asks about from one told in passing
    spans: dict[str, list[tuple[int, int]]] = Field(default_factory=dict)
    types: list[str] = Field(default_factory=list)  # entry types the question asks for
    rank: int | None = None  # spell rank the question names


def _inflections(word: str) -> set[str]:
    """Verb forms of a one-word action name: trip -> trips, tripped, tripping; demoralize -> demoralizing."""
    w = word.lower()
    forms = {w + "s", w + "es", w + "ed", w + "ing"}
    if w.endswith("e"):
        forms |= {w + "d", w[:-1] + "ing"}
    if len(w) >= 3 and w[-1] not in "aeiouwxy" and w[-2] in "aeiou" and w[-3] not in "aeiou":
        forms |= {w + w[-1] + "ed", w + w[-1] + "ing"}  # step -> stepping, trip -> tripped
    return forms - {w}


def verb_index(nodes: Iterable[Node]) -> dict[str, str]:
    """``inflected form -> action id`` for the one-word action entries (corpus first)."""
    out: dict[str, str] = {}
    for node in sorted(nodes, key=lambda n: (not n.origin.startswith("corpus:"), n.node_id)):
        if node.kind != "entry" or node.type != "action" or " " in node.name.strip():
            continue
        for form in _inflections(node.name.strip()):
            out.setdefault(form, node.node_id)
    return out


_CLASS_FEATURE = "class-feature:"


def _owner(node_id: str) -> str:
    """The class whose feature ``node_id`` is ("fighter" for ``pf2e:class-feature:fighter--weapon-specialization``)."""
    return node_id.split(_CLASS_FEATURE, 1)[1].split("--", 1)[0] if _CLASS_FEATURE in node_id else ""


def _class_own(m, query: str):
    """Mention ``m`` as the named class's own feature: a feature name several classes share ("Weapon
    Specialization", "Reflex Expertise") is the class's the question names ("my fighter"), when it has one; the
    index's first pick (by id) otherwise."""
    if not _owner(m.node_id) or not m.alternatives:
        return m
    words = {w.lower() for w in _WORD.findall(query)}
    words |= {w[:-1] for w in words if w.endswith("s")}
    if _owner(m.node_id) in words:
        return m
    for alt in m.alternatives:
        if _owner(alt) in words:
            return m.model_copy(update={"node_id": alt, "alternatives": [m.node_id, *(a for a in m.alternatives
                                                                                       if a != alt)]})
    return m


def analyze(query: str, names, verbs: dict[str, str], node_types: dict[str, str],
            class_own: bool = False, spell_cues: bool = False, initials: bool = False) -> QueryAnalysis:
    """Names, legacy rewrites, verbs and asked-for type/rank of ``query``.

    ``names`` is a ``kg.names.NameIndex``, ``verbs`` from ``verb_index``, ``node_types`` maps entry id
    to entry type (to recognise class/ancestry mentions that name a character). ``class_own``: a feature name several
    classes share is the named class's (``search.class_own_features``). ``spell_cues``: "cast heal" names the Heal
    spell though "heal" is an everyday word (``search.spell_cues``). ``initials``: "RK", "AoO", "LoH" name their entries
    and are read as those names, as a legacy name is (``search.initials``)."""
    mentions = names.find_mentions(query, titles=True, spell_cues=spell_cues, initials=initials)
    if class_own:
        mentions = [_class_own(m, query) for m in mentions]
    rewritten, shift = query, 0
    edits: list[tuple[int, int]] = []  # (end in query, shift after it) of each legacy rewrite
    for m in mentions:
        if m.legacy_name or m.form == "acronym":  # initials read as the name they stand for ("LoH": Lay on Hands)
            rewritten = rewritten[: m.start + shift] + m.name + rewritten[m.end + shift :]
            shift += len(m.name) - (m.end - m.start)
            edits.append((m.end, shift))

    def moved(a: int, b: int) -> tuple[int, int]:
        """``query``'s span (a, b) in ``rewritten``."""
        before = [d for end, d in edits if end <= a]
        inside = [d for end, d in edits if a < end <= b]
        da = before[-1] if before else 0
        return a + da, b + (inside[-1] if inside else da)
    rest = query
    for m in sorted(mentions, key=lambda m: -m.start):
        rest = rest[: m.start] + " " + rest[m.end :]
    leftover = [w for w in _WORD.findall(rest.lower()) if w not in _FRAME]
    exact = len(mentions) == 1 and not leftover
    named: dict[str, str] = {}
    spans: dict[str, list[tuple[int, int]]] = {}
    characters: list[tuple[int, int]] = []
    for m in mentions:
        how = "exact" if exact else "hint"
        if not exact and node_types.get(m.node_id) in _CHARACTER_TYPES and _CHARACTER_LEAD.search(query[: m.start]):
            nxt = query[m.end :].lstrip().lower()
            possessive = m.text.lower().endswith(("'s", "\u2019s")) or nxt.startswith(("'s", "\u2019s"))
            if not possessive and not nxt.startswith(("class", "ancestry", "heritage", "background", "archetype")):
                how = "character"
                if not m.legacy_name:
                    characters.append((m.start, m.end))
        if named.get(m.node_id) not in ("exact", "hint"):
            named[m.node_id] = how
        spans.setdefault(m.node_id, []).append(moved(m.start, m.end))
    covered = [(m.start, m.end) for m in mentions]
    for tok in _WORD.finditer(query):
        if any(a <= tok.start() < b for a, b in covered):
            continue
        nid = verbs.get(tok.group(0).lower())
        if nid and named.get(nid, "verb") == "verb":
            named[nid] = "verb"
            spans.setdefault(nid, []).append(moved(tok.start(), tok.end()))
    types: list[str] = []
    for m in _ASKS_TYPE.finditer(query):
        t = _TYPE_WORDS[m.group(2).lower()]
        if t not in types:
            types.append(t)
    rank = None
    r = _RANK.search(query)
    if r and "spell" in types:
        rank = int(r.group(1) or r.group(2))
    situation = None
    if characters and not any(m.legacy_name or m.form == "acronym" for m in mentions):
        situation = query
        for a, b in sorted(characters, reverse=True):
            situation = situation[:a] + "someone" + situation[b:]
    return QueryAnalysis(text=rewritten, named=named, spans=spans, types=types, rank=rank, situation=situation)


_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=\S)|\n+")


# An abbreviation's full stop ("a 5 ft. step", "(p. 412)", "e.g. a shield") ends no sentence when the text goes on in
# lower case or with a digit
_ABBREVIATION = re.compile(r"(?:^|[\s(])(?:ft|in|lbs?|p|pp|pg|e\.g|i\.e|etc|vs|cf|approx)\.$", re.IGNORECASE)
_GOES_ON = re.compile(r"[a-z0-9(]")


def sentences(query: str) -> list[str]:
    """The question's sentences (split after ".", "?", "!" and at line breaks, not after an abbreviation the text
    goes on from), stripped."""
    out: list[str] = []
    for piece in _SENTENCE.split(query.strip()):
        piece = piece.strip()
        if not piece:
            continue
        if out and _ABBREVIATION.search(out[-1]) and _GOES_ON.match(piece):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def asking(sents: list[str]) -> list[int]:
    """Which of ``sents`` ask: those ending in "?", or the last one when none does."""
    return [i for i, s in enumerate(sents) if s.endswith("?")] or ([len(sents) - 1] if sents else [])


def condense(query: str, budget: int, count: Callable[[str], int]) -> str:
    """What a long question asks, in at most ``budget`` tokens as ``count`` counts them: its sentences ending
    in "?" (the last sentence when none does), then the sentences just before the first of them (what "that"
    refers to), then the rest, each whole sentence while it fits, in the question's order. A question within
    the budget is returned as it is; a single asking sentence over it is kept whole (the window cuts it)."""
    if budget <= 0 or count(query) <= budget:
        return query
    sents = sentences(query)
    asks = asking(sents)
    order = asks + list(range(asks[0] - 1, -1, -1)) + [i for i in range(asks[0] + 1, len(sents)) if i not in asks]
    kept: list[int] = []
    used = 0
    for i in order:
        n = count(sents[i])
        if used + n <= budget or not kept:
            kept.append(i)
            used += n
    return " ".join(sents[i] for i in sorted(kept))
