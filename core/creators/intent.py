"""Requests to the creators as a GM types them, in a note line or the chat:

* ``moderate encounter for 4 level-3 PCs, undead, in a swamp`` -> :class:`EncounterRequest`
* ``level 5 brute: a bog troll`` / ``build a level 3 spellcaster NPC, a goblin shaman`` -> ``CreatureRequest``

The grammar is structural: a threat is one of GM Core's five threat words, a party is a count of
PCs with a level, a creature request names a level and (a role from GM Core's list, or the word
creature/NPC/statblock). Everything else is kept as words for the builder to match against creature
traits and names; nothing here knows a creature. The code actions, the chat router and the CLI use
these parsers, so a request means the same everywhere.
"""

from __future__ import annotations

import re
from typing import Literal, cast, get_args

from pydantic import BaseModel, Field

from gmprep.core.creators import tables
from gmprep.core.creators.models import THREATS, Adjustment, CreatureRequest, EncounterSpec, Role, Threat

_NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten".split())}
_N = r"(\d+|" + "|".join(_NUMBERS) + r")"
_PCS = r"(?:pcs?|player characters?|players?|characters?|heroes|adventurers|party members)"
_ORD = r"(-?\d+)(?:st|nd|rd|th)?[- ]level"
_LEVEL = r"(?:level|lvl\.?|lv\.?)[- ]?(-?\d+)"
# "4 level-3 PCs", "4 3rd-level PCs", "4 PCs of level 3", "4 PCs, level 3", "party of 4 at level 3"
_PARTY = [
    re.compile(rf"\b{_N}\s+(?:{_LEVEL}|{_ORD})\s+{_PCS}\b", re.I),
    re.compile(rf"\b{_N}\s+{_PCS}\s*(?:,|of|at|\()?\s*{_LEVEL}\b", re.I),
    re.compile(rf"\b(?:party|group) of\s+{_N}\s*(?:,|of|at)?\s*(?:{_LEVEL}|{_ORD})\b", re.I),
]
# "my level 4 group of five", "a level 3 party of 5": the level first
_PARTY_LEVEL_FIRST = re.compile(rf"\b(?:{_LEVEL}|{_ORD})\s+(?:party|group) of\s+{_N}\b", re.I)
# (not the level's number: "for level 3 PCs" is no party of 3)
_SIZE_ONLY = re.compile(rf"\b(?<!level )(?<!level-)(?<!lvl )(?<!lv )(?<!lv\. ){_N}\s+{_PCS}\b|\b(?:party|group) of\s+{_N}\b",
                        re.I)
# a party stated by its level alone ("for a level 2 party", "for level 3 PCs"): GM Core's budgets are for four
_PARTY_WORD = re.compile(rf"\b(?:party|group|{_PCS})\b", re.I)
# ... and "a level 8 encounter", "a level 6 fight": GMs name a fight by its party's level
_PARTY_LEVEL = re.compile(rf"\b(?:{_LEVEL}|{_ORD})\s+(?:party|group|{_PCS}|fights?|battles?|combats?|encounters?)\b",
                          re.I)
_LEVEL_ANY = re.compile(rf"\b{_LEVEL}\b|\b{_ORD}\b|\bcreature\s+(-?\d+)\b", re.I)
_THREAT = re.compile(r"\b(" + "|".join(THREATS) + r")\b", re.I)
_ROLES: tuple[str, ...] = get_args(Role)
_ROLE = re.compile(r"\b(" + "|".join(re.escape(r) for r in sorted(_ROLES, key=len, reverse=True)) + r")s?\b", re.I)


def said_role(concept: str) -> tuple[Role, str] | None:
    """GM Core's role a concept says in its own words ("bugbear brute", "kobold snipers") and the concept without it
    ("bugbear"), or None: the one reading of a role word, for the chat's requests and the CLI's concept alike."""
    m = _ROLE.search(concept)
    if m is None:
        return None
    rest = " ".join(_ROLE.sub(" ", concept).split())
    return cast(Role, m.group(1).lower()), rest
_CREATURE_WORD = re.compile(r"\b(?:stat ?blocks?|stats|creatures?|npcs?|monsters?|villains?|foes?|enemy|enemies)\b", re.I)
_ENCOUNTER = re.compile(r"\bencounters?\b", re.I)
# a fight asked for (``_BUILD``) for a whole party ("I need a severe fight for 4 level 2 PCs", "create a boss fight for a
# level 7 party of 5") is an encounter request too
_FIGHT = re.compile(r"\b(?:fights?|battles?|combats?|ambush(?:es)?|skirmish(?:es)?)\b", re.I)
# a request that starts by asking to build ("Create a level 2 goblin boss", "Can you make a 5th-level hag?") names a
# creature with its level alone, without a role or the word creature
_BUILD = re.compile(r"^\s*(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?"
                    r"(?:build|make|create|generate|design|scale|stat(?:\s+(?:up|out))?|roll\s+up|give\s+(?:me|us)|(?:i|we)\s+(?:need|want))\b",
                    re.I)
# A question about the rules ("what is ...", "how does ...") is not a request to build something,
# unless it is a polite request ("can you build ...").
_QUESTION = re.compile(r"^\s*(?:what|how|why|when|where|which|who|whose|does|do|did|is|are|was|were|should|"
                       r"(?:can|could|would|will)(?!\s+you\b))\b", re.I)
_FILLER = re.compile(
    r"\b(?:please|can|could|would|will|you|me|us|i|we|my|our|need|want|give|build|make|create|generate|design|roll|up|"
    r"insert|write|suggest|a|an|the|some|for|of|with|and|or|in|on|at|to|new|random|party|option|options|threat|"
    r"fights?|battles?|combats?|ambush|ambushes|skirmish|skirmishes|who|is|are|stat|stats|out|against|scale|"
    r"something\s+like|kind\s+of|sort\s+of|it|instead)\b",
    re.I,
)
_WORDS = re.compile(r"[a-z][a-z'-]+", re.I)


class EncounterRequest(BaseModel):
    """What to build: the threat, the party, and the words to match creatures on (traits, terrain)."""

    threat: Threat = "moderate"
    threat_stated: bool = False
    party_size: int
    party_level: int
    words: list[str] = Field(default_factory=list)
    # the same words as the phrases they were written in ("bandits on the road" -> "bandits", "road"): the first names
    # the theme's people when Monster Core has none (``encounter.people_encounters``)
    phrases: list[str] = Field(default_factory=list)
    # a GM's word for the threat that is none of GM Core's ("hard"), read as one of them (``THREAT_SAID``)
    threat_word: str | None = None
    # a boss fight asked for ("a boss fight", "the final boss encounter"): built on a boss's shapes
    # (``encounter.build_encounters``)
    boss: bool = False
    # the party's size was not said ("for a level 2 party"): four, the size GM Core's budgets are written for
    size_assumed: bool = False


# GMs' words for a fight's difficulty, read as GM Core's threats by its own descriptions (Combat Threats): trivial
# encounters are "so easy that the characters have essentially no chance of losing", moderate ones "a serious
# challenge", severe ones "the hardest encounters most groups of characters have a good chance to defeat", extreme ones
# "so dangerous that they are likely to be an even match". Two more by where the book places them: severe encounters are
# "appropriate for important moments in your story, such as confronting a final boss" (a boss fight), extreme ones "for
# the climactic encounter at the end of an entire campaign". The answer says how it read the word.
THREAT_SAID: dict[str, Threat] = {"easy": "trivial", "challenging": "moderate", "hard": "severe", "difficult": "severe",
                                  "tough": "severe", "dangerous": "extreme", "deadly": "extreme", "lethal": "extreme",
                                  "boss": "severe", "climactic": "extreme"}
# ... said of the encounter itself ("a hard encounter", "a deadly boss fight"), not of a place ("a dangerous swamp")
_THREAT_WORD = re.compile(r"\b(" + "|".join(THREAT_SAID) + r")\s+(?:[a-z]+\s+)?(?:encounters?|fights?|battles?|combats?)\b",
                          re.I)


# ... or said alone, as one item of the request ("encounter for 4 level 5 PCs, hard, in a graveyard")
_THREAT_ALONE = re.compile(r"(?:^|[,;:(])\s*(" + "|".join(THREAT_SAID) + r")\s*(?=[,;:.)!?]|$)", re.I)
_XP = re.compile(r"\b(\d+)\s*xp\b", re.I)


_BOSS = re.compile(r"\bboss\s+(?:[a-z]+\s+)?(?:encounters?|fights?|battles?|combats?)\b|\bfinal\s+boss\b", re.I)
_BOSS_WORD = re.compile(r"\b(?:final\s+)?boss\b", re.I)
# GM Core's lackey and the words GMs use for one
_LACKEY_WORDS = r"(?:lackeys?|minions?|mooks?|henchm[ae]n|grunts?|underlings?|flunk(?:y|ies))"
_LACKEY = re.compile(rf"\b{_LACKEY_WORDS}\b", re.I)
_LACKEY_COUNT = re.compile(rf"\b{_N}\s+(?:[a-z'-]+\s+){{0,3}}?{_LACKEY_WORDS}\b", re.I)
_FOR_ENCOUNTERS = re.compile(r"\b(?:for|in)\s+(?:[a-z]+\s+){0,2}encounters?\b", re.I)
# "a deadly one", "a tough one": the threat said of the creature asked for, as a boss's
_THREAT_ONE = re.compile(r"\b(?:an?|the)\s+(" + "|".join([*THREATS, *THREAT_SAID]) + r")\s+one\b", re.I)
# "a lieutenant for the bandit boss", "the guards of the boss": the boss is whom the creature serves, not the creature
_BOSS_SERVED = re.compile(r"\b(?:for|of|to|with|under|serving|beside|behind)\s+(?:(?:the|a|an|my|our|his|her|their)\s+)?"
                          r"(?:[a-z]+\s+)?(?:final\s+)?boss\b", re.I)


def _boss_said(text: str) -> bool:
    """Whether the creature asked for is a boss: the word said of it, not of the one it serves."""
    return _BOSS_WORD.search(_BOSS_SERVED.sub(" ", text)) is not None


_BOSS_ALONE = re.compile(r"\b(an?|the|some|my|our)\s+(?:(?:final|solo)\s+)?boss\b", re.I)
# "a deadly boss", "a tough boss for my level 5 party": the threat said of the boss itself
_THREAT_BEFORE_BOSS = re.compile(r"\b(" + "|".join(THREAT_SAID) + r")\s+(?:[a-z]+\s+)?boss\b", re.I)


def _num(text: str) -> int:
    return _NUMBERS[text.lower()] if text.lower() in _NUMBERS else int(text)


def parse_party(text: str) -> tuple[int | None, int | None, tuple[int, int] | None]:
    """(size, level, span of the match) of a party statement in ``text``; Nones where absent."""
    for pattern in _PARTY:
        m = pattern.search(text)
        if m:
            groups = [g for g in m.groups() if g is not None]
            return _num(groups[0]), int(groups[1]), m.span()
    m = _PARTY_LEVEL_FIRST.search(text)
    if m:
        level_said, size_said = [g for g in m.groups() if g is not None]
        return _num(size_said), int(level_said), m.span()
    size = _SIZE_ONLY.search(text)
    level = _LEVEL_ANY.search(text)
    n = _num(next(g for g in size.groups() if g)) if size else None
    lv = int(next(g for g in level.groups() if g)) if level else None
    return n, lv, None


# "Suppose I am a level 1 cleric ... How do I calculate the concentration DC ...?", "If I somehow get an extra action
# ... Can I take the additional move action toward my enemy and then make a full attack?": a sentence that ends in "?"
# asks about the rules wherever it stands, unless it is a polite request ("Can you build a level 3 brute?")
_SENTENCE = re.compile(r"[^.!?]*[.!?]+|[^.!?]+$")
_POLITE = re.compile(r"^\s*(?:please\s+)?(?:can|could|would|will)\s+you\b", re.I)


# a clause that asks yes or no by inverting its verb, after a comma: "my level 1 party is fighting a level 4 creature,
# is that too hard" (no question mark; it built a creature named "Fighting That Too Hard")
_INVERTED = re.compile(r"[,;:\u2013\u2014]\s*(?:is|are|was|were|does|do|did|can|could|should|will|would|has|have)\s+"
                       r"(?:that|this|it|they|he|she|i|we|there|these|those)\b", re.I)


def _is_question(text: str) -> bool:
    """``text`` asks about the rules: it starts with a question word, one of its sentences ends in "?" and is no
    polite request, or a clause after a comma asks by inverting its verb ("..., is that too hard")."""
    if _QUESTION.match(text) or (_INVERTED.search(text) and not _BUILD.match(text)):
        return True  # "Make a level 3 bandit, can it use a crossbow?" still asks for the bandit
    return any(s.strip().endswith("?") and not _POLITE.match(s) for s in _SENTENCE.findall(text))


# what ends the noun phrase that names the creature: a relative clause ("a cult leader who casts divine spells") or a
# phrase of place, time or purpose ("a goblin shaman NPC for tonight", "a bandit in the woods", "an ogre with a club");
# not "of", which is part of many names ("captain of the guard", "priest of Pharasma")
_PHRASE_END = re.compile(r"\b(?:who|that|which|whose|for|in|at|on|from|to|with|near|inside|during|tonight|as)\b", re.I)


def _concept_phrase(rest: str) -> str:
    """``rest`` (the request without its level, role and creature words) up to the first word that ends the creature's
    noun phrase (``_PHRASE_END``) after a word of it; all of it when nothing of the concept comes before ("an NPC who
    is a wizard")."""
    for m in _PHRASE_END.finditer(rest):
        before = rest[: m.start()]
        if _rest_words(before.split(",")[-1]):
            return before + rest[m.end():][rest[m.end():].find(",") if "," in rest[m.end():] else len(rest):]
    return rest


def _rest_words(text: str) -> list[str]:
    """The content words left of a request once the grammar's own words are taken out."""
    cleaned = _FILLER.sub(" ", text)
    return [w.lower() for w in _WORDS.findall(cleaned)]


def said_party(text: str) -> tuple[int | None, int] | None:
    """(size or None, level) of a party ``text`` states ("for 4 level 3 PCs", "my level 7 party"), or None; a level of
    a creature ("a level 5 bandit captain") is no party's."""
    size, level, span = parse_party(text)
    if span is not None and level is not None:
        return size, level
    m = _PARTY_LEVEL.search(text)
    return (size, int(next(g for g in m.groups() if g is not None))) if m else None


# "I need stats for a town guard": a request for a creature's numbers, as a build verb is
_STATS_FOR = re.compile(r"\b(?:stats?|stat\s?blocks?|numbers)\s+for\b", re.I)


def level_beyond_tables(text: str) -> int | None:
    """The level of a build request beyond GM Core's tables (-1 to 24: "a level 30 demon lord", "a level 27 party"),
    or None: the chat says what the tables cover instead of quoting the rules."""
    if _is_question(text) or not (_BUILD.match(text) or _STATS_FOR.search(text)):
        return None
    if not (_ENCOUNTER.search(text) or _FIGHT.search(text) or _CREATURE_WORD.search(text) or said_role(text) or
            _BOSS_WORD.search(text) or _BUILD.match(text)):
        return None
    party = said_party(text)  # "for 4 level 27 PCs": the party's level (its "4 level" reads as a 4th level alone)
    lv = party[1] if party is not None else said_level(text)
    return lv if lv is not None and not (-1 <= lv <= 24) else None


def missing_party_or_level(text: str) -> Literal["encounter", "creature"] | None:
    """What a build request lacks to be built: "encounter" when it asks for an encounter or a fight with no party's
    level ("build an encounter with wolves"), "creature" when it asks for a creature, an NPC or a boss with no level of
    its own or its party's ("make an innkeeper npc", "create a goblin boss"); None when it is no such request (a
    question, a request that can be built, or an imperative about the rules: "make an Athletics check")."""
    if _is_question(text) or not (_BUILD.match(text) or _STATS_FOR.search(text)):
        return None
    _, level, _ = parse_party(text)
    if level is not None or _PARTY_LEVEL.search(text):
        return None
    if _ENCOUNTER.search(text) or _FIGHT.search(text):
        return "encounter"
    if _CREATURE_WORD.search(text) or said_role(text) or _BOSS_WORD.search(text) or _LACKEY.search(text) or \
            _STATS_FOR.search(text):
        return "creature"
    return None


def parse_encounter_request(text: str) -> EncounterRequest | None:
    """An encounter-building request, or None when ``text`` is not one (no party stated, a rules
    question, or an encounter already written out as ``Encounter (...): creature, creature``)."""
    if _is_question(text):
        return None
    if not _ENCOUNTER.search(text) and not (_FIGHT.search(text) and _BUILD.match(text)):
        return None  # "The severe fight against 4 level 3 PCs went badly" tells, it does not ask
    size, level, span = parse_party(text)
    assumed = size is None and level is not None and (_PARTY_WORD.search(text) is not None or
                                                      _PARTY_LEVEL.search(text) is not None)
    size = 4 if assumed else size
    if size is None or level is None or not (1 <= size <= 8) or not (-1 <= level <= 24):
        return None
    after = text[span[1]:] if span else ""
    listed = re.match(r"\s*\)?\s*:\s*(\S.*)", after, re.S)
    if listed and _WRITTEN.search(listed.group(1)):  # "Encounter (4 PCs, level 3): 2 goblins" is a written encounter
        return None
    threat = _THREAT.search(text)
    alias = (_THREAT_WORD.search(text) or _THREAT_ALONE.search(text)) if threat is None else None
    xp = _XP.search(text) if threat is None and alias is None else None
    rest = text[: span[0]] + " " + text[span[1]:] if span else text
    # "party is level 3, four players": the size said apart from the level is no theme word either
    rest = _SIZE_ONLY.sub(" ", rest)
    rest = _THREAT.sub(" ", _ENCOUNTER.sub(" ", _FIGHT.sub(" ", _LEVEL_ANY.sub(" ", _XP.sub(" ", rest)))))
    boss = _BOSS.search(text) is not None
    if boss:  # "a deadly boss fight", "the final boss": the fight's shape, not theme words
        rest = _BOSS_WORD.sub(" ", rest)
    if alias is not None:  # "a hard encounter": the threat, not a theme word
        rest = re.sub(r"\b" + alias.group(1) + r"\b", " ", rest, count=1)
    words = [w for w in _rest_words(rest) if not _PCS_WORD.fullmatch(w)]
    phrases = []
    for part in re.split(r"[|,;:.!?()\n]+", _FILLER.sub("|", rest)):
        said = [w.lower() for w in _WORDS.findall(part) if not _PCS_WORD.fullmatch(w)]
        if said:
            phrases.append(" ".join(said))
    # "a 160 XP encounter": the threat that total is for this party (``tables.threat_for_xp``)
    by_xp = tables.threat_for_xp(int(xp.group(1)), tables.encounter_budget(size)) if xp is not None else None
    return EncounterRequest(
        threat=threat.group(1).lower() if threat else THREAT_SAID[alias.group(1).lower()] if alias else
        by_xp or "moderate",
        threat_stated=threat is not None or alias is not None or xp is not None,
        threat_word=alias.group(1).lower() if alias else f"{xp.group(1)} XP" if xp is not None else None,
        boss=boss,
        size_assumed=assumed,
        party_size=size,
        party_level=level,
        words=words,
        phrases=phrases,
    )


_PCS_WORD = re.compile(_PCS, re.I)
# After the party's colon, a written encounter lists creatures, one item at least with a count or an adjustment ("2
# goblin warriors, elite wolf"); a theme does not ("Build a severe encounter for 4 level 5 PCs: cultists of Urgathoa in
# a crypt" was taken for a list and answered as a rules question)
_WRITTEN = re.compile(rf"(?:^|[,;\n]|\band\b)\s*(?:[-*+]\s*)?(?:{_N}\s+|(?:elite|weak)\b)", re.I)


_ADJUSTED = re.compile(r"\b(elite|weak)\s+(?:(?:version|variant)\s+of\s+)?(?:(?:an?|the)\s+)?(\S.*)", re.I | re.S)


def said_adjustment(concept: str) -> tuple[Adjustment, str] | None:
    """Monster Core's elite or weak adjustment a concept asks for ("elite ogre warrior", "a weak version of the troll")
    and the creature's name after it (to its noun phrase's end), or None."""
    m = _ADJUSTED.search(concept)
    if m is None:
        return None
    name = " ".join(_concept_phrase(m.group(2)).split()).strip(" .,!?")
    return (cast(Adjustment, m.group(1).lower()), name) if name else None


def parse_adjust_request(text: str) -> tuple[Adjustment, str] | None:
    """A request to build a creature with Monster Core's elite or weak adjustments ("Make an elite ogre warrior",
    "Can you give me a weak troll?"), as (adjustment, the name said), or None; whether the name is a Monster Core
    creature is the caller's to check."""
    if _ENCOUNTER.search(text) or _is_question(text) or not _BUILD.match(text):
        return None
    return said_adjustment(text)


_NAMED = re.compile(r"\b(?:named|called)\s+([A-Z][\w'\u2019-]*(?:\s+(?:[A-Z][\w'\u2019-]*|of|the|van|von|de|du|al))*)")


def parse_creature_request(text: str) -> CreatureRequest | None:
    """A creature/NPC request (a level, and a role or the word creature/NPC/statblock), or None."""
    # "a level 4 merchant NPC for social encounters": what the creature is for, not an encounter asked for
    if _ENCOUNTER.search(_FOR_ENCOUNTERS.sub(" ", text)) or _is_question(text):
        return None
    text = _FOR_ENCOUNTERS.sub(" ", text)
    # a party said beside the creature ("a lich for 4 level 12 PCs") is no part of it: its "4 level" was read as the
    # creature's level 4; a creature of no level of its own is then of the party's level
    party_size, party_level, span = parse_party(text)
    if span is None:
        # "for my level 7 party", "for 5th-level PCs": a level said of the party is not the creature's
        of_party = _PARTY_LEVEL.search(text)
        if of_party is not None:
            party_level = int(next(g for g in of_party.groups() if g is not None))
            span = of_party.span()
    if span is not None:
        text = text[: span[0]] + " " + text[span[1]:]
    # the NPC's own name ("a blacksmith named Gorim", "an elf wizard called Aelric Voss"): its title, not its concept
    named = _NAMED.search(text)
    if named is not None:
        text = text[: named.start()] + " " + text[named.end():]
    level = _LEVEL_ANY.search(text)
    role = said_role(text)
    if (level is None and span is None) or \
            (role is None and not _CREATURE_WORD.search(text) and not _BUILD.match(text)):
        return None
    lv = int(next(g for g in level.groups() if g is not None)) if level is not None else int(party_level or 0)
    boss_threat: Threat | None = None
    if level is None and span is not None and (_boss_said(text) or _THREAT_ONE.search(text)):
        # "a boss for my level 7 party": GM Core's boss of a fight is above the party's level (Creature XP and Role),
        # the level whose XP alone is the fight's threat: severe unless the request says another ("a deadly boss")
        said = _THREAT.search(text) or _THREAT_BEFORE_BOSS.search(text) or _THREAT_ONE.search(text)
        word = said.group(1).lower() if said else "boss"
        boss_threat = cast(Threat, word if word in THREATS else THREAT_SAID[word])
        solo = tables.solo_level(party_size or 4, lv, boss_threat)
        if solo is None:
            boss_threat = None
        else:
            lv = solo
            text = _THREAT.sub(" ", text)
            if said is not None and said.re is _THREAT_BEFORE_BOSS:
                text = re.sub(r"\b" + said.group(1) + r"\b", " ", text, count=1)
            text = _THREAT_ONE.sub(" ", text)  # "a dragon for a level 12 party, a deadly one"
            # "a boss, something like a treant": the fight's part, no concept word; "a goblin boss" keeps its name
            text = _BOSS_ALONE.sub(r"\1 ", text)
    lackeys: int | None = None
    if level is None and span is not None and boss_threat is None and _LACKEY.search(text):
        # "4 goblin minions for my level 3 party": GM Core's lackeys are party level - 4 to - 2 (Creature XP and Role):
        # the strongest, - 2, and the chat says what their number comes to
        counted = _LACKEY_COUNT.search(text)
        lackeys = _num(counted.group(1)) if counted else 0
        lv = max(lv - 2, tables.CREATURE_MIN_LEVEL)
        text = _LACKEY.sub(" ", text)
        if counted:
            text = re.sub(rf"\b{counted.group(1)}\b", " ", text, count=1)
    if not (-1 <= lv <= 24):
        return None
    tradition = _TRADITION.search(text)
    rest = _TRADITION.sub(" ", _ROLE.sub(" ", _CREATURE_WORD.sub(" ", _LEVEL_ANY.sub(" ", text))))  # as said_role's
    rest = _concept_phrase(rest)
    # "a level 3 bandit captain NPC, human": one word after the last comma, with the concept before it, is a trait
    parts = [_rest_words(part) for part in rest.split(",")]
    traits = parts.pop() if len(parts) > 1 and len(parts[-1]) == 1 and any(parts[:-1]) else []
    concept = " ".join(w for part in parts for w in part)
    return CreatureRequest(
        level=lv,
        role=role[0] if role else None,
        concept=concept,
        traits=traits,
        tradition=tradition.group(1).lower() if tradition else None,
        name=named.group(1) if named is not None else None,
        boss_threat=boss_threat,
        lackeys=lackeys,
        party_size=party_size if boss_threat or lackeys is not None else None,
        party_level=party_level if boss_threat or lackeys is not None else None,
    )


# "a level 5 divine spellcaster": the spells' tradition, said in the request (else the builder infers it)
_TRADITION = re.compile(r"\b(arcane|divine|occult|primal)\b", re.I)


def said_level(text: str) -> int | None:
    """The level ``text`` says ("level 7", "7th-level", "creature 7"), as the requests read it, or None."""
    m = _LEVEL_ANY.search(text)
    return int(next(g for g in m.groups() if g is not None)) if m else None


def said_tradition(text: str) -> str | None:
    """The spell tradition ``text`` says (arcane, divine, occult, primal), or None."""
    m = _TRADITION.search(text)
    return m.group(1).lower() if m else None


def is_question(text: str) -> bool:
    """Whether ``text`` asks about the rules rather than asking for a build (the requests' own test)."""
    return _is_question(text)


# A question about an encounter's difficulty: "How hard is this encounter for 4 level 3 PCs: 2 goblin warriors and an
# ogre warrior?", "What threat is 2 ogre warriors against 4 level-3 PCs?", "Encounter (4 PCs, level 3): 2 goblins"
_RATES = re.compile(r"\b(?:encounters?|fights?|battles?|combats?|threat|xp|hard|difficult|deadly|easy|tough|budget)\b",
                    re.I)
_LIST_AFTER = re.compile(r"\b(?:with|against|versus|vs\.?|facing|fighting)\s+", re.I)
# where a list the question names starts: after "with"/"against" (above), after "what threat is", or right after the
# question word ("Would 2 bandits (level 2) be ...", "Is a fight with ...")
_ASKING = re.compile(r"^\s*(?:how|what|which)\b[^:]*?\b(?:is|are|be|of)\s+", re.I)
_LEADING = re.compile(r"^\s*(?:would|will|is|are|does|do|can|could)\s+", re.I)
# ... and where it ends: the verb or the rating after it ("... be a severe encounter", "... worth for 4 PCs")
_LIST_END = re.compile(r"\s+(?:be|is|are|was|were|worth|for|to|against|versus|vs\.?|in|on|at)\b|\s+(?:a\s+|an\s+)?"
                       + _RATES.pattern, re.I)


_HOW_MANY = re.compile(r"\bhow\s+many\s+(?:(elite|weak)\s+)?(.+?)\s+(?:make|makes|for|in|do|does|would|should|can|are|is|to)\b",
                       re.I)


def parse_count_question(text: str) -> tuple[str, str | None, Threat, int, int] | None:
    """"How many goblin warriors make a moderate encounter for 4 level 1 PCs?" as (the creature said, its elite/weak
    adjustment, the threat, party size, party level), or None (no "how many", no party, no threat)."""
    m = _HOW_MANY.search(text)
    threat = _THREAT.search(text)
    alias = _THREAT_WORD.search(text) if threat is None else None
    size, level, _ = parse_party(text)
    if m is None or size is None or level is None or (threat is None and alias is None):
        return None
    word = threat.group(1) if threat is not None else alias.group(1) if alias is not None else ""
    said: Threat = cast(Threat, word.lower()) if threat is not None else THREAT_SAID[word.lower()]
    return m.group(2).strip(), m.group(1).lower() if m.group(1) else None, said, size, level


def encounter_check_candidates(text: str) -> list[EncounterSpec]:
    """The creature lists ``text`` may be asking to rate for its stated party, best first; the caller keeps the first
    whose every creature resolves (``creators.chat``: this module knows no creature). None without a party or a word of
    rating (encounter, fight, threat, XP, hard, deadly ...)."""
    from gmprep.core.creators.encounter import parse_encounter

    if not _RATES.search(text):
        return []
    size, level, span = parse_party(text)
    if size is None or level is None:
        return []
    segments: list[str] = []
    if span is not None:
        after = text[span[1]:]
        if m := re.match(r"\s*\)?\s*[:\-\u2013\u2014]\s*(\S.*)", after, re.S):
            segments.append(m.group(1))  # "... for 4 level 3 PCs: 2 goblin warriors, an ogre warrior?"
        before = text[: span[0]]
    else:
        before, after = text, ""
    starts = [m.end() for m in (_LIST_AFTER.search(before), _ASKING.match(before), _LEADING.match(before)) if m]
    for start in starts:
        seg = before[start:]
        if m := _LIST_END.search(seg):
            seg = seg[: m.start()]
        segments.append(re.sub(r"^(?:an?\s+)?(?:encounter|fight|battle|combat)\s+(?:of|with|against)\s+", "", seg))
    if span is not None and (m := _LIST_AFTER.search(after)):  # "... for 4 level-3 PCs with 2 wolves?"
        segments.append(after[m.end():])
    out = []
    for seg in segments:
        spec = parse_encounter(seg.strip().rstrip("?!. "))
        if spec.lines:
            spec.party_size, spec.party_level = size, level
            out.append(spec)
    return out
