"""A hazard's numbers from GM Core's Building Hazards tables ("Make a level 3 trap").

GM Core (p. 109) builds a hazard from four tables, all in the corpus as rules entries and read from them here (no
copy of their numbers in code): Table 2-13 Stealth and Disable DCs (extreme, high, low), Table 2-14 Minimum
Proficiency (high, moderate ranks by level), Table 2-15 Defenses (AC, saves, Hardness, HP) and Table 2-16 Offense
(simple and complex attack bonuses and damage, extreme and hard DCs). The book leaves the columns to the GM ("choose
the value that is most appropriate for the concept"); gmprep takes high Stealth and Disable DCs, high AC and
Fortitude and low Reflex for a physical trap, a hard DC, and says so. Its skill to disable is the one Hazard Types
names as the most common for the kind: Thievery for traps, Survival for environmental hazards, Religion for haunts;
haunts and purely magical traps lack a physical component, so they get no defenses ("When building a purely magical
or formless hazard, you can skip this section").
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from gmprep.core.creators.models import Citation
from gmprep.kg.models import Node

STEALTH_DISABLE_ID = "pf2e:rule:gm-core--stealth-and-disable"
DEFENSES_ID = "pf2e:rule:gm-core--defenses"
OFFENSE_ID = "pf2e:rule:gm-core--offense"
HAZARD_TYPES_ID = "pf2e:rule:gm-core--hazard-types"
HAZARD_RULE_IDS = (STEALTH_DISABLE_ID, DEFENSES_ID, OFFENSE_ID, HAZARD_TYPES_ID)

HazardKind = Literal["trap", "environmental", "haunt"]
# Hazard Types: "Thievery is the most common skill used to disable traps", "Survival is the most common skill used to
# disable environmental hazards", "using Religion for an exorcism is common" (haunts)
DISABLE_SKILL: dict[str, str] = {"trap": "Thievery", "environmental": "Survival", "haunt": "Religion"}
# the words of a request that ask for a hazard ("a level 3 trap", "a complex haunt"), and what each says
HAZARD_WORDS = {"trap": "trap", "traps": "trap", "hazard": "trap", "hazards": "trap", "haunt": "haunt",
                "haunts": "haunt", "environmental": "environmental", "magical": "magical", "mechanical": "mechanical",
                "complex": "complex", "simple": "simple"}


class HazardRequest(BaseModel):
    level: int
    kind: HazardKind = "trap"
    complex: bool = False
    magical: bool = False
    name: str = ""  # what the GM called it ("collapsing ceiling"): the stat block's title


class HazardStatblock(BaseModel):
    level: int
    kind: HazardKind
    complex: bool
    magical: bool
    lines: list[str] = Field(default_factory=list)  # the stat block's markdown lines
    citations: list[Citation] = Field(default_factory=list)


# the words that name the thing asked for as a hazard, as the concept's head ("a collapsing ceiling trap"; "hazard" as
# its first word too: "a hazard, a collapsing ceiling"); the other hazard words only describe one ("complex", "magical")
HAZARD_HEADS = frozenset({"trap", "traps", "hazard", "hazards", "haunt", "haunts"})


def hazard_request(level: int, concept: str) -> HazardRequest | None:
    """The hazard a creature request's concept asks for when every word of it is a hazard word ("trap", "complex
    magical trap", "haunt"), or when its last word names a hazard (or its first is "hazard") and the rest says which
    ("collapsing ceiling trap", "hazard collapsing ceiling": its name; a "trap master" or a "trap-making kobold" is a
    person), else None."""
    words = concept.lower().split()
    if not words:
        return None
    name = ""
    if any(w not in HAZARD_WORDS for w in words):
        if words[-1] in HAZARD_HEADS:
            head = len(words) - 1
            while head > 0 and words[head - 1] in HAZARD_WORDS:
                head -= 1  # "collapsing ceiling complex trap": complex trap
            rest, words = words[:head], words[head:]
        elif words[0] in ("hazard", "hazards"):  # "a hazard, a collapsing ceiling"; a "trap master" is a person
            tail = 1
            while tail < len(words) and words[tail] in HAZARD_WORDS:
                tail += 1
            rest, words = words[tail:], words[:tail]
        else:
            return None
        if not rest or any(not re.fullmatch(r"[a-z][a-z'-]*", w) for w in rest):
            return None
        name = " ".join(rest)
    said = {HAZARD_WORDS[w] for w in words}
    kind: HazardKind = "haunt" if "haunt" in said else "environmental" if "environmental" in said else "trap"
    return HazardRequest(level=level, kind=kind, complex="complex" in said, magical="magical" in said, name=name)


def _rows(text: str, caption: str) -> dict[str, list[str]]:
    """The rows of the markdown table after ``caption`` in a rules entry: first cell (a level, "–1" read as "-1")
    -> the other cells."""
    at = text.find(caption)
    rows: dict[str, list[str]] = {}
    if at < 0:
        return rows
    for line in text[at:].splitlines()[1:]:
        if not line.strip():
            if rows:
                break
            continue
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not cells or set(cells[0]) <= set("-: ") or not re.match(r"^[–-]?\d", cells[0]):
            continue
        rows[cells[0].replace("–", "-")] = cells[1:]
    return rows


def _proficiency(text: str, level: int) -> tuple[str, str]:
    """(high, moderate) minimum proficiency for ``level`` from Table 2-14's rows ("1–4", "0 or lower", "19 or
    higher")."""
    at = text.find("Table 2–14")
    for line in text[at:].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3:
            continue
        span = cells[0].replace("–", "-")
        if m := re.match(r"^(\d+)-(\d+)$", span):
            ok = int(m.group(1)) <= level <= int(m.group(2))
        elif m := re.match(r"^(-?\d+) or lower$", span):
            ok = level <= int(m.group(1))
        elif m := re.match(r"^(-?\d+) or higher$", span):
            ok = level >= int(m.group(1))
        else:
            continue
        if ok:
            return cells[1], cells[2]
    return "Trained", "Trained"


def _rank(cell: str) -> str:
    return cell.split(" (")[0].lower()


def build_hazard(req: HazardRequest, rules: dict[str, Node]) -> HazardStatblock:
    """The stat block of ``req`` from GM Core's tables; ``rules``: rule id -> its entry (``HAZARD_RULE_IDS``)."""
    def text(rid: str) -> str:
        node = rules.get(rid)
        return (node.text or "") if node is not None else ""

    lv = str(req.level)
    sd = _rows(text(STEALTH_DISABLE_ID), "Table 2–13").get(lv)
    de = _rows(text(DEFENSES_ID), "Table 2–15").get(lv)
    of = _rows(text(OFFENSE_ID), "Table 2–16").get(lv)
    if sd is None or of is None:
        raise ValueError(f"GM Core's hazard tables have no level {req.level} (they run from -1 to 24), or the rules "
                         "entries holding them are missing from the store")
    high_rank, moderate_rank = (_rank(c) for c in _proficiency(text(STEALTH_DISABLE_ID), req.level))
    high_dc = int(sd[1])
    physical = req.kind != "haunt" and not (req.magical and req.kind == "trap")
    traits = [t for t in ("magical" if req.magical else None,
                          "mechanical" if req.kind == "trap" and not req.magical else None,
                          req.kind if req.kind != "environmental" else "environmental") if t]
    name = ("Magical " if req.magical else "") + \
        {"trap": "Trap", "environmental": "Environmental Hazard", "haunt": "Haunt"}[req.kind]
    if req.complex:
        name = "Complex " + name
    if req.name:
        name = req.name.title()
    lines = [f"### {name} (level {req.level})", "",
             f"**Hazard {req.level}** ({', '.join(['common', *traits])})" + (" — complex hazard" if req.complex else ""),
             ""]
    stealth = f"**Stealth** +{high_dc - 10}" if req.complex else f"**Stealth** DC {high_dc}"
    lines += [f"{stealth} ({moderate_rank}) <!-- high, Table 2–13; {moderate_rank}: the moderate minimum proficiency "
              f"for level {req.level}, Table 2–14{'; a complex hazard rolls Stealth for initiative: the DC - 10' if req.complex else ''} -->", ""]
    lines += ["**Description** _what the PCs see, and what sets it off_", ""]
    skill = DISABLE_SKILL[req.kind]
    lines += [f"**Disable** DC {high_dc} {skill} ({moderate_rank}) _how_ <!-- high, Table 2–13; {skill}: the most "
              f"common skill to disable a{'n' if req.kind == 'environmental' else ''} {req.kind}"
              f"{' hazard' if req.kind == 'environmental' else ''} (Hazard Types) -->", ""]
    if req.magical and req.kind == "trap":
        lines += ["_Counteracting: a magical trap can usually be counteracted by dispel magic (Hazard Types)._", ""]
    if physical and de is not None:
        hp = de[7].replace("–", "-").split("-")
        mid = (int(hp[0]) + int(hp[-1])) // 2
        lines += [f"**AC** {de[1]}; **Fort** {de[4]}, **Ref** {de[5]}; **Hardness** {de[6].split('–')[0]}; "
                  f"**HP** {mid} (BT {mid // 2}) <!-- AC high, Fort high, Ref low; Hardness and HP, Table 2–15 "
                  f"(Hardness {de[6]}, HP {de[7]}; the Broken Threshold is usually half the HP) -->", ""]
    atk = of[0] if not req.complex else of[1]
    dmg = re.sub(r"\s*\(\d+\)", "", of[2] if not req.complex else of[3])
    lines += [("**Routine** _(1 action)_ each round: " if req.complex else "[reaction] **Trigger** _what sets it off_; "
               "**Effect** ")
              + f"Strike +{atk.lstrip('+')}, **Damage** {dmg} _type_, or a DC {of[5]} save (DC {of[4]} for an extreme "
              f"one) <!-- Table 2–16: {'complex' if req.complex else 'simple'} attack and damage, hard DC; "
              f"{'simple hazards deal about twice the damage of complex ones' if not req.complex else 'a complex hazard acts each round'} -->"]
    if req.complex:
        lines += ["", "**Reset** _how it resets_"]
    cites = []
    for rid in (STEALTH_DISABLE_ID, DEFENSES_ID if physical else None, OFFENSE_ID, HAZARD_TYPES_ID):
        node = rules.get(rid) if rid else None
        if node is not None:
            cites.append(Citation(id=node.node_id, name=node.name, book=node.book or "", page=node.page))
    return HazardStatblock(level=req.level, kind=req.kind, complex=req.complex, magical=req.magical, lines=lines,
                           citations=cites)


def render_hazard_markdown(h: HazardStatblock) -> str:
    return "\n".join(h.lines) + "\n\nNumbers: " + "; ".join(c.label() for c in h.citations) + "\n"
