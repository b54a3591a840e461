"""Build a creature or NPC from GM Core's Building Creatures tables, by level and role.

Every number is a cell of a table at the requested level; the role picks the column (the roles
follow GM Core's creature roadmaps in Building Creatures: a brute hits hard with high HP and low defences, a
sniper has high Perception and ranged damage, a spellcaster high spell DC and low AC, ...). Range
cells (HP, low skills) give their middle value. Abilities are suggested from real Monster Core
creatures within a few levels (``LEVEL_WINDOW``) that match the concept's words and meaning and the role, and are cited.
"""

from __future__ import annotations

import collections
import logging
import re
from typing import cast

from gmprep.core.creators import concept, intent, roadmaps, spells, tables
from gmprep.core.creators.models import (
    Citation,
    CreatureRequest,
    Role,
    SpellRank,
    Statblock,
    StatValue,
    Strike,
    SuggestedAbility,
    Tradition,
)
from gmprep.kg.models import Node, where_cited

log = logging.getLogger(__name__)

# role -> field -> column (the field's table is in _FIELD_TABLE)
ROLES: dict[str, dict[str, str]] = {
    "brute": {"perception": "low", "str": "extreme", "dex": "low", "con": "high", "int": "low", "wis": "low", "cha": "low",
              "ac": "low", "fort": "high", "ref": "low", "will": "low", "hp": "high", "attack": "moderate",
              "damage": "extreme", "skill:Athletics": "high", "skill:Intimidation": "moderate"},
    "skirmisher": {"perception": "moderate", "str": "moderate", "dex": "high", "con": "moderate", "int": "low", "wis": "moderate",
                   "cha": "low", "ac": "high", "fort": "low", "ref": "high", "will": "moderate", "hp": "moderate",
                   "attack": "high", "damage": "moderate", "skill:Acrobatics": "high", "skill:Stealth": "moderate"},
    "sniper": {"perception": "high", "str": "low", "dex": "high", "con": "moderate", "int": "low", "wis": "moderate", "cha": "low",
               "ac": "moderate", "fort": "low", "ref": "high", "will": "moderate", "hp": "low", "attack": "high",
               "damage": "high", "skill:Stealth": "high", "skill:Survival": "moderate"},
    "soldier": {"perception": "moderate", "str": "high", "dex": "moderate", "con": "high", "int": "low", "wis": "moderate",
                "cha": "low", "ac": "high", "fort": "high", "ref": "moderate", "will": "low", "hp": "high",
                "attack": "high", "damage": "high", "skill:Athletics": "high", "skill:Intimidation": "moderate"},
    "spellcaster": {"perception": "moderate", "str": "low", "dex": "moderate", "con": "low", "int": "high", "wis": "moderate",
                    "cha": "moderate", "ac": "low", "fort": "low", "ref": "moderate", "will": "high", "hp": "low",
                    "attack": "low", "damage": "low", "spell_dc": "high", "spell_attack": "high",
                    "skill:Arcana": "high", "skill:Occultism": "moderate"},
    "skill paragon": {"perception": "high", "str": "low", "dex": "high", "con": "moderate", "int": "moderate", "wis": "moderate",
                      "cha": "high", "ac": "moderate", "fort": "low", "ref": "high", "will": "moderate", "hp": "moderate",
                      "attack": "moderate", "damage": "moderate", "skill:Deception": "extreme", "skill:Thievery": "high",
                      "skill:Society": "high"},
    "magical striker": {"perception": "moderate", "str": "high", "dex": "moderate", "con": "moderate", "int": "low", "wis": "moderate",
                        "cha": "moderate", "ac": "high", "fort": "moderate", "ref": "moderate", "will": "moderate",
                        "hp": "moderate", "attack": "high", "damage": "high", "spell_dc": "moderate",
                        "spell_attack": "moderate", "skill:Arcana": "moderate"},
}
_FIELD_TABLE = {"perception": "perception", "ac": "armor-class", "fort": "saving-throws", "ref": "saving-throws",
                "will": "saving-throws", "hp": "hit-points", "attack": "strike-attack-bonus", "damage": "strike-damage",
                "spell_dc": "spell-dc", "spell_attack": "spell-attack"}
_WEAPON = {"brute": ("Greatclub", "melee", "bludgeoning"), "skirmisher": ("Shortsword", "melee", "piercing"),
           "sniper": ("Longbow", "ranged", "piercing"), "soldier": ("Longsword", "melee", "slashing"),
           "spellcaster": ("Staff", "melee", "bludgeoning"), "skill paragon": ("Dagger", "melee", "piercing"),
           "magical striker": ("Spear", "melee", "piercing")}


def table_for(field: str) -> str:
    if field in tables.data()["building"]:
        return field
    if field.startswith("skill:"):
        return "skills"
    if field in ("str", "dex", "con", "int", "wis", "cha"):
        return "attribute-modifiers"
    return _FIELD_TABLE[field]


def _value(tid: str, level: int, column: str) -> tuple[int, str, str | None]:
    """(value, column actually used, dice) for a cell; a "—" cell falls back to the next column down."""
    cols = tables.columns(tid)
    for col in cols[cols.index(column):]:
        c = tables.cell(tid, level, col)
        if c is None:
            continue
        if isinstance(c, dict):
            return int(c["mean"]), col, str(c["dice"])
        lo, hi = tables.cell_range(tid, level, col)  # type: ignore[misc]
        return (lo + hi) // 2 if tid == "hit-points" else hi, col, None
    raise ValueError(f"no value in {tid} at level {level}")


# A caster's key skill is its tradition's (Player Core's skills: Arcana, Religion, Occultism, Nature): a "cultist
# priest" built as a spellcaster had Arcana and Occultism and arcane innate spells, whatever it worshipped.
TRADITION_SKILL = {"arcane": "Arcana", "divine": "Religion", "occult": "Occultism", "primal": "Nature"}
_SPELLS = re.compile(r"\*\*(Arcane|Divine|Occult|Primal)(?: [A-Za-z]+)? Spells\*\*")


def _plan(role: str, tradition: str | None) -> dict[str, str]:
    """The role's columns, its Arcana made the tradition's skill (an occult caster's second skill is Arcana)."""
    plan = dict(ROLES[role])
    skill = TRADITION_SKILL.get(tradition or "")
    if not skill or "skill:Arcana" not in plan or skill == "Arcana":
        return plan
    out: dict[str, str] = {}
    for field, column in plan.items():
        if field == "skill:Arcana":
            out[f"skill:{skill}"] = column
        elif field == f"skill:{skill}":
            out["skill:Arcana"] = column
        else:
            out[field] = column
    return out


def infer_tradition(lenders: list, k: int = 5) -> tuple[Tradition, str] | None:
    """(tradition, creature name) of the first of the ``k`` best lenders that casts spells, or None."""
    for node in lenders[:k]:
        m = _SPELLS.search(node.text)
        if m:
            return cast(Tradition, m.group(1).lower()), node.name
    return None


def class_build(node, spellcasting=None) -> tuple[Role, Tradition | None]:
    """The role (and tradition) a Player Core class is built as, from its own entry: a class with a "<Class>
    Spellcasting" feature is a spellcaster, of the one tradition that feature names (a cleric's divine; a witch's
    patron or a sorcerer's bloodline decides, so none); else its key attribute: Strength a soldier (a brute with 12 Hit
    Points a level, the barbarian), Dexterity a skirmisher, a mental one a skill paragon (alchemist, investigator)."""
    if spellcasting is not None:
        said = set(re.findall(r"\b(arcane|divine|occult|primal)\b", spellcasting.text.lower()))
        return "spellcaster", cast(Tradition, said.pop()) if len(said) == 1 else None
    key = str(node.fields.get("key_attribute", ""))
    if "Str" in key:
        return ("brute" if str(node.fields.get("hp", "")).strip() == "12" else "soldier"), None
    if "Dex" in key:
        return "skirmisher", None
    return "skill paragon", None


_ATTR = {"Str": "str", "Dex": "dex", "Con": "con", "Int": "int", "Wis": "wis", "Cha": "cha"}


def background_attributes(node) -> list[str]:
    """The attributes a background's restricted boost may go to ("One must be to Intelligence or Wisdom": int, wis),
    physical first (Strength, Dexterity: they decide ``background_build``'s role), Constitution last; [] for two free
    boosts."""
    said = [a.strip() for a in str(node.fields.get("boosts", "")).split(",")[0].split("/")]
    if len(said) >= 6:
        return []
    order = ["Str", "Dex", "Int", "Wis", "Cha", "Con"]
    return [_ATTR[a] for a in order if a in said]


def background_build(node) -> tuple[Role | None, list[str]]:
    """(role, skills) a Player Core background gives an NPC, from its own entry: the attribute boost it restricts
    ("One must be to Intelligence or Charisma": Cha/Int) decides the role, Strength a soldier, else Dexterity a
    skirmisher, else a mental one a skill paragon (Constitution says nothing of the role; two free boosts, None); its
    trained skills ("Diplomacy, Mercantile Lore") are the NPC's."""
    boosts = str(node.fields.get("boosts", "")).split(",")[0]
    said = set(boosts.split("/"))
    role: Role | None = None
    if len(said) < 6:
        role = "soldier" if "Str" in said else "skirmisher" if "Dex" in said else \
            "skill paragon" if said & {"Int", "Wis", "Cha"} else None
    raw = re.sub(r"\*\*|\([^)]*\)", "", str(node.fields.get("skills", "")))
    skills = []
    for part in raw.split(","):
        name = " ".join(re.sub(r"\bLore(?: Lore)+\b", "Lore", part.split(" or ")[0]).split())
        if re.fullmatch(r"[A-Z][A-Za-z'-]+(?: [A-Z][A-Za-z'-]+)*", name):
            skills.append(name)
    return role, skills


def named_background(req: CreatureRequest, resolver):
    """The Player Core background the concept names (all of its name's words: "street urchin", "goblin merchants"),
    the longest first, or None."""
    if resolver is None or resolver.resolve(req.concept) is not None:
        return None  # a creature named whole is that creature: "skeleton guard", "dwarf warrior"
    said = re.findall(r"[a-z]+", req.concept.lower())
    words = set(said) | {w[:-1] for w in said if w.endswith("s")}
    best = None
    for node in getattr(resolver, "backgrounds", []):
        name = re.findall(r"[a-z]+", re.sub(r"\([^)]*\)", "", node.name).lower())
        if name and set(name) <= words and (best is None or len(name) > best[0]):
            best = (len(name), node)
    return best[1] if best else None


_STRIKE = re.compile(r"\*\*(Melee|Ranged) strike\*\*[^+\-\u2013\n]*([+\-\u2013]\d+)")


def creature_build(node) -> Role | None:
    """The role a Monster Core creature is built as, read off its stat block: it casts (spellcaster); a mental
    attribute above Strength and Dexterity (skill paragon); Dexterity above Strength (a sniper when its best Strike is
    ranged, else a skirmisher); else Strength (a brute when its Constitution is higher still, the Forest Troll; else a
    soldier). None without six attribute modifiers."""
    if "Spells**" in node.text:
        return "spellcaster"
    try:
        st, dx, co, in_, wi, ch = (int(str(v).replace("\u2013", "-")) for v in node.fields.get("abilityMods") or [])
    except ValueError:
        return None
    if max(in_, wi, ch) > max(st, dx):
        return "skill paragon"
    if dx > st:
        best: dict[str, int] = {}
        for kind, bonus in _STRIKE.findall(node.text):
            best[kind] = max(best.get(kind, -99), int(bonus.replace("\u2013", "-")))
        return "sniper" if best.get("Ranged", -99) > best.get("Melee", -99) else "skirmisher"
    return "brute" if co > st else "soldier"


def infer_role(req: CreatureRequest, resolver) -> tuple[Role, Tradition | None, str, Node | None]:
    """(role, tradition, name, the entry it is read from) for a request that says no role: the build of the class
    its concept names ("court wizard", "halfling rogues"), else of the Monster Core creature it names whole ("skeleton
    guard"), else of the background it names ("goblin merchant": ``background_build``), else of the closest creature
    named with what it does ("goblin archer": the Hobgoblin Archer), else of the closest creature the concept names by
    its kind (a "swamp hag": the Sweet Hag's spellcaster; a "troll": the Forest Troll's brute), else GM Core's soldier,
    the all-round build. Before the closest creatures, an archetype the concept names ("assassin") whose dedication
    requires skills: their attributes (``archetypes.archetype_role``)."""
    if resolver is None:
        return "soldier", None, "", None
    said = _concept_words(req.concept, resolver, modifiers=False)
    for node in resolver.classes:
        if node.name.lower() in said:
            role, tradition = class_build(node, resolver.spellcasting.get(node.node_id))
            return role, tradition, node.name, node
    words = _concept_words(req.concept, resolver)  # a "giant spider" is a spider
    exact = resolver.resolve(req.concept)
    if exact is not None and creature_build(exact) is not None:
        return cast(Role, creature_build(exact)), None, exact.name, exact
    background = named_background(req, resolver)
    if background is not None:
        from_background = background_build(background)[0]
        if from_background is not None:
            return from_background, None, f"{background.name} background", background
    archetype = _named_archetype(req, resolver)
    if archetype is not None:
        from_archetype = resolver.archetype_build(archetype, req.level)[0]
        if from_archetype is not None:
            return from_archetype, None, f"{archetype.name} archetype", archetype
    creatures = resolver.creatures()
    traits = {t.lower() for n in creatures for t in n.traits}
    lenders = ranked_lenders(req, resolver)
    # a word of the concept that names no creature kind (no trait, no creature name's first word: "ogre" of "Ogre
    # Warrior") is what the creature does ("archer", "scout"): the closest creature named with it (the Hobgoblin Archer
    # for a "goblin archer") says the build before one of the kind only does
    names = [re.findall(r"[a-z]+", n.name.lower()) for n in creatures]
    doing = words - traits - {w[0] for w in names if w}
    # the kind's closest creature wherever it ranks: a person's lenders are Monster Core's people of every level, so
    # at level 8 the goblins (levels -1 to 1) rank below the humans near 8, and a goblin shaman built as a caster at
    # level 3 was a soldier at level 8
    # the creature named with what it does, of any level when none near is (the Hobgoblin Archer, level 2, builds a
    # level 9 skeleton archer too); a person's lenders are already the people of every level, and a goblin boss is no
    # Ogre Boss
    doers = [n for n in lenders if doing & set(re.findall(r"[a-z]+", n.name.lower()))]
    if not doers and _person(req, resolver) is None:
        doers = sorted((n for n in creatures if n.level is not None and doing & set(re.findall(r"[a-z]+", n.name.lower()))),
                       key=lambda n: (abs(n.level - req.level), n.name))
    of_kind = _kind_reader(words, req.concept, resolver)
    for node in doers[:1] + [n for n in lenders if of_kind(n)][:5]:
        built = creature_build(node)
        if built is not None:
            return built, None, node.name, node
    return "soldier", None, "", None


def build_creature(req: CreatureRequest, resolver=None) -> Statblock:
    """A statblock whose every number is a table value for ``req.level``, columns chosen by role (the GM's, else the
    one of the class the concept names: ``infer_role``)."""
    role_from = ""
    by_default = False  # nothing the concept names gave the build: GM Core's soldier
    read: list[Node] = []  # the entries the build was read from, cited with the tables
    source = None
    # an ancestry said by its adjective ("elven archer", "dwarven smith") is the kind the request names: its trait
    if resolver is not None and not req.traits and hasattr(resolver, "ancestry_adjective"):
        adjectives = [t for w in re.findall(r"[a-z]+", req.concept.lower()) if (t := resolver.ancestry_adjective(w))]
        if adjectives:
            req = req.model_copy(update={"traits": list(dict.fromkeys(adjectives))})
    shown_name = req.concept
    said_role = intent.said_role(req.concept) if req.role is None else None
    if said_role is not None and not (resolver is not None and hasattr(resolver, "resolve") and
                                      resolver.resolve(req.concept)):
        # a role the concept says ("bugbear brute") is the GM's role, as the chat reads "level 3 brute: a bugbear": the
        # word is no creature's name to match (the Zombie Brute's build); a creature named whole keeps its own build
        req = req.model_copy(update={"role": said_role[0], "concept": said_role[1]})
    if req.role is None:
        role, from_class, role_from, source = infer_role(req, resolver)
        if req.tradition and "spell_dc" not in ROLES[role] and (source is None or source.type != "class"):
            # a tradition said ("a cult leader who casts divine spells") is spells: GM Core's spellcaster, not a
            # soldier whose build drops the tradition; a class the concept names keeps its own build
            role, role_from, source = "spellcaster", "", None
        by_default = source is None and not role_from and role == "soldier"
        read += [source] if source is not None else []
        req = req.model_copy(update={"role": role, "tradition": req.tradition or from_class})
    assert req.role is not None
    lenders = ranked_lenders(req, resolver) if resolver is not None else []
    tradition, tradition_from = req.tradition, ""
    if "spell_dc" in ROLES[req.role] and tradition is None:
        tradition, tradition_from = infer_tradition(lenders) or ("arcane", "")
    elif "spell_dc" not in ROLES[req.role]:
        tradition = None
    plan = _plan(req.role, tradition)
    # an NPC that works like a class (the concept names it, the GM named no role) follows GM Core's road map for it
    roadmap = resolver.roadmap(source, req.concept) if source is not None and source.type == "class" and \
        getattr(resolver, "roadmaps", None) else None
    focus = False
    road_abilities: list[Node] = []
    if roadmap is not None:
        plan = roadmap_plan(roadmap.columns, plan)
        read += [resolver.roadmaps_entry]
        road_abilities = [n for _, n in resolver.roadmap_abilities(roadmap, source, req.level) if n is not None]
        # a map that lists no spell DC but gives spells (the champion's devotion spells, focus spells): GM Core's Focus
        # Spells say "Use the same DC and spell attack modifier as any other spell", and its Spell DC section "the
        # moderate numbers for creatures that have some supplemental spells but are focused more on combat"
        focus_spells = [n for n in road_abilities if re.search(r"\bspells\b", n.name, re.I)]
        if "spell_dc" not in plan and focus_spells:
            plan |= {"spell_dc": "moderate", "spell_attack": "moderate"}
            named = set(re.findall(r"\b(arcane|divine|occult|primal)\b", " ".join(n.text for n in focus_spells).lower()))
            tradition = cast(Tradition, named.pop()) if len(named) == 1 else tradition
            focus = True
        if "spell_dc" not in plan:
            tradition = None
    # a background the concept names gives its trained skills, whatever the role: its first at the role's best skill
    # column (a merchant's Diplomacy), a Lore one column below (Mercantile Lore); one extreme skill stays the rule,
    # so the role's own extreme one (a skill paragon's Deception) steps down to high
    background: Node | None = None
    if source is not None and source.type == "background":  # the role came from it: found once
        background = source
    else:
        background = named_background(req, resolver) if resolver is not None else None
        read += [background] if background is not None else []
    if background is not None:
        plan = _trained(plan, background_build(background)[1])
        # ... and its restricted boost is one of the NPC's strong attributes: a scholar's Intelligence (Intelligence or
        # Wisdom) is high, not the skill paragon's moderate; nothing moves where one of them is high already
        options = background_attributes(background)
        acols = tables.columns("attribute-modifiers")
        if options and all(acols.index(plan[a]) > acols.index("high") for a in options):
            # Strength or Dexterity where offered (they chose the role), else the option the role rates best
            physical = [a for a in options if a in ("str", "dex")]
            attr = physical[0] if physical else min(options, key=lambda a: acols.index(plan[a]))
            plan[attr] = "high"
    # an archetype the concept names ("assassin", "pirate captain"): the skills its dedication requires are trained like
    # a background's, and its feats at this level are abilities (``CreatureResolver.archetype_build``)
    archetype: Node | None = None
    arch_abilities: list[Node] = []
    if roadmap is None and resolver is not None:
        archetype = source if source is not None and source.type == "archetype" else _named_archetype(req, resolver)
    if archetype is not None:
        _, arch_skills, arch_abilities = resolver.archetype_build(archetype, req.level)
        plan = _trained(plan, arch_skills)
        read += [archetype] if archetype is not source else []
    # nothing named says the skills (no background, archetype or class): the skill the concept names by meaning, when
    # one leads clearly (``concept.closest_skill``: a blacksmith's Crafting, a healer's Medicine), trained like a
    # background's first; not for a creature the concept names whole, whose skills are its own kind's
    skill_from = ""
    if background is None and archetype is None and roadmap is None and resolver is not None and \
            getattr(resolver, "skills", None) and not (hasattr(resolver, "resolve") and resolver.resolve(req.concept)):
        doing = _doing_phrase(req.concept, resolver)
        closest = concept.closest_skill(doing, resolver.skills)
        if closest is not None:
            plan = _trained(plan, [closest[0]])
            skill_from = f"{closest[0]}: the skill whose actions and feats are closest to “{doing}” in meaning"
    stats: list[StatValue] = []
    for field, column in plan.items():
        tid = table_for(field)
        value, col, dice = _value(tid, req.level, column)
        stats.append(StatValue(field=field, value=value, column=col, table=tid, damage=dice))
    by = {s.field: s for s in stats}
    wname, kind, dtype = _WEAPON[req.role]
    if roadmap is not None and source is not None:
        # a class whose features speak of unarmed attacks as often as of weapons fights unarmed: the monk's say
        # "unarmed" 9 times and "weapon" 9; every other class's say "weapon" half again as often or more (druid 2/3,
        # fighter 7/25): a fist, not a longsword
        slug = source.node_id.rsplit(":", 1)[-1]
        said = " ".join(f.text for f in resolver.class_features
                        if f.node_id.startswith(f"pf2e:class-feature:{slug}--")).lower()
        if said.count("unarmed") >= said.count("weapon") > 0:
            wname, kind, dtype = "Fist", "melee", "bludgeoning"
    strikes = [Strike(name=wname, kind=kind, attack=by["attack"].value, attack_column=by["attack"].column,
                      damage=by["damage"].damage or "", damage_type=dtype, damage_column=by["damage"].column)]
    cites = {t: tables.building_citation(t) for t in {s.table for s in stats}}
    cites |= {n.node_id: Citation(id=n.source_id or n.node_id, name=n.name, book=n.book or "", page=n.page)
              for n in read}
    if roadmap is not None:
        abilities = [SuggestedAbility(name=n.name, text=excerpt(n.text), source_id=n.node_id, source_name=n.name,
                                      source_level=n.level, book=n.book, page=n.page, source_type=n.type)
                     for n in road_abilities]
    else:
        # (an archetype feat's text in the corpus ends with the archetype's name, a leftover of its source's layout)
        abilities = [SuggestedAbility(name=n.name, text=excerpt(re.sub(rf"\s*\b{re.escape(archetype.name)}\s*$", "",
                                                                      n.text) if archetype is not None else n.text),
                                      source_id=n.node_id, source_name=n.name, source_level=n.level, book=n.book,
                                      page=n.page, source_type=n.type)
                     for n in arch_abilities]
        # beside an archetype's feats, the two closest lenders' abilities (a statblock of seven is no quick read)
        abilities += suggest_abilities(req, resolver, k=2 if abilities else 3, lenders=lenders) \
            if resolver is not None else []
    skill_actions = False
    if not abilities and req.role == "skill paragon" and resolver is not None:
        abilities = _skill_actions(stats, resolver)
        skill_actions = bool(abilities)
    said = " ".join(roadmap.abilities).lower() if roadmap is not None else ""
    casting = "Prepared" if "prepared" in said else "Spontaneous" if "spontaneous" in said else \
        "Focus" if focus else "Innate"
    if roadmap is None and req.role == "spellcaster":
        # GM Core's Spellcaster base road map: "prepared or spontaneous spells with a rank of up to half the creature's
        # level (rounded up)"; of the two, Prepared and Spontaneous Spells: "a spontaneous spellcaster fits well as a
        # one-off creature"
        casting = "Spontaneous"
    striker = roadmap is None and req.role == "magical striker"
    if striker:
        # GM Core's Magical Striker base road map: "either a scattering of innate spells, or prepared or spontaneous
        # spells with a rank up to half the creature's level (rounded up) minus 1": the second, so its spells can be
        # named like a caster's, a rank below
        casting = "Spontaneous"
    slots: list[tuple[int, int]] = []
    cantrips = None
    chosen: list[SpellRank] = []
    if casting in ("Prepared", "Spontaneous") and "spell_dc" in plan:
        slots, count, rank = roadmaps.spell_slots(req.level)
        if striker:
            slots = [(r, n) for r, n in slots if r < slots[0][0]] if slots else []
            rank = max(1, rank - 1)
        cantrips = (count, rank)
        entry = getattr(resolver, "spell_slots_entry", None)
        if entry is not None:
            cites[entry.node_id] = Citation(id=entry.source_id or entry.node_id, name=entry.name, book=entry.book or "",
                                            page=entry.page)
        # its top three ranks and cantrips, of the theme first (``core/creators/spells.py``)
        if getattr(resolver, "spells", None) and tradition is not None:
            chosen = spells.choose_spells(" ".join([req.concept, *req.traits]).strip(), tradition, slots, count,
                                          resolver.spells, resolver.spell_lists)
            rule = resolver.spells_rule
            if chosen and rule is not None:
                cites[rule.node_id] = Citation(id=rule.source_id or rule.node_id, name=rule.name, book=rule.book or "",
                                               page=rule.page)
    name = shown_name.strip().title() or f"Level {req.level} {req.role.title()}"
    # the traits shown: the request's, and those of a Player Core ancestry the concept names ("dwarf champion": dwarf,
    # humanoid), as a stat block prints them
    shown = list(req.traits)
    size, ancestry_size = "medium", False
    speed, speed_from = 25, "GM Core: 25 feet for a creature that moves like a human"
    senses: list[str] = []
    languages: list[str] = []
    senses_from = languages_from = ""
    if hasattr(resolver, "ancestry_of"):
        for w in re.findall(r"[a-z]+", req.concept.lower()):
            if (node := resolver.ancestry_of(w)) is not None and (not req.traits or node.name.lower() in req.traits):
                shown += [t.lower() for t in node.traits if t.lower() not in shown]
                size = str(node.fields.get("size") or size).lower()  # a goblin is Small
                ancestry_size = True
                if str(node.fields.get("speed", "")).isdigit():
                    speed, speed_from = int(node.fields["speed"]), f"the {node.name} ancestry's Speed"
                if not languages:
                    languages = _listed(node.fields.get("languages"))
                    languages_from = f"the {node.name} ancestry's"
                    senses = resolver.ancestry_senses(node) if hasattr(resolver, "ancestry_senses") else []
                    senses_from = f"every Monster Core {node.name.lower()} has it" if senses else ""
    if not languages and resolver is not None and _person(req, resolver) is not None:
        # GM Core, Languages: "If you want your creature to be able to speak to the PCs, be sure it has Common"
        languages, languages_from = ["Common"], "GM Core: Common, to speak to the PCs"
    exact = resolver.resolve(req.concept) if hasattr(resolver, "resolve") else None
    if exact is not None:
        # the creature the concept names whole: its own senses and languages, as Monster Core prints them
        said = str(exact.fields.get("perception", "")).partition(";")[2]
        senses = [x.strip() for x in said.split(",") if x.strip()]
        senses_from = f"the {exact.name}'s" if senses else ""
        languages = _listed(exact.fields.get("languages"))
        languages_from = f"the {exact.name}'s" if languages else ""
    land = re.match(r"(\d+) feet", str(source.fields.get("speed", ""))) if source is not None and \
        source.type == "creature" else None
    if land is not None and source is not None:
        # built off a Monster Core creature (the one the concept names, or of its kind): its land Speed, as it is
        speed, speed_from = int(land.group(1)), f"the {source.name}'s Speed"
    elif req.role == "skirmisher":
        # GM Core's skirmisher: "higher Speed than typical"; how much higher the book leaves open: gmprep adds 5 feet
        speed, speed_from = speed + 5, speed_from + "; +5 feet: a skirmisher's higher Speed than typical"
    # a person the concept names by a background or class ("dragon cultist", "zombie guard") is that person: a kind
    # word beside it may only describe them
    person = source is not None and source.type != "creature"
    kin = _kin(req.concept, source, resolver, req.level) if not ancestry_size and not req.traits and not person \
        else None
    if kin is not None:
        # a creature of a kind Monster Core has (built off one of it, or of a role said: "a level 6 ogre brute"): the
        # kind's usual size, and the traits every one of that kind has (an ogre is Large, a giant and a humanoid; a
        # troll's "wood" is the Forest Troll's own), unless the GM gave traits or a Player Core ancestry said them
        size = kin[0]
        shown += [t for t in kin[1] if t not in shown]
    return Statblock(name=name, level=req.level, role=req.role, traits=shown, size=size, speed=speed,
                     senses=senses, languages=languages, senses_from=senses_from, languages_from=languages_from,
                     speed_from=speed_from, skill_from=skill_from, stats=stats, strikes=strikes,
                     abilities=abilities, citations=sorted(cites.values(), key=lambda c: c.id), tradition=tradition,
                     tradition_from=tradition_from, role_from=role_from, role_default=by_default,
                     roadmap=roadmap.name if roadmap is not None else None,
                     roadmap_abilities=", ".join(roadmap.abilities) if roadmap is not None else None, casting=casting,
                     archetype=archetype.name if archetype is not None else None,
                     slots=slots, cantrips=cantrips, spells=chosen, skill_actions=skill_actions)


def _kin(concept: str, source: Node | None, resolver, level: int) -> tuple[str, list[str]] | None:
    """(the size, the traits) a build of ``concept`` takes from the Monster Core kind it names (``_kind_reader``), or
    None when it names none: the size most of that kind have (the nearest in level among the most common: a zombie is
    Medium though a Zombie Hulk is Huge), and the traits every one of it shares, in the order of ``source`` (what the
    build was made off) when that is of the kind, else of the one nearest in level (a "skeleton archer" built off the
    Hobgoblin Archer, named with what it does, takes the skeletons')."""
    if not hasattr(resolver, "creatures"):
        return None
    of_kind = _kind_reader(_concept_words(concept, resolver), concept, resolver)
    kind = [n for n in resolver.creatures() if of_kind(n)]
    if not kind:
        return None

    def nearest(nodes: list[Node]) -> Node:
        return min(nodes, key=lambda n: (abs((n.level if n.level is not None else level) - level), n.name))

    if source is None or source.type != "creature" or not of_kind(source):
        source = nearest(kind)
    sizes = collections.Counter(str(n.fields.get("size") or "medium").lower() for n in kind)
    usual = [n for n in kind if str(n.fields.get("size") or "medium").lower() == sizes.most_common(1)[0][0]]
    size = str(nearest(usual).fields.get("size") or "medium").lower() if max(sizes.values()) * 2 > len(kind) or \
        len(sizes) == 1 else str(source.fields.get("size") or "medium").lower()
    shared = {t.lower() for t in source.traits}
    for n in kind:
        shared &= {t.lower() for t in n.traits}
    return size, [t.lower() for t in source.traits if t.lower() in shared]


def _listed(value) -> list[str]:
    """A field's list ("Common, Dwarven" or ["Common", "Dwarven"]) as names."""
    items = value if isinstance(value, list) else str(value or "").split(",")
    return [str(x).strip() for x in items if str(x).strip()]


def _named_archetype(req: CreatureRequest, resolver) -> Node | None:
    """The archetype the concept names (``CreatureResolver.named_archetype``), for one of the people PCs are: a person
    of no named kind ("assassin") or of a Player Core ancestry ("goblin archer"); a "skeleton archer" takes no
    dedication (archetypes are feats of PCs' kind)."""
    if not hasattr(resolver, "named_archetype"):
        return None
    archetype = resolver.named_archetype(req.concept)
    if archetype is None:
        return None
    words = re.findall(r"[a-z]+", " ".join([req.concept, *req.traits]).lower())
    ancestry = hasattr(resolver, "ancestry_of") and any(resolver.ancestry_of(w) is not None for w in words)
    return archetype if ancestry or _person(req, resolver) is not None else None


def _trained(plan: dict[str, str], skills: list[str]) -> dict[str, str]:
    """``plan`` with ``skills`` trained (a background's, an archetype's dedication's), whatever the role: the first at
    the role's best skill column (a merchant's Diplomacy), the others and a Lore one column below (Mercantile Lore); one
    extreme skill stays the rule, so the role's own extreme one (a skill paragon's Deception) steps down to high."""
    cols = tables.columns("skills")
    best = min((c for f, c in plan.items() if f.startswith("skill:")), key=cols.index, default="high")
    below = cols[min(cols.index(best) + 1, len(cols) - 1)]
    for i, skill in enumerate(skills):
        column = best if i == 0 and not skill.endswith(" Lore") else below
        if f"skill:{skill}" not in plan or cols.index(column) < cols.index(plan[f"skill:{skill}"]):
            if column == "extreme":
                plan = {f: (below if f.startswith("skill:") and c == "extreme" else c) for f, c in plan.items()}
            plan[f"skill:{skill}"] = column
    return plan


def _skill_actions(stats: list[StatValue], resolver, k: int = 3) -> list[SuggestedAbility]:
    """For a skill paragon that borrows nothing (a merchant: no person of Monster Core's with an ability is one), GM
    Core's road map asks for "at least one special ability to use the creature's skills in combat": the encounter
    actions its best skills' entries list (``CreatureResolver.skill_actions``) that act on a foe, an attack's
    (Grapple, Trip) or a mental one that is no talk (Feint, Create a Diversion, Demoralize; not a linguistic Request),
    best skill first, each once, with the skill's modifier."""
    skills = sorted((st for st in stats if st.field.startswith("skill:")), key=lambda st: -st.value)
    out: list[SuggestedAbility] = []
    seen: set[str] = set()
    for st in skills:
        skill = st.field.split(":", 1)[1]
        for n in resolver.skill_actions(skill):
            traits = {t.lower() for t in n.traits}
            if n.node_id in seen or not ("attack" in traits or ("mental" in traits and "linguistic" not in traits)):
                continue
            seen.add(n.node_id)
            out.append(SuggestedAbility(name=n.name, text=f"({skill} {_signed(st.value)}) {excerpt(n.text)}",
                                        source_id=n.node_id, source_name=n.name, book=n.book, page=n.page,
                                        source_type=n.type))
            if len(out) >= k:
                return out
    return out


def roadmap_plan(columns: dict[str, str], role_plan: dict[str, str]) -> dict[str, str]:
    """A road map's statistics as a build plan: what it lists at its column (within what the field's table prints: no
    "extreme" HP), everything else of ``BASE_FIELDS`` moderate, as GM Core says ("Any statistic that isn't
    specifically listed can use moderate numbers"); but an attribute it does not list keeps the column of the class's
    role (``role_plan``): a wizard's Strength stays low, not a moderate +4."""
    attrs = {f: c for f, c in role_plan.items() if f in ("str", "dex", "con", "int", "wis", "cha")}
    plan = dict.fromkeys(roadmaps.BASE_FIELDS, "moderate") | attrs | dict(columns)
    for field, column in plan.items():
        cols = tables.columns(table_for(field))
        if column not in cols:  # the nearest column the table has
            order: list[str] = list(tables.COLUMNS)
            at = order.index(column)
            plan[field] = min(cols, key=lambda c: abs(order.index(c) - at) if c in order else 99)
    return plan


def excerpt(text: str, limit: int = 450) -> str:
    """An entry's text for a statblock line: its paragraphs on one line ("**Frequency** once per day" is not all of
    Drain Bonded Item), cut at the last sentence end within ``limit``."""
    para = " ".join(text.split())
    if len(para) <= limit:
        return para
    cut = para[:limit]
    end = max(cut.rfind(". "), cut.rfind(".)"))
    return (cut[:end + 1] if end > limit // 3 else cut.rstrip() + "…")


def _role_fit(node, role: str | None) -> int:
    if role is None:
        return 0
    text = node.text
    if role == "spellcaster" or role == "magical striker":
        return 2 if "Spells**" in text else 0
    if role == "sniper":
        return 2 if "**Ranged strike**" in text else 0
    mods = node.fields.get("abilityMods") or []
    try:
        vals = [int(str(v).replace("\u2013", "-")) for v in mods]
    except ValueError:
        return 0
    if len(vals) != 6:
        return 0
    best = vals.index(max(vals))
    return 2 if (role in ("brute", "soldier") and best == 0) or (role in ("skirmisher", "skill paragon") and best == 1) else 0


# How many levels from the statblock's a creature may be to lend its abilities (each level apart costs a point of its
# score). One level left an "orc warlord" of level 6 with the Orca's echolocation (Monster Core's orcs are levels 0-2)
# and a "city guard sergeant" of level 2 with a dromaar's Ferocity; at four the Orc Commander's Battle Cry and the Kholo
# Sergeant's Pack Attack lead them. The abilities' numbers are the lender's; the statblock's are the tables'.
LEVEL_WINDOW = 4


def _creature_words(node) -> set[str]:
    """A creature's name words and traits, lower-case: what a request's words are matched against."""
    return set(re.findall(r"[a-z]+", node.name.lower())) | {t.lower() for t in node.traits}


def _own_kind(ability: str, node, words: set[str]) -> bool:
    """Whether ``ability`` is named for its creature's own kind ("Curse of the Wererat", "Goblin Song", "Aquatic
    Ambush" of an aquatic Orca) and the request shares none of those words: it belongs to that creature."""
    own = set(re.findall(r"[a-z]+", ability.lower())) & _creature_words(node)
    return bool(own) and not own & words


def _same_kind(node, words: set[str], within: set[str], core: set[str], traits: set[str],
               heads: frozenset[str] = frozenset()) -> bool:
    """Whether a creature is of the requested kind: its name says so (a word of it that is some creature's trait, the
    orc of "Orc Commander", or its whole one-word name, "Wererat"; not a role word, "leader"), or every trait it has is
    within the request's (``_within``: a Lawbringer Warpriest, human and nephilim, for a human; a Wererat, human but
    also a beast, is not a human's)."""
    if _named_by(node, words, traits, heads):
        return True
    own = {t.lower() for t in node.traits}
    return bool(own) and own <= within and bool(own & core)


def _concept_words(concept: str, resolver, modifiers: bool = True) -> set[str]:
    """The concept's words, singular forms too, less (with ``modifiers``) the ones that only modify a kind (a "giant
    spider" is a spider)."""
    said = re.findall(r"[a-z]+", concept.lower())
    words = set(said) | {w[:-1] for w in said if w.endswith("s")} | {w[:-2] for w in said if w.endswith("es")}
    return words - modifier_words(concept, resolver) if modifiers else words


def _kind_reader(words: set[str], concept: str, resolver):
    """Whether a creature is of the kind ``words`` (the concept's, ``_concept_words``) name: by a trait or its whole name
    (``_named_by``), or by a creature name's first word that names no person ("ogre" of the Ogre Warrior, whose traits
    are giant and humanoid), as ``_kind_beyond`` reads it. One reading for the build's lender and its traits."""
    creatures = resolver.creatures()
    traits = {t.lower() for n in creatures for t in n.traits}
    heads = _head_kind(concept, resolver)
    first = words - getattr(resolver, "person_words", frozenset()) - _name_modifiers(creatures)

    def of_kind(n) -> bool:
        m = re.match(r"[a-z]+", n.name.lower())
        # a first word that is a trait names the kind only of a creature with it, as in ``_named_by`` (the Goblin Dog
        # is an animal, no goblin)
        return _named_by(n, words, traits, heads) or (m is not None and m.group(0) in first and (
            m.group(0) not in traits or m.group(0) in {t.lower() for t in n.traits}))

    return of_kind


def _named_by(node, words: set[str], traits: set[str], heads: frozenset[str] = frozenset()) -> bool:
    """Whether ``words`` name the creature's kind: a word of its name that is some creature's trait (the orc of "Orc
    Commander", the hag of "Sweet Hag"), its whole one-word name ("Wererat"), or its name's last word where that names
    a kind (``heads``, ``CreatureResolver.kind_heads``: the spider of "Hunting Spider"); not a role word ("leader")."""
    name = re.findall(r"[a-z]+", node.name.lower())
    own = {t.lower() for t in node.traits}
    head = re.findall(r"[a-z]+", re.sub(r"\([^)]*\)", " ", node.name.lower()))[-1:]  # "Soulbound Doll (Brave)": doll
    # a trait word names the creature's kind only when the creature has that trait: a Goblin Dog is an animal
    return bool(words & {w for w in name if (w in traits and w in own) or len(name) == 1}) or \
        bool(head and head[0] in heads)


def _carrier_traits(creatures: list) -> dict[str, frozenset[str]]:
    """Ability name (lower-case) -> the traits every creature with it has: Stench is the xulgaths' (xulgath, humanoid),
    Site Bound the spirits' (incorporeal, spirit, undead), Reactive Strike nobody's (it is carried by every kind)."""
    out: dict[str, frozenset[str]] = {}
    for n in creatures:
        traits = frozenset(t.lower() for t in n.traits)
        for ab in n.fields.get("abilities") or []:
            key = ab.lower()
            out[key] = out[key] & traits if key in out else traits
    return out


def _within(req: CreatureRequest, creatures: list, traits: set[str], resolver=None) -> tuple[set[str], set[str]]:
    """(within, core). Within the request's kind: its own traits (given, or a trait word of its concept: "goblin
    shaman"), those every creature with one of them has (a human is humanoid), and those whose every creature has all
    of its own (every nephilim is human: a nephilim is a kind of human; a beast is not). The core is the own traits and
    those kinds of them, without the wider ones: a Yeti, humanoid only, is within a human's traits but no human."""
    own = {t.lower() for t in req.traits} | (_request_words(req, resolver) & traits)
    if not own:
        return set(), set()
    sets = [frozenset(t.lower() for t in n.traits) for n in creatures]
    wider: set[str] = set()
    for t in own:
        having = [x for x in sets if t in x]
        if having:
            wider |= frozenset.intersection(*having)
    core = set(own)
    for t in traits - own - wider:
        having = [x for x in sets if t in x]
        if having and all(own <= x for x in having):
            core.add(t)
    return core | wider, core


def _request_words(req: CreatureRequest, resolver=None) -> set[str]:
    """The request's words (its concept's and traits'); with ``resolver``, without a word of the concept that Monster
    Core's names use as a modifier, not a kind (``_name_modifiers``), standing before a word that names a kind (a trait,
    a ``CreatureResolver.kind_heads`` word, a one-word creature name): the "giant" of a "giant spider" or a "giant wolf",
    not of a "frost giant", a "giant" or a "giant chief"."""
    drop = modifier_words(req.concept, resolver) if resolver is not None else set()
    out = {w for w in re.findall(r"[a-z]+", (req.concept + " " + " ".join(req.traits)).lower())
           if len(w) > 2 and w not in drop}
    if resolver is not None and hasattr(resolver, "resolve"):
        # a plural names its kind as the singular does: a trait or kind word ("goblins", "giant spiders"), a one-word
        # creature ("giant wolves": the Wolf)
        creatures = resolver.creatures()
        kinds = {t.lower() for n in creatures for t in n.traits} | set(getattr(resolver, "kind_heads", ()))
        out |= {f for w in out for f in _singulars(w) - {w} if f in kinds}
        out |= {node.name.lower() for w in out if w.endswith("s") and (node := resolver.resolve(w)) is not None
                and " " not in node.name}
    return out


def _head_kind(concept: str, resolver) -> frozenset[str]:
    """The concept's head noun, its last word (singular too), where it is a ``CreatureResolver.kind_heads`` word: a
    "giant spider" is a spider; a "drake rider" is a rider, no drake."""
    said = re.findall(r"[a-z]+", concept.lower())[-1:]
    forms = {f for w in said for f in _singulars(w)}
    return frozenset(forms) & frozenset(getattr(resolver, "kind_heads", ()))


def _doing_phrase(concept: str, resolver) -> str:
    """``concept`` without the words that name a kind (a creature trait, a creature name's first word, an ancestry's
    adjective): what the creature does ("dwarf blacksmith": "blacksmith"; "kobold": nothing, which names no skill)."""
    creatures = resolver.creatures()
    kinds = {t.lower() for n in creatures for t in n.traits} | \
        {m.group(0) for n in creatures if (m := re.match(r"[a-z]+", n.name.lower()))}
    adjective = getattr(resolver, "ancestry_adjective", lambda w: None)
    return " ".join(w for w in re.findall(r"[a-z']+", concept.lower())
                    if not (_singulars(w) & kinds) and adjective(w) is None)


def _singulars(word: str) -> set[str]:
    """``word`` and what it may be the plural of ("spiders": spider; "witches": witche, witch)."""
    return {word} | ({word[:-1]} if word.endswith("s") else set()) | ({word[:-2]} if word.endswith("es") else set())


def modifier_words(concept: str, resolver) -> set[str]:
    """The words of ``concept`` that modify the kind the next word names (``_request_words``): "giant" of "giant
    spiders". (The encounter builder keeps them: its themes match names, and "giant" there calls up Monster Core's
    Giant Wasps and Scorpions beside the spiders, which a "giant spiders" theme wants.)"""
    said = re.findall(r"[a-z]+", concept.lower())
    if len(said) < 2:
        return set()
    creatures = resolver.creatures()
    modifiers = _name_modifiers(creatures)
    kinds = ({t.lower() for n in creatures for t in n.traits} | set(getattr(resolver, "kind_heads", ()))) - modifiers

    def names_kind(w: str) -> bool:  # a trait or kind word (a plural too), or a one-word creature's name ("wolves")
        if _singulars(w) & kinds:
            return True
        node = resolver.resolve(w) if hasattr(resolver, "resolve") else None
        return node is not None and " " not in node.name

    return {w for w, after in zip(said, said[1:], strict=False) if w in modifiers and names_kind(after)}


_MODIFIERS: dict[int, tuple[list, frozenset[str]]] = {}


def _name_modifiers(creatures: list) -> frozenset[str]:
    """The trait words Monster Core's names put before another word mostly on creatures without that trait: "giant"
    (Giant Rat, Giant Tarantula, Giant Animated Statue: 21 names, none a giant; a giant is a Stone Giant), "monitor"
    (Giant Monitor Lizard); not "goblin" (Goblin Warrior and three more goblins, one Goblin Dog)."""
    hit = _MODIFIERS.get(id(creatures))
    if hit is not None and hit[0] is creatures:
        return hit[1]
    traits = {t.lower() for n in creatures for t in n.traits}
    count: dict[str, list[int]] = {}
    for n in creatures:
        own = {t.lower() for t in n.traits}
        for w in re.findall(r"[a-z]+", re.sub(r"\([^)]*\)", " ", n.name.lower()))[:-1]:
            if w in traits:
                count.setdefault(w, [0, 0])[w not in own] += 1
    out = frozenset(w for w, (with_, without) in count.items() if without > with_)
    _MODIFIERS.clear()
    _MODIFIERS[id(creatures)] = (creatures, out)
    return out


def _person(req: CreatureRequest, resolver) -> tuple[frozenset[str], frozenset[str]] | None:
    """For a request that names no creature kind (no trait given or said, no creature's kind named: "bandit boss",
    "merchant", "court wizard"), which is one of the people PCs are: (the ids of Monster Core's people,
    ``CreatureResolver.people``; the ancestry traits). None when it names a kind or the resolver has no ancestries."""
    if not getattr(resolver, "ancestries", None):
        return None
    creatures = resolver.creatures()
    traits = {t.lower() for n in creatures for t in n.traits}
    words = _request_words(req, resolver)
    # a kind is named by a trait word or a creature name's first word ("ogre" of "Ogre Warrior"), unless the word names
    # a person's background or class ("guard": the Guard background, not the Guard Dog)
    kinds = (traits | {m.group(0) for n in creatures if (m := re.match(r"[a-z]+", n.name.lower()))}) - resolver.person_words
    if req.traits or words & kinds or any(_named_by(n, words, traits, _head_kind(req.concept, resolver)) for n in creatures):
        return None
    return resolver.people, resolver.ancestry_traits


def _people(req: CreatureRequest, resolver, near: list) -> list:
    """``near`` for a request of no named kind: the people (``_person``) of any level instead, the closest levels first
    by ``ranked_lenders``' score (Monster Core's people run to level 6; a level-12 bandit king borrowed a dragon's
    telepathy and a level 9 one nothing). A harpy's Putrid Plague or a genie's Change Shape is no bandit's. Unchanged
    when the request names a kind."""
    person = _person(req, resolver)
    if person is None:
        return near
    return [n for n in resolver.creatures() if n.node_id in person[0] and n.level is not None]


def _ancestry_own(resolver, ancestry: frozenset[str], people: frozenset[str]) -> set[str]:
    """Abilities (lower-case) that among the people only one ancestry has: the lizardfolk's Deep Breath, the orcs'
    Ferocity, the kholo's Pack Attack; a person of no named kind does not borrow them (Reactive Strike, Shield Block
    and Sneak Attack are carried by several)."""
    kinds: dict[str, set[str] | None] = {}
    for n in resolver.creatures():
        if n.node_id not in people:
            continue
        theirs = {t.lower() for t in n.traits} & ancestry
        for ab in n.fields.get("abilities") or []:
            key = ab.lower()
            kinds[key] = theirs if kinds.get(key) is None else kinds[key] & theirs  # type: ignore[operator]
    return {k for k, v in kinds.items() if v}


def _kind_beyond(req: CreatureRequest, resolver, near: list, words: set[str]) -> list:
    """``near`` and, when none of it is of the kind the request names (``_named_by``: Monster Core's goblins are levels
    -1 to 1, a level-7 goblin shaman had no goblin within ``LEVEL_WINDOW``, so no goblin's ability and a soldier's
    build), the creatures of that kind of any level: the ranking's level distance still puts the closest first, and a
    borrowed ability's numbers are moved to the level (``_closest_carrier``, ``_at_level``)."""
    creatures = resolver.creatures()
    traits = {t.lower() for n in creatures for t in n.traits}
    # the kind as ``_person`` reads it: a trait word, or a creature name's first word ("ogre" of Ogre Boss: its traits
    # are giant and humanoid) that names no person ("guard" of Guard Dog)
    # (not a word the names use as a modifier: "giant" is the first word of a Giant Ant, which is no giant)
    first = words - getattr(resolver, "person_words", frozenset()) - _name_modifiers(creatures)
    heads = _head_kind(req.concept, resolver)

    def of_kind(n) -> bool:
        m = re.match(r"[a-z]+", n.name.lower())
        return _named_by(n, words, traits, heads) or (m is not None and m.group(0) in first)

    if not words or _person(req, resolver) is not None or any(of_kind(n) for n in near):
        return near
    have = {n.node_id for n in near}
    return near + [n for n in creatures if n.level is not None and n.node_id not in have and of_kind(n)]


def ranked_lenders(req: CreatureRequest, resolver) -> list:
    """Monster Core creatures within ``LEVEL_WINDOW`` levels of ``req.level`` (of the Player Core ancestries for a
    request of no named kind: ``_people``), closest to the request first: its words in their names and traits, the
    concept's meaning (``concept.closeness``), the role's fit, the levels apart."""
    words = _request_words(req, resolver)
    near = [n for n in resolver.creatures() if n.level is not None and abs(n.level - req.level) <= LEVEL_WINDOW]
    near = _people(req, resolver, near)
    near = _kind_beyond(req, resolver, near, words)
    # the creature the concept names whole ("sea serpent": the level-12 Sea Serpent, for a level-2 one) lends at any
    # level: its abilities are the concept's own, moved to the level (``_closest_carrier``, ``_at_level``)
    exact = resolver.resolve(req.concept) if hasattr(resolver, "resolve") else None
    if exact is not None and exact.level is not None and all(n.node_id != exact.node_id for n in near):
        near = [*near, exact]
    closeness = concept.closeness(" ".join([req.concept, *req.traits]).strip(), near)
    scored = []
    for node, close in zip(near, closeness, strict=True):
        score = 3 * len(words & _creature_words(node)) + _role_fit(node, req.role) - abs(node.level - req.level) + concept.CONCEPT_WEIGHT * close
        scored.append((-score, node.name, node))
    return [node for _, _, node in sorted(scored, key=lambda s: s[:2])]


_ON_SPELLS = re.compile(r"\bcast(?:s|ing)?\b[^.]*\bspells?\b|\bspell slots?\b", re.I)


def suggest_abilities(req: CreatureRequest, resolver, k: int = 3, lenders: list | None = None) -> list[SuggestedAbility]:
    """Abilities of the best lenders (``ranked_lenders``), cited; not those named for their creature's own kind unless
    the request is, and from a lender of another kind only those carried beyond its kind (``_carrier_traits``)."""
    words = _request_words(req, resolver)
    creatures = resolver.creatures()
    traits = {t.lower() for n in creatures for t in n.traits}
    carriers = _carrier_traits(creatures)
    within, core = _within(req, creatures, traits, resolver)
    casts = req.role is not None and "spell_dc" in ROLES[req.role]
    heads = _head_kind(req.concept, resolver)
    whole = resolver.resolve(req.concept) if hasattr(resolver, "resolve") else None
    named_whole = whole.node_id if whole is not None else None  # "sea serpent": the Sea Serpent's abilities are its own
    # the abilities of the creatures of just the requested kind: named for it, or with its own traits and the wider
    # ones only (a human's humanoid; not a nephilim's, which is a kind of human)
    own = {t.lower() for t in req.traits} | (words & traits)
    strict = within - (core - own)
    kin: set[str] = set()
    for n in creatures:
        has = {t.lower() for t in n.traits}
        if _named_by(n, words, traits, heads) or (has <= strict and has & own):
            kin |= {ab.lower() for ab in n.fields.get("abilities") or []}
    person = _person(req, resolver)
    others_own = _ancestry_own(resolver, person[1], person[0]) if person is not None else set()
    # for a person, over Monster Core's people: the roles of those that carry each ability (``creature_build``: Sneak
    # Attack's are all skirmishers, Shield Block's soldiers and a caster), so a person borrows only what people of its
    # own role carry (a merchant, a skill paragon, no longer gets a soldier's Reactive Strike and Shield Block and a
    # skirmisher's Sneak Attack); and the kind most of them are (humanoid), a person's too: an ability only humanoids
    # carry (the lizardfolk scout's and the umbral gnome scout's Hidden Movement) is a person's (``_within`` reads the
    # request's own words and traits, and a person's name has none)
    roles_of: dict[str, set[str | None]] = {}
    if person is not None:
        counts: dict[str, int] = {}
        for n in creatures:
            if n.node_id in person[0]:
                for ab in n.fields.get("abilities") or []:
                    roles_of.setdefault(ab.lower(), set()).add(creature_build(n))
                for t in {t.lower() for t in n.traits}:
                    counts[t] = counts.get(t, 0) + 1
        within = within | {t for t, c in counts.items() if 2 * c > len(person[0])}
    out: list[SuggestedAbility] = []
    seen: set[str] = set()
    carriers_of: dict[str, list] = {}
    for n in creatures:
        for ab in n.fields.get("abilities") or []:
            carriers_of.setdefault(ab.lower(), []).append(n)
    for node in lenders if lenders is not None else ranked_lenders(req, resolver):
        same_kind = _same_kind(node, words, within, core, traits, heads) or node.node_id == named_whole
        for ab in node.fields.get("abilities") or []:
            key = ab.lower()
            if key in seen or len(out) >= k or _own_kind(ab, node, words):
                continue
            # a lender of another kind lends only what is not its kind's own: an ability every carrier of which has a
            # trait the request lacks (the xulgaths' Stench for a human bandit leader, a ghost's Site Bound for a
            # priest) stays with them; one carried across kinds (Reactive Strike, Pack Attack) is anyone's
            if not same_kind and not carriers.get(key, frozenset()) <= within:
                continue
            # and, where Monster Core has creatures of just the requested kind, only what one of them has: no goblin
            # has a Goblin Dog's Buck, an orc has Reactive Strike (it has no plain human: a human keeps the rule above)
            if not same_kind and kin and key not in kin:
                continue
            if key in others_own:  # one ancestry's own, for a person of no named kind
                continue
            if person is not None and req.role is not None and req.role not in roles_of.get(key, {req.role}):
                continue
            # the ability's paragraph (a stat block's abilities are paragraphs): "**Stench** 30 feet. DC 19 ..." and the
            # lines below it; a name alone ("**+2 Circumstance to All Saves vs. Disease**") has no text, and must not
            # take the next ability's
            body = _paragraph(node, ab)
            if body is None:
                continue
            # an ability that works on the lender's spells ("cast one prepared spell ... without spending a spell slot")
            # is dead text on a statblock whose role has no spells
            if not casts and _ON_SPELLS.search(body):
                continue
            seen.add(key)
            # the same ability as a creature closer to the request's level prints it (its numbers are that level's)
            carrier, body = _closest_carrier(ab, body, node, req.level, carriers_of.get(key, []))
            out.append(SuggestedAbility(name=ab, text=_at_level(_renamed(body, carrier.name, req.concept), carrier.level,
                                                                req.level),
                                        source_id=carrier.node_id, source_name=carrier.name,
                                        source_level=carrier.level, book=carrier.book, page=carrier.page))
        if len(out) >= k:
            break
    return out


def _paragraph(node, ability: str) -> str | None:
    """The ability's paragraph in the creature's stat block (a stat block's abilities are paragraphs): "**Stench** 30
    feet. DC 19 ..." and the lines below it, on one line; "" for a name alone ("**+2 Circumstance to All Saves vs.
    Disease**" has no text and must not take the next ability's); None when the stat block does not print it."""
    m = re.search(r"\*\*" + re.escape(ability) + r"\*\*[ \t]*(.*?)(?:\n[ \t]*\n|\Z)", node.text, re.S)
    return " ".join(m.group(1).split()) if m else None


def _names(name: str) -> list[str]:
    """A creature's name as its text says it, longest first: "kobold cavern mage", "cavern mage" (not one word of it:
    see ``_renamed``); without a parenthesis ("Conspirator Dragon (Young)")."""
    words = re.sub(r"\([^)]*\)", " ", name).lower().split()
    return [" ".join(words[i:]) for i in range(max(1, len(words) - 1))]


def _shape(body: str, name: str) -> tuple[int, frozenset[str]]:
    """An ability's text with its creature's name taken out, as (how many numbers, its words): two creatures print the
    same ability alike but for those ("The lizardfolk scout deals an extra 1d6 precision damage to Off Guard
    creatures", "The phade deals 2d6 extra precision damage to off-guard creatures")."""
    text = body.lower()
    for n in _names(name):
        text = text.replace(n, " ")
    return len(re.findall(r"\d+", text)), frozenset(re.findall(r"[a-z]+", re.sub(r"\d+", " ", text)))


def _alike(a: tuple[int, frozenset[str]], b: tuple[int, frozenset[str]], texts: tuple[str, str]) -> bool:
    """The same ability printed alike (``_shape``): as many numbers, and nearly all words shared (Jaccard >= 0.8: an
    "an" more or less; not "The Coil spy's Strikes deal", nor a dragon's "additional ... to off-guard targets"), none
    of the others capitalized, as a stat block's parameters are (Swallow Whole's "Small," is not a giant anaconda's
    "Large,")."""
    if a[0] != b[0] or len(a[1] & b[1]) < 0.8 * len(a[1] | b[1]):
        return False
    return not any(re.search(r"\b" + w.capitalize() + r"\b", t) for w in a[1] ^ b[1] for t in texts)


# within this many levels a lender's numbers are about the requested level's, and a carrier must be this much closer to
# replace it: Monster Core's creatures of one level print an ability's dice differently (level 2: a leopard's Sneak
# Attack 1d4, a dero stalker's 1d6)
NEAR_LEVELS = 2


def _closest_carrier(ability: str, body: str, lender, level: int, carriers: list) -> tuple:
    """(creature, paragraph) of the creature printing ``ability`` just as ``lender`` does (``_shape``) whose level is
    closest to ``level``; the lender where none is closer. Monster Core's numbers for an ability grow by their own
    measure, not the Strike tables' (Sneak Attack: 1d6 to level 6, 2d6 from 7, 3d6 from 17), so a level-7 bandit
    boss's Sneak Attack is the level-7 Phade's 2d6, not the level-1 lizardfolk scout's 1d6."""
    if lender.level is None or not re.search(r"\d", body) or abs(lender.level - level) <= NEAR_LEVELS:
        # no number to move (Reactive Strike, Shield Block), or the lender's are about this level's (creatures of one
        # level print 1d4 or 1d6): the lender chosen for its kind
        return lender, body
    best, best_body = lender, body
    shape = _shape(body, lender.name)
    numbers = re.findall(r"\d+", body)
    for n in carriers:
        far = abs(n.level - level) if n.level is not None else 99
        if far >= abs(lender.level - level) - NEAR_LEVELS or far >= abs(best.level - level):
            continue
        other = _paragraph(n, ability)
        # the same numbers (Ferocity's "reduced to 0 HP" at every level) are no reason to cite another creature
        if other is not None and re.findall(r"\d+", other) != numbers and \
                _alike(_shape(other, n.name), shape, (body, other)):
            best, best_body = n, other
    return best, best_body


def _renamed(body: str, name: str, concept: str) -> str:
    """The ability's text with its creature's name made the requested one's ("The lizardfolk scout deals" -> "The
    bandit boss deals"); as it was when the request names nothing."""
    said = " ".join(concept.lower().split())
    if not said:
        return body
    for n in _names(name):
        body = re.sub(r"\b" + re.escape(n) + r"\b", said, body, flags=re.I)
    # and its last word after "the" ("The chanter attempts", "The dragon's Strikes"): alone it may be a rules word
    # ("guard" of off-guard), so only so
    last = re.sub(r"\([^)]*\)", " ", name).lower().split()[-1:]
    if last and last[0] not in said.split():
        body = re.sub(r"\b([Tt]he) " + re.escape(last[0]) + r"\b", lambda m: f"{m.group(1)} {said}", body,
                      flags=re.I)
    return body


def _at_level(body: str, lender_level: int | None, level: int) -> str:
    """A saving throw DC of the ability moved to ``level``: the Spell DC table's column it falls in at the lender's level, at the
    requested level (GM Core, Active Abilities: "You can use the Spell DC and Spell Attack Modifier table to determine
    active ability DCs"); the lender's own DC is kept in a comment."""
    if lender_level is None or lender_level == level or not (tables.CREATURE_MIN_LEVEL <= level <= 24):
        return body

    def move(m: re.Match) -> str:
        dc = int(m.group(1))
        cols = [(c, r[0]) for c in tables.columns("spell-dc") if (r := tables.cell_range("spell-dc", lender_level, c))]
        if not cols:
            return m.group(0)
        column = min(cols, key=lambda cv: abs(cv[1] - dc))[0]
        new = tables.cell_range("spell-dc", level, column)
        if new is None or new[0] == dc:
            return m.group(0)
        return f"DC {new[0]} <!-- DC {dc} at level {lender_level}, {column} in the Spell DC table -->"

    # a saving throw's DC only: a flat check's DC (5, 11, 15) is the same at every level
    return re.sub(r"\bDC (\d+)(?=,?\s+(?:basic\s+)?(?:Fortitude|Reflex|Will)\b)", move, body)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _signed(v: int) -> str:
    return f"{v:+d}"


def render_statblock_markdown(sb: Statblock) -> str:
    """The statblock in the corpus's markdown form, with the column of each number and citations."""
    s = {st.field: st for st in sb.stats}

    def col(field: str) -> str:
        return f" <!-- {s[field].column} -->"

    traits = ", ".join([sb.size, *sb.traits])
    why = f" <!-- the {sb.role_from}'s build -->" if sb.role_from else \
        (" <!-- no class, creature, background or archetype the concept names says a build: GM Core's soldier, the "
         "all-round one; give a role (brute, skirmisher, sniper, spellcaster, skill paragon ...) for another -->"
         if sb.role_default else "")
    lines = [f"### {sb.name}", "", f"**Creature {sb.level}** ({traits}) — built as a {sb.role}{why}", ""]
    senses = "; " + ", ".join(sb.senses) if sb.senses else ""
    why_senses = f"; {', '.join(sb.senses)}: {sb.senses_from}" if sb.senses and sb.senses_from else ""
    lines.append(f"**Perception** {_signed(s['perception'].value)}{senses} <!-- {s['perception'].column}{why_senses} -->")
    if sb.languages:
        lines += ["", f"**Languages** {', '.join(sb.languages)}"
                  + (f" <!-- {sb.languages_from} -->" if sb.languages_from else "")]
    skills = [f"{f.split(':', 1)[1]} {_signed(st.value)}" for f, st in s.items() if f.startswith("skill:")]
    lines += ["", "**Skills** " + ", ".join(skills) + " <!-- " + ", ".join(
        f"{f.split(':', 1)[1]} {st.column}" for f, st in s.items() if f.startswith("skill:"))
        + (f"; {sb.skill_from}" if sb.skill_from else "") + " -->"]
    attrs = ", ".join(f"**{a.capitalize()}** {_signed(s[a].value)}" for a in ("str", "dex", "con", "int", "wis", "cha"))
    lines += ["", attrs + " <!-- " + ", ".join(f"{a.capitalize()} {s[a].column}" for a in ("str", "dex", "con", "int", "wis", "cha")) + " -->"]
    lines += ["", f"**AC** {s['ac'].value}; **Fort** {_signed(s['fort'].value)}, **Ref** {_signed(s['ref'].value)}, "
              f"**Will** {_signed(s['will'].value)} <!-- AC {s['ac'].column}, Fort {s['fort'].column}, "
              f"Ref {s['ref'].column}, Will {s['will'].column} -->"]
    lines += ["", f"**HP** {s['hp'].value}{col('hp')}"]
    lines += ["", f"**Speed** {sb.speed} feet" + (f" <!-- {sb.speed_from} -->" if sb.speed_from else "")]
    for st in sb.strikes:
        label = "Melee strike" if st.kind == "melee" else "Ranged strike"
        lines += ["", f"**{label}** {st.name} {_signed(st.attack)} ([one-action]), **Damage** {st.damage} {st.damage_type}"
                  f" <!-- attack {st.attack_column}, damage {st.damage_column} -->"]
    if "spell_dc" in s:
        why = f", tradition of the {sb.tradition_from}'s spells" if sb.tradition_from else ""
        lines += ["", f"**{(sb.tradition or 'arcane').capitalize()} {sb.casting} Spells** DC {s['spell_dc'].value}, attack "
                  f"{_signed(s['spell_attack'].value)} <!-- DC {s['spell_dc'].column}, attack {s['spell_attack'].column}"
                  f"{why} -->"]
        if sb.cantrips is not None:
            named = {sr.rank: sr.names for sr in sb.spells}
            ranks = "; ".join(f"**{_ordinal(r)}** ({n} slots) " + ", ".join(named[r]) if r in named else
                              f"**{_ordinal(r)}** {n} slots" for r, n in sb.slots)
            tail = ", ".join(named[0]) if 0 in named else str(sb.cantrips[0])
            why = ("GM Core, Prepared and Spontaneous Spells: the highest rank is half the level rounded up"
                   + (" (minus 1 for a magical striker, its base road map)" if sb.role == "magical striker"
                      and sb.roadmap is None else "")
                   + "; fill the top three ranks and the cantrips with spells of the theme")
            if named:
                why += ("; chosen as GM Core's Spells says, about three-quarters by the theme, the rest those Monster "
                        f"Core's {sb.tradition or 'arcane'} casters cast most, from the spells they cast")
            lines += ["", (ranks + "; " if ranks else "") + f"**Cantrips ({_ordinal(sb.cantrips[1])})** {tail} "
                      f"<!-- {why} -->"]
    if sb.skill_actions:
        lines += ["", "Skill actions (GM Core's skill paragon has \"at least one special ability to use the creature's "
                  "skills in combat\"; no Monster Core person of this role lends one, so these are its best skills' "
                  "actions against a foe):"]
        for ab in sb.abilities:
            lines.append(f"- **{ab.name}** (action; {where_cited(ab.book, ab.page)}) {ab.text}")
    elif sb.roadmap is not None:
        lines += ["", f"Abilities (GM Core's Class Road Maps, {sb.roadmap}: \"{sb.roadmap_abilities}\"; those gmprep "
                  "holds, at this level):"]
        for ab in sb.abilities:
            lvl = f", level {ab.source_level}" if ab.source_level is not None else ""
            what = f"{ab.source_type.replace('-', ' ')}{lvl}"
            lines.append(f"- **{ab.name}** ({what}; {where_cited(ab.book, ab.page)})" + (f" {ab.text}" if ab.text else ""))
    elif sb.abilities:
        own = [ab for ab in sb.abilities if ab.source_type != "creature"]
        if sb.archetype is not None and own:
            lines += ["", f"Abilities (the {sb.archetype} archetype's feats at this level, the dedication and the highest "
                      "first, with what they grant; GM Core's PC-style Build: \"pick the most emblematic ones\"):"]
            for ab in own:
                lvl = f", level {ab.source_level}" if ab.source_level is not None else ""
                lines.append(f"- **{ab.name}** ({ab.source_type}{lvl}; {where_cited(ab.book, ab.page)})"
                             + (f" {ab.text}" if ab.text else ""))
    if sb.abilities and not sb.skill_actions and sb.roadmap is None and \
            any(ab.source_type == "creature" for ab in sb.abilities):
        # a lender may be several levels away (a person's lenders are Monster Core's people, levels -1 to 6): its
        # level says how far its numbers are from this one's
        lines += ["", "Suggested abilities (from Monster Core creatures, each as the one closest to this level prints it; "
                  "a save DC of another level moved by GM Core's Spell DC table):"]
        for ab in (ab for ab in sb.abilities if ab.source_type == "creature"):
            lvl = f" (level {ab.source_level})" if ab.source_level is not None else ""
            where = f"{ab.source_name}{lvl}, {where_cited(ab.book, ab.page)}"
            lines.append(f"- **{ab.name}** ({where})" + (f" {ab.text}" if ab.text else ""))
    lines += ["", "Numbers: " + "; ".join(c.label() for c in sb.citations)]
    return "\n".join(lines) + "\n"
