"""Typed records of the GM creators (encounters, creatures, statblock checks), shared by the CLI and the server."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from gmprep.kg.models import where_cited

Threat = Literal["trivial", "low", "moderate", "severe", "extreme"]
THREATS: tuple[Threat, ...] = ("trivial", "low", "moderate", "severe", "extreme")
Adjustment = Literal["elite", "weak"]
Column = Literal["extreme", "high", "moderate", "low", "terrible"]
Tradition = Literal["arcane", "divine", "occult", "primal"]


class Citation(BaseModel):
    """Where a number comes from: a corpus entry (id) or a table of the creature-building data."""

    id: str  # corpus entry id (pf2e:rule:...) or table id (pf2e:table:creature-building/armor-class)
    name: str
    book: str
    page: str | None = None

    def label(self) -> str:
        """``Name (Book, p. N)``; the page format is ``kg.models.where_cited``'s."""
        return f"{self.name} ({where_cited(self.book, self.page)})"


class UnknownCreature(BaseModel):
    """A creature name in an encounter that matches no Monster Core entry."""

    text: str
    suggestions: list[str] = Field(default_factory=list)  # closest creature names, best first
    start: int | None = None  # char offsets of the name in the parsed text, when known
    end: int | None = None


class EncounterLine(BaseModel):
    """One creature group as written: ``2 elite goblin warriors``."""

    text: str  # the item as written, trimmed
    name: str  # the creature name part (no count, no adjustment)
    count: int = 1
    adjustment: Adjustment | None = None
    level: int | None = None  # the level the GM wrote ("bandit (level 2)"), before elite/weak; None: the entry's
    start: int | None = None  # char offsets of ``text`` in the parsed text
    end: int | None = None


class EncounterSpec(BaseModel):
    """A parsed encounter: the party (when the text states it) and the creature groups."""

    party_size: int | None = None
    party_level: int | None = None
    lines: list[EncounterLine] = Field(default_factory=list)


class EncounterCreature(BaseModel):
    """One creature group with its XP: a Monster Core entry (``id``), or a creature counted at the level the GM wrote
    for it (``id`` None: an NPC from another book, a homebrew foe)."""

    text: str
    id: str | None
    name: str
    count: int
    level: int  # after the elite/weak adjustment
    base_level: int
    adjustment: Adjustment | None = None
    xp_each: int
    book: str | None = None
    page: str | None = None
    start: int | None = None
    end: int | None = None
    hazard: Literal["simple", "complex"] | None = None  # a GM Core hazard, counted by its Hazard Experience rule


class EncounterReport(BaseModel):
    """An encounter evaluated for a party: total XP, threat, budgets, creatures, warnings, citations."""

    party_size: int
    party_level: int
    xp: int
    threat: Threat
    budget: dict[str, int]  # threat -> XP budget for this party size
    creatures: list[EncounterCreature] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    unknown: list[UnknownCreature] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    explanation: list[str] = Field(default_factory=list)  # the arithmetic, one line per step
    structure: str | None = None  # the shape it was built on ("Boss and Lackeys", GM Core's Quick Adventure Groups)

    def cli_json(self) -> dict:
        """The ``gmprep encounter --json`` shape (with the quick group it was built on, when it was)."""
        return ({"structure": self.structure} if self.structure else {}) | {
            "xp": self.xp,
            "threat": self.threat,
            "budget": self.budget,
            "creatures": [
                {k: getattr(c, k) for k in ("text", "id", "count", "level", "adjustment", "xp_each")}
                for c in self.creatures
            ],
            "warnings": self.warnings,
        }


Role = Literal["brute", "skirmisher", "sniper", "soldier", "spellcaster", "skill paragon", "magical striker"]


class CreatureRequest(BaseModel):
    """What a GM asks for: level, role, a concept (name/idea) and optional traits."""

    level: int = Field(ge=-1, le=24)
    role: Role | None = None  # None: the build of the class the concept names ("court wizard"), else a soldier
    concept: str = ""
    traits: list[str] = Field(default_factory=list)
    tradition: Tradition | None = None  # of its spells; None: the closest spellcasting creature's, else arcane
    name: str | None = None  # the NPC's own name the GM gave ("a blacksmith named Gorim"): the stat block's title
    # "a boss for my level 7 party": the level was read from the party's (its size as said; None: four, GM Core's) as
    # the highest whose XP alone is this threat (``tables.solo_level``); the answer says so. None: the creature's own
    boss_threat: Threat | None = None
    # "4 goblin minions for my level 3 party": GM Core's lackeys, at party level - 2; how many were asked (0: not said)
    lackeys: int | None = None
    party_size: int | None = None
    party_level: int | None = None


class StatValue(BaseModel):
    """One number of a statblock and the table column it came from (or falls in)."""

    field: str  # "ac", "hp", "perception", "fort", "ref", "will", "str", ..., "skill:Athletics", "strike:Club", "spell_dc"
    value: int
    column: Column | None = None
    table: str  # table id in the creature-building data
    damage: str | None = None  # for strike damage: the dice expression ("2d8+9")


class Strike(BaseModel):
    """A Strike line: name, melee/ranged, attack bonus, damage expression and type, traits."""

    name: str
    kind: Literal["melee", "ranged"] = "melee"
    attack: int
    attack_column: Column
    damage: str  # "2d8+9"
    damage_type: str = "bludgeoning"
    damage_column: Column
    traits: list[str] = Field(default_factory=list)


class SuggestedAbility(BaseModel):
    """An ability seen on a real Monster Core creature close to the request, cited; its numbers are the lender's, of
    the lender's level."""

    name: str
    text: str
    source_id: str
    source_name: str
    source_level: int | None = None
    book: str | None = None
    page: str | None = None
    source_type: str = "creature"  # the lender's; a road map's ability is its own entry (a class feature, a feat)


class SpellRank(BaseModel):
    """The spells chosen for one rank of a caster (0: its cantrips), theme first (``core/creators/spells.py``)."""

    rank: int
    names: list[str]
    ids: list[str]


class Statblock(BaseModel):
    """A generated creature: every number with its column, strikes, abilities, citations."""

    name: str
    level: int
    role: Role
    traits: list[str] = Field(default_factory=list)
    size: str = "medium"
    stats: list[StatValue] = Field(default_factory=list)
    strikes: list[Strike] = Field(default_factory=list)
    abilities: list[SuggestedAbility] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    tradition: Tradition | None = None  # of its spells, for a role that casts
    tradition_from: str = ""  # the creature whose spells gave the tradition, when inferred
    role_from: str = ""  # the class the concept names, when it gave the role the GM did not say
    role_default: bool = False  # the GM said no role and nothing the concept names gave one: GM Core's soldier
    # GM Core's road map the NPC follows (an NPC that works like a class): its name ("Wizard") and its abilities as
    # printed; the abilities above are then the entries those name
    roadmap: str | None = None
    roadmap_abilities: str | None = None
    archetype: str | None = None  # the archetype the concept names, whose feats lead its abilities
    casting: str = "Innate"  # "Prepared", "Spontaneous": as the road map's spellcasting says
    # a creature casting like a PC (prepared or spontaneous): (rank, slots) from the highest rank down, and its cantrips'
    # count and rank (GM Core, Prepared and Spontaneous Spells)
    slots: list[tuple[int, int]] = Field(default_factory=list)
    cantrips: tuple[int, int] | None = None
    # the spells suggested for its top three ranks and its cantrips (rank 0), theme first (``core/creators/spells.py``)
    spells: list[SpellRank] = Field(default_factory=list)
    skill_actions: bool = False  # the abilities are its best skills' actions (a skill paragon that borrows none)
    speed: int = 25  # feet: GM Core's 25 for a creature that moves like a human, else its ancestry's
    # its senses and languages (GM Core's "Perception and Senses" and "Languages" steps) and where they come from
    senses: list[str] = Field(default_factory=list)
    languages: list[str] = Field(default_factory=list)
    senses_from: str = ""
    languages_from: str = ""
    speed_from: str = ""
    skill_from: str = ""  # a skill the concept names by meaning ("Crafting: ..."), for the statblock's comment  # why, for the statblock's comment

    def stat(self, field: str) -> StatValue | None:
        return next((s for s in self.stats if s.field == field), None)


class StatIssue(BaseModel):
    """A number of a statblock outside its table for the stated level, with a fix."""

    field: str
    value: int
    level: int
    column: str  # where the value falls: "above extreme", "below low", "between high and moderate"...
    expected_range: tuple[int, int]  # lowest..highest value the table allows for this field and level
    message: str  # "AC 25 is above extreme for level 3; high is 19"
    fix_value: int  # the nearest allowed value: the top column's for a value above it, the lowest's below
    start: int  # char offsets of the number in the checked text
    end: int
    fix_text: str = ""  # what a quick fix puts in place of text[start:end] ("22", "+12", "2d12+8")
    citation: Citation | None = None
