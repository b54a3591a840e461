"""A follow-up that edits the conversation's last build: "make it level 7", "make it severe", "now for 5 players".

The chat keeps no state of its own: the request edited is the last earlier user message that the creators read as an
encounter or creature request (``intent``), and the edit is read with the same grammar (a level, a role, a tradition,
a threat, a party). What the edit does not say stays as the earlier request said it. A message is an edit only when it
points back at the build ("make it", "change the encounter", "... instead", "now for ..."): a new request ("make a
level 3 goblin") is read as itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import cast

from pydantic import BaseModel

from gmprep.core.creators import tables
from gmprep.core.creators.intent import (
    THREAT_SAID,
    EncounterRequest,
    is_question,
    parse_creature_request,
    parse_encounter_request,
    parse_party,
    said_level,
    said_role,
    said_tradition,
)
from gmprep.core.creators.models import THREATS, CreatureRequest, Threat

# what the last build is called when an edit points at it
_IT = r"(?:it|that|this|them|him|her|the\s+(?:encounter|fight|battle|creature|npc|monster|stat\s?block|boss|one))"
_LEAD = r"^\s*(?:(?:ok(?:ay)?|now|and|then|actually|also|great|nice|cool|thanks|please)[,!.\s]+)*"
_EDIT = re.compile(_LEAD + rf"(?:(?:make|change|turn|set|bump|raise|lower|drop|rebuild|redo|scale|give)\s+{_IT}\b"
                   r"|(?:what|how)\s+about\b|(?:same|again)\b|(?:now\s+)?(?:for|at|with)\s+\w+)", re.I)
_INSTEAD = re.compile(r"\binstead\b", re.I)
_POINTS_BACK = re.compile(_LEAD + rf"(?:make|change|turn|set|bump|raise|lower|drop|rebuild|redo|scale|give)\s+{_IT}\b", re.I)
_ABOUT = re.compile(_LEAD + r"(?:what|how)\s+about\b", re.I)
_MAX_WORDS = 14  # an edit is short; a long message is a request or a question of its own
# how far back the request edited may be: the last two requests, then the conversation has moved on
LOOK_BACK = 2
_HISTORY = 12  # the user messages read for them
# a threat said in an edit: GM Core's five, and the words GMs use for them ("harder" is no threat: it says no level)
_THREAT_IN_EDIT = re.compile(r"\b(" + "|".join([*THREATS, *THREAT_SAID]) + r")\b", re.I)


class Revision(BaseModel):
    """The request an edit makes of an earlier one, and how it was read (for the chat to say)."""

    creature: CreatureRequest | None = None
    encounter: EncounterRequest | None = None
    earlier: str  # the earlier request as the GM wrote it
    changed: dict[str, str]  # what the edits changed, by field, in words ({"level": "level 7", "threat": "severe"})


def is_edit(question: str) -> bool:
    """Whether ``question`` points back at the last build to change it."""
    if len(question.split()) > _MAX_WORDS:
        return False
    if is_question(question) and not _ABOUT.match(question):
        return False  # "for level 5 PCs, what DC should a lock have?" asks the rules
    return _EDIT.match(question) is not None or _INSTEAD.search(question) is not None


def points_back(question: str) -> bool:
    """Whether ``question`` can only be an edit ("make it severe", "change the encounter ..."): it names no build of
    its own, so without one to edit it is answered as such, not built or searched."""
    return is_edit(question) and _POINTS_BACK.match(question) is not None


def revise(question: str, earlier_messages: Sequence[str]) -> Revision | None:
    """The request ``question`` makes of the last build of the conversation, when ``question`` is an edit
    (``is_edit``) that changes something of it; else None. ``earlier_messages``: the user's, oldest first; the last
    build is the last request among them with the edits made to it since ("make a level 5 bandit captain", "make it
    level 7", then "make it a sniper": the level 7 sniper)."""
    if not is_edit(question):
        return None
    for build in reversed(_builds(earlier_messages)[-LOOK_BACK:]):
        edited = _edit(question, build)
        if edited is not None:
            return edited
    return None


def _builds(earlier_messages: Sequence[str]) -> list[Revision]:
    """The conversation's builds, oldest first, each with the edits made to it since."""
    builds: list[Revision] = []
    for message in earlier_messages[-_HISTORY:]:
        edited = _edit(message, builds[-1]) if builds and is_edit(message) else None
        if edited is not None:
            builds[-1] = edited
            continue
        enc = parse_encounter_request(message)
        req = parse_creature_request(message) if enc is None else None
        if enc is not None or req is not None:
            builds.append(Revision(encounter=enc, creature=req, earlier=message, changed={}))
    return builds


def last_creature(earlier_messages: Sequence[str]) -> Revision | None:
    """The conversation's last build when it is a creature (with the edits made to it since), else None: what "how many
    of them ..." counts."""
    builds = _builds(earlier_messages)
    return builds[-1] if builds and builds[-1].creature is not None else None


def _edit(question: str, build: Revision) -> Revision | None:
    """``build`` with the edit ``question`` makes, or None when it changes nothing of it."""
    if build.encounter is not None:
        enc = _revise_encounter(question, build.encounter)
        return build.model_copy(update={"encounter": enc[0], "changed": {**build.changed, **enc[1]}}) if enc else None
    if build.creature is not None:
        req = _revise_creature(question, build.creature)
        return build.model_copy(update={"creature": req[0], "changed": {**build.changed, **req[1]}}) if req else None
    return None


def _threat(question: str) -> Threat | None:
    m = _THREAT_IN_EDIT.search(question)
    if m is None:
        return None
    word = m.group(1).lower()
    return cast(Threat, word if word in THREATS else THREAT_SAID[word])


def _revise_encounter(question: str, enc: EncounterRequest) -> tuple[EncounterRequest, dict[str, str]] | None:
    update: dict = {}
    changed: dict[str, str] = {}
    threat = _threat(question)
    if threat is not None and threat != enc.threat:
        update.update(threat=threat, threat_stated=True, threat_word=None)
        changed["threat"] = threat
    size, level, _ = parse_party(question)
    if size is not None and 1 <= size <= 8 and size != enc.party_size:
        update.update(party_size=size, size_assumed=False)
        changed["size"] = f"{size} PCs"
    if level is not None and -1 <= level <= 24 and level != enc.party_level:
        update["party_level"] = level
        changed["level"] = f"level {level}"
    if not update:
        return None
    return enc.model_copy(update=update), changed


def _revise_creature(question: str, req: CreatureRequest) -> tuple[CreatureRequest, dict[str, str]] | None:
    update: dict = {}
    changed: dict[str, str] = {}
    lv = said_level(question)
    if lv is not None:
        if -1 <= lv <= 24 and lv != req.level:
            # a level said now is the creature's own: the party's reading of the earlier request no longer holds
            update.update(level=lv, boss_threat=None, lackeys=None, party_size=None, party_level=None)
            changed["level"] = f"level {lv}"
    role = said_role(question)
    if role is not None and role[0] != req.role:
        update["role"] = role[0]
        changed["role"] = role[0]
    threat = _threat(question)
    if req.boss_threat is not None and req.party_level is not None and threat is not None and threat != req.boss_threat:
        # "make it deadly": the boss of the same party at the new threat (``tables.solo_level``)
        solo = tables.solo_level(req.party_size or 4, req.party_level, threat)
        if solo is not None and "level" not in update:
            update.update(level=solo, boss_threat=threat)
            changed["threat"] = threat
    tradition = said_tradition(question)
    if tradition is not None and tradition != req.tradition:
        update["tradition"] = tradition
        changed["tradition"] = f"{tradition} spells"
    if not update:
        return None
    return req.model_copy(update=update), changed
