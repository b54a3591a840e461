"""GM Core's Quick Adventure Groups (p. 75, in the "XP Budget" rules entry): encounter shapes to slot monsters and NPCs
into ("Boss and Lackeys (120 XP): One creature of party level + 2, four creatures of party level – 4"), read from the
entry's text, never typed in here.

They are what the encounter builder offers for a theme Monster Core has no creature of (bandits, pirates, a cult):
the people a GM builds with ``gmprep creature``, at the levels the shape gives, each line written with its level so the
note's encounter block counts it ("- 4 bandit lackeys (level -1)").
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from gmprep.common.text import STOP_WORDS

# the rules entry that prints the groups (GM Core p. 75)
QUICK_GROUPS_ID = "pf2e:rule:gm-core--xp-budget"
# GM Core's Choosing Creatures: "from a lowly lackey to a boss so mighty it could defeat the entire party
# single-handedly", the solo boss of a boss fight (``encounter._boss_shapes``)
CHOOSING_CREATURES_ID = "pf2e:rule:gm-core--choosing-creatures"
# GM Core's Hazard Experience: "The XP for a complex hazard is equal to the XP for a monster of the same level, and the
# XP for a simple hazard is one-fifth of that" (``encounter.evaluate_encounter``)
HAZARD_XP_ID = "pf2e:rule:gm-core--hazard-experience"

_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
_GROUP = re.compile(r"\*\*(?P<name>[^*()]+?)\s*\((?P<xp>\d+)\s*XP\)\s*:?\s*\*\*\s*:?\s*(?P<body>[^\n]+)")
_CLAUSE = re.compile(
    r"(?P<n>\d+|" + "|".join(_NUMBERS) + r")\s+creatures?\s+of\s+party\s+level(?:\s*(?P<sign>[+\-–−])\s*(?P<d>\d+))?",
    re.I,
)


class GroupMember(BaseModel):
    """One clause of a group: ``count`` creatures of party level + ``delta``; ``part``: the group's word for them
    ("Boss", "Lackeys"), when its name gives one per clause."""

    count: int
    delta: int
    part: str | None = None


class QuickGroup(BaseModel):
    name: str  # "Boss and Lackeys"
    xp: int  # for four characters, as printed
    members: list[GroupMember]


def parse_quick_groups(text: str) -> list[QuickGroup]:
    """The groups of the entry's text: each bold "Name (N XP):" with its clauses; a line that does not read as one
    (no clause) is skipped."""
    out = []
    for m in _GROUP.finditer(text):
        members = []
        for c in _CLAUSE.finditer(m.group("body")):
            n = c.group("n").lower()
            delta = int(c.group("d") or 0) * (-1 if c.group("sign") and c.group("sign") != "+" else 1)
            members.append(GroupMember(count=int(n) if n.isdigit() else _NUMBERS[n], delta=delta))
        if not members:
            continue
        parts = [p.strip() for p in re.split(r"\s+and\s+", m.group("name").strip())]
        if len(parts) == len(members) > 1:  # "Boss and Lackeys": a word per clause ("Elite Enemies" names them all)
            for member, part in zip(members, parts, strict=True):
                member.part = part
        out.append(QuickGroup(name=m.group("name").strip(), xp=int(m.group("xp")), members=members))
    return out


def singular(word: str) -> str:
    """"bandits" -> "bandit", "thieves" -> "thief", "mercenaries" -> "mercenary"."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return word[:-3] + "y"
    if w.endswith("ves") and len(w) > 4:
        return word[:-3] + "f"
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return word[:-1]
    return word


def theme_people(theme: str, person_words: frozenset[str] = frozenset(), margin=None) -> tuple[str, str]:
    """(one, several): what to call the theme's people in an encounter line: its words up to the first small word or comma,
    the last made singular ("bandits on the road" -> "bandit", "bandits"), cut after its last word that names a
    background or class (``person_words``: "city guard ambush" -> "city guard"), else after its word closest to people
    in meaning (``margin``, ``concept.people_margin``: "thieves guild" -> "thief", "thieves"; not "2 thieves guild");
    the plural is the theme's word when it was written plural, else the singular."""
    words: list[str] = []
    for w in re.findall(r"[A-Za-z][A-Za-z'-]*|[,;:.]", theme):
        if w.lower() in STOP_WORDS or not w[0].isalpha():  # a small word or a comma ends the phrase
            if words:
                break
            continue
        words.append(w)
    # a phrase that names people by a background or class word ends there: "city guard ambush" -> city guard
    named = [i for i, w in enumerate(words) if singular(w).lower() in person_words]
    if named:
        words = words[: named[-1] + 1]
    elif len(words) > 1 and margin is not None:
        scores = [margin(w) for w in words]
        if all(v is not None for v in scores):
            words = words[: max(range(len(words)), key=lambda i: scores[i]) + 1]
            named = [len(words) - 1]  # a noun of people too: "mercenary company" -> mercenaries
    if not words:
        return "", ""
    one = " ".join([*words[:-1], singular(words[-1])])
    if one != " ".join(words):
        return one, " ".join(words)
    # written singular: a background's or class's word is a noun of people, made plural ("city guard" -> guards)
    return one, " ".join([*words[:-1], _plural(words[-1])]) if named else one


def _plural(word: str) -> str:
    if re.search(r"(?:s|x|z|ch|sh)$", word, re.I):
        return word + "es"
    if re.search(r"[^aeiou]y$", word, re.I):
        return word[:-1] + "ies"
    return word + "s"


def member_name(member: GroupMember, one: str, several: str) -> str:
    """The line's name for a member: the theme's people with the group's word for them ("bandit boss", "bandit
    lackeys"), else the theme's people alone."""
    if member.part:
        return f"{one} {member.part.lower()}"
    return several if member.count > 1 else one
