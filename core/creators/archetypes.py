"""An NPC whose concept names an archetype ("assassin", "pirate captain", "town medic"): the archetype's own feats as
its abilities, and the skills its dedication requires as its trained ones, read from the entries, never typed in here.

GM Core's Building NPCs: an NPC that works like a PC uses "the class features and feats" of what it is, and for a higher
level one "you can just pick the most emblematic ones" (PC-style Build). An archetype is feats: its dedication (and what
the dedication grants: the Assassin's Mark for Death, the Bounty Hunter's Hunt Prey) and the feats that require it, each
of a level. The role follows the attributes of the skills the dedication requires, as a background's boost decides one
(``creature.background_build``): Stealth (Dexterity) a skirmisher, Athletics (Strength) a soldier, Medicine (Wisdom) a
skill paragon; skills offered as a choice ("trained in Nature or Society") say nothing of it.
"""

from __future__ import annotations

import re

from gmprep.core.creators.models import Role

# what a dedication grants, as it says it: "You gain the Mark for Death activity", "the Reactive Shield fighter feat"
GRANTS = re.compile(r"\b[Yy]ou gain the ([A-Z][\w'-]*(?: (?:[A-Z][\w'-]*|a|an|of|for|the|to))*?) "
                     r"(?:[a-z]+ )?(action|activity|reaction|feat)\b")
# a granted entry that is no encounter ability: exploration and downtime activities, general and skill feats (Additional
# Lore, Multilingual), and Cast a Spell (every casting archetype's)
_NOT_ABILITY = {"exploration", "downtime", "general", "skill"}


def required_skills(prerequisites: str, skills: dict[str, str]) -> list[str]:
    """The skills a dedication's prerequisites require ("trained in Deception, trained in Stealth": Stealth, Deception;
    "trained in Medicine, Battle Medicine": Medicine); none of those offered as a choice ("trained in Nature or
    Society", "either Diplomacy or Intimidation"). ``skills``: skill name -> key attribute."""
    out: list[str] = []
    for part in re.split(r",|\band\b", prerequisites):
        if re.search(r"\b(?:or|either)\b", part):
            continue
        out += [s for s in skills if re.search(r"\b" + re.escape(s) + r"\b", part) and s not in out]
    # physical first, as a background's boosts are read: the skill whose attribute decides the role (an Assassin's
    # Stealth, Dexterity) is the one at the role's best column (``creature._trained``)
    order = ["Str", "Dex", "Int", "Wis", "Cha"]
    return sorted(out, key=lambda s: order.index(skills[s][:3]) if skills[s][:3] in order else len(order))


def archetype_role(prerequisites: str, skills: dict[str, str]) -> Role | None:
    """The role the attributes of the required skills decide (``required_skills``): Strength a soldier, else Dexterity
    a skirmisher, else a mental one a skill paragon; None when no skill is required (an Archer, a Duelist)."""
    said = {skills[s][:3] for s in required_skills(prerequisites, skills)}
    if "Str" in said:
        return "soldier"
    if "Dex" in said:
        return "skirmisher"
    if said & {"Int", "Wis", "Cha"}:
        return "skill paragon"
    return None


def granted(text: str, by_name: dict[str, list]) -> list:
    """The encounter abilities a dedication's text grants, each its entry ("You gain the Mark for Death activity": the
    action; "the Double Slice fighter feat": the feat), not exploration or downtime activities, general or skill feats."""
    out = []
    for m in GRANTS.finditer(text):
        name = m.group(1)
        if name.lower() == "cast a spell":
            continue
        for node in by_name.get(name.lower(), []):
            if node.type in ("action", "feat") and not {t.lower() for t in node.traits} & _NOT_ABILITY:
                if node not in out:
                    out.append(node)
                break
    return out


def pick_feats(feats: list, level: int, k: int = 3) -> list:
    """The archetype's feats an NPC of ``level`` has, the most emblematic first: its dedication, then the highest-level
    feats at or below ``level`` (name order within a level), ``k`` in all; a feat that requires another of the
    archetype's feats only with that one ("Call Your Shot" needs "Play to the Crowd")."""
    names = {f.name.lower() for f in feats}
    at = [f for f in feats if f.level is not None and f.level <= level]
    dedication = [f for f in at if "dedication" in {t.lower() for t in f.traits}][:1]
    chosen = list(dedication)
    for f in sorted((f for f in at if f not in dedication), key=lambda f: (-(f.level or 0), f.name)):
        if len(chosen) >= k:
            break
        needs = {p.strip().lower() for p in re.split(r",|\band\b", str(f.fields.get("prerequisites", "")))}
        needs = {n for n in needs & names if not n.endswith(" dedication")}
        if needs <= {c.name.lower() for c in chosen}:
            chosen.append(f)
    return chosen
