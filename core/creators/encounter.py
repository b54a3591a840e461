"""Encounters: parse what a GM writes, resolve creatures, XP and threat (GM Core p. 75), build options.

Forms read (``parse_encounter`` reads one; ``gmprep.server.blocks`` finds them in a note from markdown-it tokens):

* one line: ``Encounter (4 PCs, level 3): 2 goblin warriors, goblin war chanter, elite wolf``
* a fenced block ```` ```encounter ```` with an optional ``party: 4 PCs, level 3`` line and items
* a heading containing "Encounter" followed by a list (``- 2 goblin warriors``)

An item is ``[count] [elite|weak] name`` (count also as ``2x``, ``x2``, ``(x2)``, or a number word).
"""

from __future__ import annotations

import hashlib
import itertools
import re

from gmprep.common.errors import GmprepError
from gmprep.common.text import STOP_WORDS
from gmprep.core.creators import concept, groups, tables
from gmprep.core.creators.models import (
    THREATS,
    Citation,
    EncounterCreature,
    EncounterLine,
    EncounterReport,
    EncounterSpec,
    Threat,
    UnknownCreature,
)

_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                 "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_HEADER = re.compile(r"\bencounter\b[^\n(:]*?(?:\(([^)\n]*)\))?\s*\**\s*:", re.I)
_PARTY_LINE = re.compile(r"^\s*(?:[-*+]\s+)?\**party\**\s*:\s*(.+)$", re.I)
_NUM_WORD = r"(\d+|" + "|".join(w for w in _NUMBER_WORDS if len(w) > 2) + r")"
_PCS = r"(?:pcs?|players?|characters?|heroes|adventurers|party members)\b"
# "4 level-3 PCs" / "four 3rd-level characters": size and level in one phrase
_SIZE_LEVEL = re.compile(_NUM_WORD + r"\s+(?:(?:level|lvl)[- ]?(\d+)|(\d+)(?:st|nd|rd|th)?[- ]level)\s+" + _PCS, re.I)
_SIZE = re.compile(_NUM_WORD + r"\s*" + _PCS + r"|party of " + _NUM_WORD, re.I)
_LEVEL = re.compile(r"\b(?:level|lvl|lv)\s*(\d+)\b|\b(\d+)(?:st|nd|rd|th)?[- ]level\b", re.I)
_BULLET = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)(.*)$")
_ITEM = re.compile(
    r"^(?:(?P<n1>\d+|" + "|".join(_NUMBER_WORDS) + r")\s*[x×]?\s+)?(?:(?P<adj>elite|weak)\s+)?(?P<name>.+?)"
    r"(?:\s*(?:[x×]\s*(?P<n2>\d+)|\(\s*[x×]?\s*(?P<n3>\d+)\s*\)))?$",
    re.I,
)
# a level written in parentheses: "(level 2)", "(lvl 2)", "(creature 2)" (a statblock's heading), with other words
# beside it ("(level 2, NPC Core p. 20)")
_LEVEL_NOTE = re.compile(r"\s*\((?:[^()]*?[,;:]\s*)?(?:level|lvl|lv|creature)(?:\s+|-(?=\d))?(-?\d+)\b[^()]*\)", re.I)
# ... or around the name: "level-2 bandits", "2nd-level bandits", "bandits lvl 2"
_LEVEL_AROUND = re.compile(
    r"^(?:(?:level|lvl)[- ]?(?P<l1>-?\d+)|(?P<l2>\d+)(?:st|nd|rd|th)[- ]level)\s+(?P<rest>.+)$"
    r"|^(?P<head>.+?)\s+(?:level|lvl)\s*(?P<l3>-?\d+)$",
    re.I,
)
_MARKUP = re.compile(r"\[\[([^\]|]+)(?:\|[^\]]*)?\]\]|\[([^\]]+)\]\([^)]*\)|[*_`]")


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS[word.lower()]


def _party(text: str, spec: EncounterSpec) -> None:
    if m := _SIZE_LEVEL.search(text):
        if spec.party_size is None:
            spec.party_size = _count(m.group(1))
        if spec.party_level is None:
            spec.party_level = int(m.group(2) or m.group(3))
    if spec.party_size is None and (m := _SIZE.search(text)):
        spec.party_size = _count(m.group(1) or m.group(2))
    if spec.party_level is None and (m := _LEVEL.search(text)):
        spec.party_level = int(m.group(1) or m.group(2))


_SEPARATOR = re.compile(r"[,;]|\s+and\s+|\s+&\s+", re.I)


def _outside_parentheses(segment: str) -> list[bool]:
    """Per character of ``segment``: whether it is outside any parentheses ("bandit (level 2, NPC Core)" is one item)."""
    out, depth = [], 0
    for ch in segment:
        if ch == "(":
            depth += 1
        out.append(depth == 0)
        if ch == ")" and depth:
            depth -= 1
    return out


def _items(segment: str, base: int, spec: EncounterSpec) -> None:
    """Split ``segment`` (at offset ``base`` of the parsed text) on commas, semicolons and "and" into items."""
    outside = _outside_parentheses(segment)
    bounds = [(m.start(), m.end()) for m in _SEPARATOR.finditer(segment) if outside[m.start()]]
    bounds.append((len(segment), len(segment)))
    piece_start = 0
    for piece_end, next_start in bounds:
        raw = segment[piece_start:piece_end]
        text = raw.strip()
        if text and (line := _item(text, base + piece_start + len(raw) - len(raw.lstrip()))):
            spec.lines.append(line)
        piece_start = next_start


def _written_level(clean: str) -> tuple[str, int | None]:
    """The level a GM wrote for a creature Monster Core may not have, and the item without it: "bandit (level 2)",
    "(lvl 2)", "(creature 2, NPC Core)" as its statblock heads it, "level-2 bandits", "2nd-level bandits", "bandit
    lvl 2"."""
    if m := _LEVEL_NOTE.search(clean):
        return (clean[: m.start()] + clean[m.end():]).strip(), int(m.group(1))
    return clean, None


def _item(text: str, start: int) -> EncounterLine | None:
    clean = _MARKUP.sub(lambda m: m.group(1) or m.group(2) or "", text).strip().rstrip(".")
    clean = re.sub(r"^the\s+", "", clean, flags=re.I)
    clean, level = _written_level(clean)
    m = _ITEM.match(clean)
    if not m or not m.group("name").strip():
        return None
    name = m.group("name").strip()
    if level is None and (lm := _LEVEL_AROUND.match(name)):
        name, level = (lm.group("rest") or lm.group("head")).strip(), int(lm.group("l1") or lm.group("l2") or lm.group("l3"))
    n = m.group("n1") or m.group("n2") or m.group("n3")
    count = _NUMBER_WORDS.get(n.lower(), None) if n and not n.isdigit() else (int(n) if n else 1)
    adj = m.group("adj").lower() if m.group("adj") else None
    if adj is None and (am := re.match(r"(elite|weak)\s+(.+)$", name, re.I)):  # "level-2 elite bandits"
        adj, name = am.group(1).lower(), am.group(2)
    return EncounterLine(text=text, name=name, count=count or 1, adjustment=adj, level=level,
                         start=start, end=start + len(text))


def parse_encounter(text: str) -> EncounterSpec:
    """Parse one encounter's text: header/party line, then items (offsets relative to ``text``)."""
    spec = EncounterSpec()
    pos = 0
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        at = pos
        pos += len(raw)
        stripped = line.strip()
        if not stripped or stripped.startswith(("```", "~~~", "<!--")):
            continue
        if stripped.startswith("#"):
            _party(stripped, spec)
            continue
        if m := _PARTY_LINE.match(line):
            _party(m.group(1), spec)
            continue
        if m := _HEADER.search(line):
            if m.group(1):
                _party(m.group(1), spec)
            _party(line[: m.end()], spec)  # "Encounter for four 3rd-level PCs:" states the party before the colon
            _items(line[m.end():], at + m.end(), spec)
            continue
        if m := _BULLET.match(line):
            _items(m.group(2), at + len(m.group(1)), spec)
            continue
        _items(line, at, spec)
    return spec


def _cite_entry(node) -> Citation:
    return Citation(id=node.source_id or node.node_id, name=node.name, book=node.book or "", page=node.page)


def unknown_message(u: UnknownCreature) -> str:
    """What to say of a creature no Monster Core entry is named: the closest names, and how to count one from another
    book (the CLI's error, the editor's diagnostic, the report's warning)."""
    sugg = f" (did you mean {', '.join(u.suggestions)}?)" if u.suggestions else ""
    return f"unknown creature '{u.text}'{sugg}; from another book? write its level: '{u.text} (level N)'"


def check_party(size: int, level: int) -> None:
    """A GmprepError unless the encounter tables cover a party of ``size`` characters of ``level``."""
    if not 1 <= size <= 20 or not -1 <= level <= 25:
        raise GmprepError(f"party of {size} at level {level} is outside what the encounter tables cover")


def _known_level(name: str, known: dict[str, int]) -> int | None:
    """The level of a creature the note stats itself (``statblock.note_creatures``), by its name or plural."""
    from gmprep.kg.names import name_key

    key = " ".join(name_key(name))
    for k in (key, key[:-1] if key.endswith("s") else None, key[:-2] if key.endswith("es") else None):
        if k and k in known:
            return known[k]
    return None


def _hazard_line(line: EncounterLine, hazard, party_level: int, resolver, cites: dict[str, Citation],
                 explanation: list[str], warnings: list[str]) -> EncounterCreature:
    """A GM Core hazard in an encounter, counted as GM Core's Hazard Experience says: "The XP for a complex hazard is
    equal to the XP for a monster of the same level, and the XP for a simple hazard is one-fifth of that" (a level the
    GM wrote wins, as for a creature; elite and weak are creature adjustments, not applied)."""
    complex_ = bool(hazard.fields.get("complex"))
    lvl = line.level if line.level is not None else hazard.level
    xp_each = tables.creature_xp(lvl, party_level) // (1 if complex_ else 5)
    cites.setdefault(hazard.node_id, _cite_entry(hazard))
    rule = getattr(resolver, "hazard_xp_entry", None)
    if rule is not None:
        cites.setdefault(rule.node_id, _cite_entry(rule))
    if line.adjustment:
        warnings.append(f"{hazard.name} is a hazard: {line.adjustment} is a creature adjustment, not applied")
    delta = lvl - party_level
    rel = "party level" if delta == 0 else f"party level {'+' if delta > 0 else '-'} {abs(delta)}"
    kind = "complex" if complex_ else "simple"
    explanation.append(f"{line.count} × {hazard.name} ({kind} hazard, level {lvl} = {rel}): {xp_each} XP each"
                       + ("" if complex_ else ", a fifth of a creature's (GM Core, Hazard Experience)")
                       + f" = {xp_each * line.count} XP")
    if delta > tables.XP_MAX_DELTA:
        warnings.append(f"{hazard.name} (level {lvl}) is more than 4 levels above the party (level {party_level}); "
                        f"the XP table stops at party level + 4, counted as {xp_each} XP")
    elif delta < tables.XP_MIN_DELTA:
        warnings.append(f"{hazard.name} (level {lvl}) is more than 4 levels below the party (level {party_level}): "
                        "0 XP")
    return EncounterCreature(text=line.text, id=hazard.node_id, name=hazard.name, count=line.count, level=lvl,
                             base_level=lvl, xp_each=xp_each, book=hazard.book, page=hazard.page, start=line.start,
                             end=line.end, hazard=kind)


def evaluate_encounter(spec: EncounterSpec, resolver, party_size: int | None = None,
                       party_level: int | None = None, known: dict[str, int] | None = None) -> EncounterReport:
    """XP per creature, total, threat, budgets and warnings for the party (given here, else in ``spec``). ``known``:
    the creatures the note stats itself (name key -> level), counted at their statblock's level when Monster Core has
    no entry of the name and no level is written beside it."""
    size = party_size if party_size is not None else spec.party_size
    level = party_level if party_level is not None else spec.party_level
    if size is None or level is None:
        raise GmprepError("the party size and level are needed: write 'Encounter (4 PCs, level 3): ...' or give --party and --level")
    check_party(size, level)
    budget = tables.encounter_budget(size)
    creatures: list[EncounterCreature] = []
    unknown: list[UnknownCreature] = []
    warnings: list[str] = []
    cites: dict[str, Citation] = {c.id: c for c in (tables.budget_citation(), tables.xp_citation())}
    explanation = [
        f"Budget for {size} character{'s' if size != 1 else ''} ({tables.budget_citation().label()}): "
        + ", ".join(f"{t} {budget[t]}" for t in THREATS)
        + (f" (4-character budget {'+' if size > 4 else '-'} the character adjustment × {abs(size - 4)})" if size != 4 else "")
    ]
    for line in spec.lines:
        node = resolver.resolve(line.name)
        if node is not None and node.level is None:
            node = None
        hazard = resolver.resolve_hazard(line.name) if node is None and hasattr(resolver, "resolve_hazard") else None
        if hazard is not None:
            creatures.append(_hazard_line(line, hazard, level, resolver, cites, explanation, warnings))
            continue
        own = None
        if node is None and line.level is None and known:
            own = _known_level(line.name, known)
            if own is not None:
                line = line.model_copy(update={"level": own})
        if line.level is not None and not tables.CREATURE_MIN_LEVEL <= line.level <= tables.CREATURE_MAX_LEVEL:
            warnings.append(f"'{line.name}': level {line.level} is outside creature levels "
                            f"{tables.CREATURE_MIN_LEVEL} to {tables.CREATURE_MAX_LEVEL}; not counted")
            continue
        if node is None and line.level is None:
            sugg = resolver.suggest(line.name)
            unknown.append(UnknownCreature(text=line.name, suggestions=sugg, start=line.start, end=line.end))
            warnings.append(unknown_message(unknown[-1]))
            continue
        # the level the GM wrote wins over the entry's: a creature scaled to the table, or one Monster Core lacks
        base = line.level if line.level is not None else node.level
        lvl = tables.adjusted_level(base, line.adjustment)
        xp_each = tables.creature_xp(lvl, level)
        delta = lvl - level
        if line.adjustment:
            cites.setdefault(tables.adjustments_citation().id, tables.adjustments_citation())
        if node is not None:
            cites.setdefault(node.node_id, _cite_entry(node))
            if line.level is not None and line.level != node.level:
                warnings.append(f"{node.name} is level {node.level} in Monster Core; counted at level {line.level} "
                                "as written")
        name = node.name if node is not None else line.name
        creatures.append(EncounterCreature(
            text=line.text, id=node.node_id if node is not None else None, name=name, count=line.count, level=lvl,
            base_level=base, adjustment=line.adjustment, xp_each=xp_each, book=node.book if node is not None else None,
            page=node.page if node is not None else None, start=line.start, end=line.end,
        ))
        adj = f"{line.adjustment} (level {base} -> {lvl}, {tables.adjustments_citation().label()}) " if line.adjustment else ""
        rel = "party level" if delta == 0 else f"party level {'+' if delta > 0 else '-'} {abs(delta)}"
        written = "" if node is not None else (", this note's statblock" if own is not None
                                               else ", as written: not a Monster Core creature")
        explanation.append(f"{line.count} × {adj}{name} (level {lvl} = {rel}{written}): {xp_each} XP each = "
                           f"{xp_each * line.count} XP")
        if delta > tables.XP_MAX_DELTA:
            warnings.append(f"{name} (level {lvl}) is more than 4 levels above the party (level {level}); "
                            f"the XP table stops at party level + 4, counted as {xp_each} XP")
        elif delta < tables.XP_MIN_DELTA:
            warnings.append(f"{name} (level {lvl}) is more than 4 levels below the party (level {level}): 0 XP")
    xp = sum(c.xp_each * c.count for c in creatures)
    threat = tables.threat_for_xp(xp, budget)
    if xp > budget["extreme"]:
        warnings.append(f"{xp} XP is above the extreme budget ({budget['extreme']}) for {size} characters")
    explanation.append(f"Total {xp} XP -> {threat} (the lowest threat whose budget the total does not exceed, "
                       f"{tables.budget_citation().label()})")
    return EncounterReport(
        party_size=size, party_level=level, xp=xp, threat=threat, budget=budget, creatures=creatures,
        warnings=warnings, unknown=unknown, citations=list(cites.values()), explanation=explanation,
    )


# ---- building ---------------------------------------------------------------------------------------
def _forms(word: str) -> set[str]:
    w = word.lower().strip()
    out = {w}
    if w.endswith("ies"):
        out.add(w[:-3] + "y")
    elif w.endswith("s") and len(w) > 3:
        out.add(w[:-1])
    else:
        out |= {w + "s", w + "es"}
    return out


def _relevance(node, words: list[str], resolver=None, body: bool = True) -> int:
    """2 per word that is a trait or in the name, 1 per word only found in the text or lore. A word that names a person
    (a background's or class's: "guard", "sailor") is in the name of people only (``CreatureResolver.people``): a
    city guard is no Guard Dog, a sailor no Drowned Sailor."""
    score = 0
    traits = {t.lower() for t in node.traits}
    name = set(re.findall(r"[a-z]+", node.name.lower()))
    if resolver is not None and getattr(resolver, "ancestries", None) and node.node_id not in resolver.people:
        name -= resolver.person_words
    text = set(re.findall(r"[a-z]+", (node.text + " " + str(node.fields.get("lore", ""))).lower())) if body else set()
    for w in words:
        f = _forms(w)
        if f & traits or f & name:
            score += 2
        elif f & text:
            score += 1
    return score


# How close in meaning (``concept.closeness``) the best creature must be for a theme no creature's name or traits share
# to count as matched. On 20 themes written for this, those Monster Core has creatures for scored 0.44-0.69 at their
# best ("haunted crypt" 0.49, "orc raiders" 0.51, "swamp" 0.56) and those it has none for 0.30-0.39 ("bandits on the
# road" 0.31: a Zombie Brute; "pirates", "smugglers", "thieves guild", "assassins"); docs/creators.md.
THEME_FLOOR = 0.40


def _theme_words(words: list[str]) -> list[str]:
    """ "haunted crypt" from one --traits value is two words, as the chat's request gives them."""
    return [w for v in words for w in v.strip().lower().split() if w and w not in STOP_WORDS]


def _fits(party_level: int, resolver) -> list:
    """The creatures whose level a party of ``party_level`` can meet, with their XP."""
    out = []
    for node in resolver.creatures():
        if node.level is None or not tables.XP_MIN_DELTA <= node.level - party_level <= tables.XP_MAX_DELTA:
            continue
        out.append((node, tables.creature_xp(node.level, party_level)))
    return out


def _theme(words: list[str], nodes: list, resolver=None, people_only: bool = False) -> tuple[list[int], list[float], bool]:
    """Each creature's shared words (``_relevance``) and closeness in meaning to the theme, and whether anything matches
    it: a creature with a theme word in its name or traits, or one at least ``THEME_FLOOR`` close. When nothing does,
    the closeness still orders the creatures (a Reefclaw and a Vordine for pirates; ordering by name gave the level's
    first creatures, an Aapoph Serpentfolk for every such theme), and the builders say the theme is not matched."""
    if not words:
        return [0] * len(nodes), [0.0] * len(nodes), True
    shared = [_relevance(node, words, resolver) for node in nodes]
    close = concept.closeness(" ".join(words), nodes)
    # ``people_only``: a theme that is one phrase naming people ("city guard ambush") is close to people only, not to
    # a Guard Dog its words call up
    near = [c for c, node in zip(close, nodes, strict=True)
            if not people_only or resolver is None or node.node_id in resolver.people]
    # matched by a word in a creature's name or traits, not by two found in stat blocks' text ("ambush" and "guard" of
    # "city guard ambush" are in a Crocodile's: Aquatic Ambush, off-guard)
    named = any(_relevance(node, words, resolver, body=False) >= 2 for node, r in zip(nodes, shared, strict=True) if r >= 2)
    return shared, close, named or not any(close) or max(near, default=0.0) >= THEME_FLOOR


def unmatched_theme(party_level: int, words: list[str], resolver,
                    options: list[EncounterReport] | None = None) -> str | None:
    """The line to say when no Monster Core creature a party of ``party_level`` can meet matches the theme (``_theme``):
    the options (``build_encounters``') are then the theme's people in GM Core's quick groups, with how to build the
    first's leader, and creatures that fit the budget, not the theme; with no theme, how the options are ordered.
    None when it matches."""
    # a hazard asked for ("with a trap") is no theme of creatures (``build_encounters`` places one of the held hazards)
    words = [w for w in words if not (w.strip() and all(t in _HAZARD_PHRASE for t in _theme_words([w])))]
    theme = ", ".join(v.strip() for v in words if v.strip())
    words = _theme_words(words)
    built = [max((c for c in r.creatures if not c.id), key=lambda c: c.level) for r in options or []
             if r.structure and any(not c.id for c in r.creatures)]
    if not words:
        # the options are then the first creatures of fitting levels in name order, which a GM should know
        return ("No theme was given: the options are Monster Core creatures that fit the budget, common ones first in "
                "an order that changes with the party's level; name a theme (undead, a swamp, bandits) to match "
                "one.") if options else None
    nodes = [node for node, _ in _fits(party_level, resolver)]
    if _theme(words, nodes, resolver, _one_people_phrase(theme, resolver))[2]:
        if not built:
            return None
        # the theme's creatures are Monster Core's, its people are not ("cultists in the sewer")
        people = _people_phrase(_phrases(theme), nodes, resolver) or built[0].name
        return (f"Monster Core has no “{people}”: the options built on GM Core's Quick Adventure Groups have them, "
                f"with the theme's creatures where Monster Core has them at the groups' levels; build them with "
                f"`gmprep creature \"{built[0].name}\" --level {built[0].base_level}`.")
    if built:
        name, level = built[0].name, built[0].base_level
        return (f"No Monster Core creature of these levels is close to “{theme}”. The first options are GM Core's Quick "
                f"Adventure Groups of them at the levels the groups give: build each with `gmprep creature`, e.g. "
                f"`gmprep creature \"{name}\" --level {level}`"
                + ("; any further option fits the budget, not the theme." if len(built) < len(options or []) else "."))
    if not _is_people(next(iter(_phrases(theme)), ""), resolver):
        return (f"No Monster Core creature of these levels is close to “{theme}”: the options below fit the budget, not "
                f"the theme.")
    return (f"No Monster Core creature of these levels is close to “{theme}”: the options below fit the budget, not the "
            f"theme. Monster Core has few human foes; build them yourself, e.g. "
            f"`gmprep creature \"{theme}\" --level {party_level}`.")


def _phrases(theme: str) -> list[str]:
    """The theme's phrases: its words between commas and small words ("cultists in the sewer" -> cultists, sewer)."""
    out: list[str] = []
    run: list[str] = []
    for w in re.findall(r"[A-Za-z][A-Za-z'-]*|[,;:.]", theme):
        if w.lower() in STOP_WORDS or not w[0].isalpha():
            if run:
                out.append(" ".join(run))
            run = []
        else:
            run.append(w)
    return out + ([" ".join(run)] if run else [])


def _one_people_phrase(theme: str, resolver) -> bool:
    """Whether the theme is one phrase that names people by a background or class ("city guard ambush")."""
    phrases = _phrases(theme)
    return len(phrases) == 1 and _names_people(phrases[0], resolver)


def _people_phrase(phrases: list[str], nodes: list, resolver) -> str | None:
    """The first phrase that no creature of ``nodes`` matches alone and that is people (``_is_people``: it names a
    background or class, "cultists" of "cultists, sewer"; or it is close to people in meaning, "thieves guild ambush"
    of "thieves guild ambush in the sewers", "necromancer" of "necromancer, undead"), or None."""
    return next((p for p in phrases if _is_people(p, resolver)
                 and not _theme(_theme_words([p]), nodes, resolver)[2]), None)


def _names_people(phrase: str, resolver) -> bool:
    """Whether a phrase names people by a Player Core background or class ("cultists", "city guards", "wizards"): beside
    creatures Monster Core has, only such a phrase is taken for people to build ("haunted" of "haunted, crypt" or a
    "volcano" beside fire creatures is no one)."""
    said = {groups.singular(w).lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]*", phrase)}
    return any(name <= said for name in getattr(resolver, "person_names", ()))


def _is_people(phrase: str, resolver) -> bool:
    """Whether a theme's phrase Monster Core has no creature for is people to build: it names a background or class,
    or it is closer in meaning to people than to a place (``concept.people_margin``: smugglers, a militia; not a
    desert, a canyon)."""
    if not phrase:
        return False
    if _names_people(phrase, resolver):
        return True
    margin = concept.people_margin(phrase)
    return margin is not None and margin >= concept.PEOPLE_MARGIN


def _followers(phrases: list[str], nodes: list, resolver=None):
    """level -> the creature of ``nodes`` of that level closest to ``phrases`` (a word of them in its name or traits, or
    at least ``THEME_FLOOR`` close in meaning), or None."""
    shared, close, _ = _theme(_theme_words(phrases), nodes, resolver)
    best: dict[int, tuple[float, str, object]] = {}
    for node, r, c in zip(nodes, shared, close, strict=True):
        if r < 2 and c < THEME_FLOOR:
            continue
        key = (r + concept.CONCEPT_WEIGHT * c, node.name, node)
        if node.level not in best or key[:2] > best[node.level][:2]:
            best[node.level] = key
    return lambda level: best[level][2] if level in best else None


def _fit_count(members: list[tuple[str, int, int]], party_size: int, party_level: int, threat: Threat) -> int | None:
    """The count of the group's lowest-level member (its lackeys) that brings the group closest under the budget of
    ``threat`` for ``party_size`` characters (GM Core p. 76: a larger party meets more creatures), at that threat; None
    when no count does. For four characters it is the printed count."""
    budget = tables.encounter_budget(party_size)
    low = min(range(len(members)), key=lambda i: (members[i][2], -i))
    rest = sum(c * tables.creature_xp(lvl, party_level) for i, (_, c, lvl) in enumerate(members) if i != low)
    each = tables.creature_xp(members[low][2], party_level)
    best = None
    for count in range(1, max(members[low][1], 1) + 2 * max(party_size, 4) + 1):
        xp = rest + count * each
        if xp <= budget[threat] and tables.threat_for_xp(xp, budget) == threat:
            best = count
    return best


def people_encounters(party_size: int, party_level: int, threat: Threat, theme: str, resolver,
                      followers=None, boss: bool = False) -> list[EncounterReport]:
    """GM Core's Quick Adventure Groups (``groups``) of ``threat`` filled with the theme's people at the levels each
    group gives, for a theme Monster Core has no creature of: "Boss and Lackeys" for "bandits" at party level 3 is a
    bandit boss (level 5) and four bandit lackeys (level -1), each line written with its level so the block counts it
    and the GM builds its statblock with ``gmprep creature``.

    ``followers(level)``: the Monster Core creature of that level the theme's other words call for, or None; when
    given, only groups of two members or more are built, their lowest (the lackeys) being that creature ("cultists in
    the sewer": a cultist boss and four Sewer Oozes). ``boss``: only the groups with a Boss, when there are any."""
    one, several = groups.theme_people(theme, resolver.person_words, concept.people_margin)
    entry = resolver.quick_groups_entry
    if not one or entry is None:
        return []
    budget4 = tables.encounter_budget(4)[threat]
    out = []
    bosses = [g for g in resolver.quick_groups if g.xp == budget4 and any(m.part == "Boss" for m in g.members)]
    for group in bosses if boss and bosses else resolver.quick_groups:
        if group.xp != budget4 or (followers is not None and len(group.members) < 2):
            continue
        members = [(groups.member_name(m, one, several), m.count, party_level + m.delta) for m in group.members]
        if any(not tables.CREATURE_MIN_LEVEL <= lvl <= tables.CREATURE_MAX_LEVEL for _, _, lvl in members):
            continue  # lackeys of party level - 4 at party level 1
        count = _fit_count(members, party_size, party_level, threat)
        if count is None:
            continue
        low = min(range(len(members)), key=lambda i: (members[i][2], -i))
        members[low] = (members[low][0], count, members[low][2])
        written = [True] * len(members)
        if followers is not None:
            node = followers(members[low][2])
            if node is None:
                continue
            members[low], written[low] = (node.name, count, members[low][2]), False
        spec = EncounterSpec(party_size=party_size, party_level=party_level, lines=[
            EncounterLine(text=f"{c} {name}" + (f" (level {lvl})" if w else ""), name=name, count=c,
                          level=lvl if w else None)
            for (name, c, lvl), w in zip(members, written, strict=True)])
        report = evaluate_encounter(spec, resolver)
        report.structure = group.name
        report.citations.append(_cite_entry(entry))
        out.append(report)
    return out


_RARITY = {"common": 0, "uncommon": 1, "rare": 2, "unique": 3}


def _untheme_order(node, party_level: int, words: list[str]) -> tuple:
    """The last tie-break of the encounter builder's ranking. With a theme, the name. With none, every creature ties,
    and name order put the same few first at every level (Aapoph Serpentfolk, Adamantine Dragon ...): common creatures
    first (GM Core's default for rarity), then a fixed shuffle that differs by party level (a hash of the name and the
    level), so the options are reproducible and still vary."""
    if words:
        return (node.name,)
    rarity = _RARITY.get(str(getattr(node, "rarity", None) or "common").lower(), 0)
    digest = hashlib.blake2b(f"{node.name}|{party_level}".encode(), digest_size=8).hexdigest()
    return (rarity, digest, node.name)


def _boss_shapes(party_size: int, party_level: int, threat: Threat, resolver) -> list[tuple[str, list[tuple[int, int]]]]:
    """The shapes of a boss fight at ``threat``, each (name, [(count, level)], the boss first): GM Core's Quick Adventure
    Groups that have a Boss part and this threat's budget for four ("Boss and Lackeys", "Boss and Lieutenant": severe),
    the lackeys' count fitted to the party's size (``_fit_count``), then the boss alone, of the highest level whose XP
    alone is this threat (party level + 3 for a severe fight of four: "a boss so mighty it could defeat the entire party
    single-handedly", GM Core, Choosing Creatures)."""
    budget4 = tables.encounter_budget(4)[threat]
    shapes: list[tuple[str, list[tuple[int, int]]]] = []
    for group in getattr(resolver, "quick_groups", []):
        if group.xp != budget4 or not any(m.part == "Boss" for m in group.members):
            continue
        members = [(m.part or "", m.count, party_level + m.delta) for m in group.members]
        if any(not tables.CREATURE_MIN_LEVEL <= lvl <= tables.CREATURE_MAX_LEVEL for _, _, lvl in members):
            continue
        count = _fit_count(members, party_size, party_level, threat)
        if count is None:
            continue
        low = min(range(len(members)), key=lambda i: (members[i][2], -i))
        shapes.append((group.name, [(count if i == low else c, lvl) for i, (_, c, lvl) in enumerate(members)]))
    solo = tables.solo_level(party_size, party_level, threat)
    if solo is not None:
        shapes.insert(0, ("Solo boss", [(1, solo)]))
    return shapes


def _boss_encounters(party_size: int, party_level: int, threat: Threat, ranked: list, resolver,
                     n: int) -> list[EncounterReport]:
    """Boss fights (``_boss_shapes``) filled with the best-ranked creature of each member's level (``ranked``: the
    theme's order), no creature twice across the options where another of its level is left."""
    by_level: dict[int, list] = {}
    for node in ranked:
        by_level.setdefault(node.level, []).append(node)
    used: set[str] = set()
    out: list[EncounterReport] = []
    for name, members in _boss_shapes(party_size, party_level, threat, resolver):
        if len(out) >= n:
            break
        picked: list = []
        for _, lvl in members:
            options = [c for c in by_level.get(lvl, []) if c.node_id not in {p.node_id for p in picked}]
            fresh = [c for c in options if c.node_id not in used]
            if not options:
                break
            picked.append((fresh or options)[0])
        if len(picked) != len(members):
            continue
        used |= {p.node_id for p in picked}
        spec = EncounterSpec(party_size=party_size, party_level=party_level, lines=[
            EncounterLine(text=f"{c} {node.name}", name=node.name, count=c)
            for (c, _), node in zip(members, picked, strict=True)])
        report = evaluate_encounter(spec, resolver)
        report.structure = name
        shape_entry = resolver.quick_groups_entry if name != "Solo boss" else \
            getattr(resolver, "choosing_creatures_entry", None)
        if shape_entry is not None:
            report.citations.append(_cite_entry(shape_entry))
        out.append(report)
    return out


# a theme phrase that asks for a hazard in the fight ("with a trap", "a haunt"), and the trait a held hazard needs for it
_HAZARD_PHRASE = {"trap": "trap", "traps": "trap", "haunt": "haunt", "haunts": "haunt", "hazard": None, "hazards": None}


def hazard_xp(hazard, party_level: int) -> int:
    """A hazard's XP for the party, by GM Core's Hazard Experience (complex: a creature's; simple: a fifth)."""
    return tables.creature_xp(hazard.level, party_level) // (1 if hazard.fields.get("complex") else 5)


def _pick_hazard(kinds: set[str | None], party_level: int, target: int, resolver):
    """The held hazard for a fight that asks for one: of the kind asked (a trap, a haunt; any for "hazard"), of a level
    the party can meet, worth at most half the budget (the creatures keep the rest); a complex one first ("a complex
    hazard can play the part of a creature in a battle", GM Core), then the most XP, then the name. None when none
    fits."""
    fit = [h for h in getattr(resolver, "hazards", [])
           if tables.XP_MIN_DELTA <= h.level - party_level <= tables.XP_MAX_DELTA
           and (None in kinds or kinds & {t.lower() for t in h.traits})
           and 0 < hazard_xp(h, party_level) <= target // 2]
    return min(fit, key=lambda h: (not h.fields.get("complex"), -hazard_xp(h, party_level), h.name), default=None)


def build_encounters(party_size: int, party_level: int, threat: Threat, words: list[str], resolver,
                     n: int = 3, boss: bool = False, _offset: int = 0) -> list[EncounterReport]:
    """Up to ``n`` Monster Core encounters whose XP falls in ``threat`` for this party, as close to its
    budget as possible, preferring creatures matching ``words`` (traits first, then name, then text) and close to
    them in meaning (``concept.closeness``).

    Deterministic: candidates are ordered by relevance, level and name; groups of one to three kinds
    of creature are enumerated and ranked by (distance to the budget, -mean relevance per creature,
    distance of the creature count from half the party: neither a lone boss nor a swarm by default);
    options are picked so they share no creature where possible, else at least no lead creature.

    ``boss``: the GM asked for a boss fight; the options are its shapes first (``_boss_encounters``).

    A theme phrase that asks for a hazard ("with a trap", "a haunt") puts one of the held hazards in each option built
    of Monster Core creatures (``_pick_hazard``), its XP (``hazard_xp``) counted in the budget; the creatures fill the
    rest (``_offset``: the XP already taken)."""
    if threat not in THREATS:
        raise GmprepError(f"unknown threat '{threat}': one of {', '.join(THREATS)}")
    check_party(party_size, party_level)
    budget = tables.encounter_budget(party_size)
    target = budget[threat]
    asked = [w for w in words if w.strip() and all(t in _HAZARD_PHRASE for t in _theme_words([w]))]
    if asked and not _offset:
        hazard = _pick_hazard({_HAZARD_PHRASE[t] for w in asked for t in _theme_words([w])}, party_level, target,
                              resolver)
        rest = [w for w in words if w not in asked]
        if hazard is None:
            return build_encounters(party_size, party_level, threat, rest, resolver, n, boss)
        xp = hazard_xp(hazard, party_level)
        options = build_encounters(party_size, party_level, threat, rest, resolver, n, boss, _offset=xp)
        line = EncounterLine(text=f"1 {hazard.name}", name=hazard.name, count=1)
        return [o if o.structure else evaluate_encounter(EncounterSpec(
            party_size=party_size, party_level=party_level,
            lines=[*(EncounterLine(text=c.text, name=c.name, count=c.count, level=None if c.id else c.base_level,
                                   adjustment=c.adjustment) for c in o.creatures), line]), resolver)
            for o in options]
    theme = ", ".join(v.strip() for v in words if v.strip())  # each value a phrase: "bandits on the road", "cave"
    words = _theme_words(words)
    # relevance: the shared words, plus the theme's closeness in meaning (a ghost for a "haunted crypt"); whether the
    # theme matches is read over every creature of these levels, as ``unmatched_theme`` reads it
    every = _fits(party_level, resolver)
    shared, close, matched = _theme(words, [node for node, _ in every], resolver, _one_people_phrase(theme, resolver))
    # a theme Monster Core has no creature of (bandits, pirates, a cult) is people to build: GM Core's quick groups of
    # them come first, then Monster Core's creatures that fit the budget; a theme of such people and of creatures it has
    # ("cultists in the sewer") puts the creatures in the groups' lackeys
    people = []
    phrases = _phrases(theme)
    if not matched and _is_people(next(iter(phrases), ""), resolver):
        people = people_encounters(party_size, party_level, threat, theme, resolver, boss=boss)[:n]
    elif len(phrases) > 1:
        nodes = [node for node, _ in every]
        if (who := _people_phrase(phrases, nodes, resolver)) is not None:
            people = people_encounters(party_size, party_level, threat, who, resolver, boss=boss,
                                       followers=_followers([p for p in phrases if p != who], nodes, resolver))[:n]
            # no creature of the other phrases at the groups' levels ("cultists of Urgathoa": the god's name matches
            # the whole theme's undead, no lackey alone): the people's own groups, then the theme's creatures
            people = people or people_encounters(party_size, party_level, threat, who, resolver, boss=boss)[:1]
    n -= len(people)
    if n <= 0:
        return people
    if boss:
        # a theme's boss is of the theme: with words, only creatures that match them (a word, or ``THEME_FLOOR`` close)
        order = sorted(((r, c, e) for r, c, e in zip(shared, close, every, strict=True)
                        if not words or r > 0 or c >= THEME_FLOOR),
                       key=lambda x: (-(x[0] + concept.CONCEPT_WEIGHT * x[1]),
                                      *_untheme_order(x[2][0], party_level, words)))
        bosses = _boss_encounters(party_size, party_level, threat, [node for _, _, (node, _) in order], resolver, n)
        people, n = people + bosses, n - len(bosses)
        if n <= 0:
            return people
    pool = [(r + concept.CONCEPT_WEIGHT * c, node, xp) for r, c, (node, xp) in zip(shared, close, every, strict=True)
            if xp + _offset <= target]
    shared = [r for r, (_, xp) in zip(shared, every, strict=True) if xp + _offset <= target]
    close = [c for c, (_, xp) in zip(close, every, strict=True) if xp + _offset <= target]
    if words and any(shared) and not any(close) and matched:
        # without the model, only creatures that share the words (a theme nothing matches keeps every creature: its
        # words found in a few stat blocks' text cannot fill a budget alone)
        best = max(shared)
        pool = [p for p, r in zip(pool, shared, strict=True) if r >= min(best, 2) and r > 0]
    pool.sort(key=lambda p: (-p[0], abs(p[1].level - party_level), *_untheme_order(p[1], party_level, words)))
    pool = pool[:30]
    max_count = max(6, party_size + 2)
    combos: list[tuple] = []
    for k in (1, 2, 3):
        # three kinds of creature take at most two of each: enumerating only those counts keeps the work linear in the
        # party's size (all counts, then filtered, took 33 s for a party of 40 before its size was refused)
        most = 2 if k == 3 else max_count
        for group in itertools.combinations(range(len(pool)), k):
            members = [pool[i] for i in group]
            for counts in itertools.product(range(1, most + 1), repeat=k):
                if sum(counts) > max_count:
                    continue
                xp = sum(c * m[2] for c, m in zip(counts, members, strict=True))
                if xp + _offset > target:
                    continue
                if tables.threat_for_xp(xp + _offset, budget) != threat:
                    continue
                mean_rel = sum(m[0] * c for c, m in zip(counts, members, strict=True)) / sum(counts)
                size_gap = abs(sum(counts) - (party_size + 1) // 2)
                combos.append((target - xp - _offset, -mean_rel, size_gap, [m[1].name for m in members], counts,
                               members))
    combos.sort(key=lambda c: c[:4])
    chosen: list[list] = []
    # the creatures of the options already made (a boss fight's shapes, the people's groups) count as used
    earlier = {c.id for r in people for c in r.creatures if c.id}
    used: set[str] = set(earlier)
    # first options that share no creature with an earlier one, then ones that differ in their lead
    for disjoint in (True, False):
        for *_, counts, members in combos:
            if len(chosen) >= n:
                break
            ids = [m[1].node_id for m in members]
            if (disjoint and used & set(ids)) or any(ids[0] == c[1][0][1].node_id for c in chosen) or ids[0] in earlier:
                continue
            chosen.append([counts, members])
            used |= set(ids)
    reports: list[EncounterReport] = []
    for counts, members in chosen:
        spec = EncounterSpec(party_size=party_size, party_level=party_level, lines=[
            EncounterLine(text=f"{c} {m[1].name}", name=m[1].name, count=c) for c, m in zip(counts, members, strict=True)
        ])
        reports.append(evaluate_encounter(spec, resolver))
    return people + reports


def render_encounter_block(report: EncounterReport) -> str:
    """A fenced ```encounter block for the note (what the build action inserts)."""
    lines = ["```encounter", f"party: {report.party_size} PCs, level {report.party_level}"]
    for c in report.creatures:
        adj = f"{c.adjustment} " if c.adjustment else ""
        written = "" if c.id else f" (level {c.base_level})"  # no entry: the level is what counts it
        lines.append(f"- {c.count} {adj}{c.name}{written}")
    lines.append("```")
    return "\n".join(lines) + "\n"
