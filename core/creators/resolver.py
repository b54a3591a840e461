"""Creature names as GMs write them ("goblin warriors", "Goblin War Chanter") -> Monster Core entries.

Exact names, aliases and plurals come from the store's ``NameIndex`` (the same variants hovers use),
built over creature entries only so "wolf" is the creature, never a trait. An unknown name gets
"did you mean" suggestions: names sharing the most words, then the closest spellings (difflib).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from functools import cached_property

from gmprep.core.creators import archetypes
from gmprep.core.creators.groups import (
    CHOOSING_CREATURES_ID,
    HAZARD_XP_ID,
    QUICK_GROUPS_ID,
    parse_quick_groups,
)
from gmprep.core.creators.hazards import HAZARD_RULE_IDS
from gmprep.core.creators.models import Role
from gmprep.core.creators.roadmaps import (
    CLASS_ROADMAPS_ID,
    SPELL_SLOTS_ID,
    ClassRoadMap,
    parse_class_roadmaps,
    roadmap_abilities,
    roadmap_for,
)
from gmprep.core.creators.spells import SPELLS_ID, tradition_lists
from gmprep.kg.models import Node
from gmprep.kg.names import NameIndex, name_key


class CreatureResolver:
    """Resolves creature names against the store's creature entries, with "did you mean" suggestions."""

    def __init__(self, creatures: list[Node], classes: list[Node] | None = None,
                 spellcasting: dict[str, Node] | None = None, backgrounds: list[Node] | None = None,
                 quick_groups: Node | None = None, ancestries: list[Node] | None = None,
                 roadmaps: Node | None = None, skills: list[Node] | None = None, abilities: list[Node] | None = None,
                 spell_slots: Node | None = None, archetypes: list[Node] | None = None,
                 spells: list[Node] | None = None, spells_rule: Node | None = None,
                 choosing_creatures: Node | None = None, hazards: list[Node] | None = None,
                 hazard_xp: Node | None = None, hazard_rules: dict[str, Node] | None = None):
        # the Player Core classes and each casting class's "<Class> Spellcasting" feature (class id -> feature): what
        # a concept that names a class ("court wizard") is built as; the backgrounds (their attribute boosts and
        # skills), what one that names a background ("goblin merchant") is
        self.classes = list(classes or [])
        self.backgrounds = list(backgrounds or [])
        self.spellcasting = dict(spellcasting or {})
        # the Player Core ancestries: a creature with one of their traits is one of the people PCs are (an Orc Veteran,
        # a Kholo Sergeant), what an NPC of no named kind borrows its abilities from
        self.ancestries = list(ancestries or [])
        # GM Core's Quick Adventure Groups entry: the shapes the encounter builder fills with a theme's people
        self.quick_groups_entry = quick_groups
        self.quick_groups = parse_quick_groups(quick_groups.text) if quick_groups is not None else []
        self.choosing_creatures_entry = choosing_creatures  # a boss fight's solo boss is cited to it
        # GM Core's Class Road Maps entry (an NPC that works like a class: its statistics' columns, its abilities) and
        # the entries its abilities may name: the classes' features, feats and actions by name
        self.roadmaps_entry = roadmaps
        self.spell_slots_entry = spell_slots
        names = {n.name for n in skills or []}
        self.roadmaps: list[ClassRoadMap] = parse_class_roadmaps(roadmaps.text, names) if roadmaps is not None else []
        self.class_features = [n for n in abilities or [] if n.type == "class-feature"]
        # the skills' entries: their key attributes, actions and feats (``concept.closest_skill``)
        self.skills = list(skills or [])
        self._abilities: dict[str, list[Node]] = {}
        for n in abilities or []:
            self._abilities.setdefault(n.name.lower(), []).append(n)
        # the archetypes (Player Core 2's Assassin, Pirate, Medic...) with their feats, but those of a class (the class
        # names its NPC) and the listing's level headings, which have no feat
        feats: dict[str, list[Node]] = {}
        for n in abilities or []:
            if n.type == "feat" and n.fields.get("archetype"):
                feats.setdefault(str(n.fields["archetype"]).lower(), []).append(n)
        class_names = {c.name.lower() for c in self.classes}
        self.archetypes = [a for a in archetypes or [] if a.name.lower() in feats and a.name.lower() not in class_names]
        self._archetype_feats = {a.node_id: sorted(feats[a.name.lower()], key=lambda f: (f.level or 0, f.name))
                                 for a in self.archetypes}
        # the spell entries and GM Core's Spells guidance: a caster's suggested spells (``core/creators/spells.py``)
        self.spells = list(spells or [])
        self.spells_rule = spells_rule
        self._nodes = sorted(creatures, key=lambda n: (n.level if n.level is not None else 0, n.name, n.node_id))
        self._by_id = {n.node_id: n for n in self._nodes}
        self._index = NameIndex.build(self._nodes)
        # GM Core's hazards, which an encounter counts beside its creatures (``encounter.evaluate_encounter``), and its
        # Hazard Experience rule that says how
        self.hazards = [h for h in hazards or [] if h.level is not None]
        self._hazard_ids = {h.node_id: h for h in self.hazards}
        self._hazard_index = NameIndex.build(self.hazards)
        self.hazard_xp_entry = hazard_xp
        # GM Core's Building Hazards entries whose tables a hazard is built from (``hazards.build_hazard``)
        self.hazard_rules = dict(hazard_rules or {})
        self._names = {" ".join(name_key(n.name)): n.name for n in self._nodes}
        self._keys = [(norm, real, set(norm.split()), Counter(norm)) for norm, real in self._names.items()]

    @classmethod
    def from_store(cls, store) -> CreatureResolver:
        """Every creature entry of ``store`` (a ``gmprep.kg.store.Store``), with its classes and backgrounds."""
        ids = [r[0] for r in store.db.execute(
            "SELECT node_id FROM nodes WHERE kind='entry' AND type IN ('creature', 'class', 'background', 'ancestry', "
            "'hazard') "
            "ORDER BY rowid")]
        ids += [r[0] for r in store.db.execute(
            "SELECT node_id FROM nodes WHERE kind='entry' AND type IN ('skill', 'class-feature', 'archetype', 'spell') "
            "ORDER BY rowid")]
        # the archetypes' feats (about 300), and what their dedications grant ("You gain the Mark for Death activity")
        ids += [r[0] for r in store.db.execute(
            "SELECT node_id FROM nodes WHERE kind='entry' AND type='feat' AND json_extract(fields, '$.archetype') "
            "IS NOT NULL ORDER BY rowid")]
        nodes = list(store.get_many([*ids, QUICK_GROUPS_ID, CLASS_ROADMAPS_ID, SPELL_SLOTS_ID, SPELLS_ID,
                                     CHOOSING_CREATURES_ID, HAZARD_XP_ID, *HAZARD_RULE_IDS]).values())
        # the feats and actions a road map's abilities name ("Shield Block", "Drain Bonded Item"): a few of 2,000
        entry = next((n for n in nodes if n.node_id == CLASS_ROADMAPS_ID), None)
        said = sorted({re.split(r"\s+if\s+", a)[0].strip().lower()
                       for r in parse_class_roadmaps(entry.text, set()) for a in r.abilities} if entry else set())
        # and the actions the skills' entries list (a skill paragon's ways to use its skills in combat)
        said = sorted(set(said) | {a.lower() for n in nodes if n.type == "skill" for a in skill_action_names(n.text)}
                      | {m.group(1).lower() for n in nodes if n.type == "feat" and n.fields.get("archetype")
                         for m in archetypes.GRANTS.finditer(n.text)})
        if said:
            marks = ", ".join("?" * len(said))
            named = [r[0] for r in store.db.execute(
                f"SELECT node_id FROM nodes WHERE kind='entry' AND type IN ('feat', 'action') AND lower(name) IN ({marks})",
                said)]
            nodes += list(store.get_many(named).values())
        return cls.from_nodes(nodes)

    @classmethod
    def from_nodes(cls, nodes) -> CreatureResolver:
        """The same from entries already loaded (the language server's rules book): one owner for what a creature
        request reads, so the editor builds what the CLI and the chat build."""
        nodes = list(nodes)
        by_id = {n.node_id: n for n in nodes}
        classes = [n for n in nodes if n.type == "class"]
        spellcasting = {c.node_id: by_id[_spellcasting_id(c.node_id)] for c in classes
                        if _spellcasting_id(c.node_id) in by_id}
        return cls([n for n in nodes if n.type == "creature"], classes, spellcasting,
                   [n for n in nodes if n.type == "background"], by_id.get(QUICK_GROUPS_ID),
                   [n for n in nodes if n.type == "ancestry"], by_id.get(CLASS_ROADMAPS_ID),
                   [n for n in nodes if n.type == "skill"],
                   [n for n in nodes if n.type in ("class-feature", "feat", "action")], by_id.get(SPELL_SLOTS_ID),
                   [n for n in nodes if n.type == "archetype"], [n for n in nodes if n.type == "spell"],
                   by_id.get(SPELLS_ID), by_id.get(CHOOSING_CREATURES_ID), [n for n in nodes if n.type == "hazard"],
                   by_id.get(HAZARD_XP_ID), {rid: by_id[rid] for rid in HAZARD_RULE_IDS if rid in by_id})

    def resolve(self, name: str) -> Node | None:
        """The creature entry ``name`` means (exact name, alias, plural, any case), or None."""
        for nid in self._index.candidates(name):
            if nid in self._by_id:
                return self._by_id[nid]
        return None

    def resolve_hazard(self, name: str) -> Node | None:
        """The hazard entry ``name`` means (exact name, plural, any case), or None."""
        for nid in self._hazard_index.candidates(name):
            if nid in self._hazard_ids:
                return self._hazard_ids[nid]
        return None

    def suggest(self, name: str, k: int = 3) -> list[str]:
        """The closest creature names to an unknown ``name``, best first."""
        key = " ".join(name_key(name))
        if not key:
            return []
        words = set(key.split()) | {w[:-1] for w in key.split() if w.endswith("s") and len(w) > 3}
        # a shared word counts a whole point, spelling closeness (0..1) breaks ties and finds typos.
        # The editor asks on every keystroke of a name being typed, so the exact (slow) difflib ratio is
        # only computed where it can change the answer: for names sharing a word (they rank above all
        # others), then, while fewer than k are found, for the others in order of a cheap upper bound of
        # the ratio (difflib's quick_ratio, from letter counts), stopping once the bound falls below the
        # k-th best ratio so far. Same result as scoring every name.
        scored = []
        for norm, real, ws, _ in self._keys:
            shared = len(words & ws)
            if shared:
                scored.append((-(shared + difflib.SequenceMatcher(None, key, norm).ratio()), real))
        need = k - len(scored)
        if need > 0:
            letters, n = Counter(key), len(key)
            bounds = sorted(
                ((2 * sum((letters & counts).values()) / (n + len(norm)), norm, real)
                 for norm, real, ws, counts in self._keys if not words & ws),
                key=lambda t: -t[0],
            )
            best: list[float] = []  # exact ratios of the others, best first
            for bound, norm, real in bounds:
                if bound < 0.6 or (len(best) >= need and bound < best[need - 1]):
                    break
                ratio = difflib.SequenceMatcher(None, key, norm).ratio()
                if ratio >= 0.6:
                    scored.append((-ratio, real))
                    best = sorted([*best, ratio], reverse=True)
        return [real for _, real in sorted(scored)[:k]]

    def named_archetype(self, concept: str) -> Node | None:
        """The archetype the concept names (all of its name's words, a plural too: "pirate captain", "bounty hunters"),
        the longest name first; None for a concept that names a creature whole ("skeleton guard")."""
        if self.resolve(concept) is not None:
            return None
        said = re.findall(r"[a-z]+", concept.lower())
        words = set(said) | {w[:-1] for w in said if w.endswith("s")}
        named = [a for a in self.archetypes if set(re.findall(r"[a-z]+", a.name.lower())) <= words]
        return max(named, key=lambda a: len(a.name.split()), default=None)

    def archetype_build(self, archetype: Node, level: int, k: int = 3) -> tuple[Role | None, list[str], list[Node]]:
        """(role, required skills, abilities) of an NPC of ``level`` the archetype names (``archetypes``): the feats
        ``pick_feats`` chooses, each followed by what it grants."""
        skills = {n.name: str(n.fields.get("key_attribute", "")) for n in self.skills}
        prerequisites = str(archetype.fields.get("prerequisites", ""))
        feats = self._archetype_feats.get(archetype.node_id, [])
        dedication = next((f for f in feats if "dedication" in {t.lower() for t in f.traits}), None)
        if dedication is not None:
            prerequisites = str(dedication.fields.get("prerequisites", "")) or prerequisites
        out: list[Node] = []
        for feat in archetypes.pick_feats(feats, level, k):
            out += [feat] + [g for g in archetypes.granted(feat.text, self._abilities) if g not in out]
        return archetypes.archetype_role(prerequisites, skills), archetypes.required_skills(prerequisites, skills), out

    def roadmap(self, class_node: Node, concept: str) -> ClassRoadMap | None:
        """GM Core's road map of the class (of its variant the concept names: a "warpriest"), or None."""
        return roadmap_for(self.roadmaps, class_node.name, concept)

    def roadmap_abilities(self, roadmap: ClassRoadMap, class_node: Node, level: int) -> list[tuple[str, Node | None]]:
        """The road map's abilities an NPC of ``level`` has, each with the entry it names (``roadmaps.roadmap_abilities``)."""
        slugs = {c.node_id.rsplit(":", 1)[-1] for c in self.classes}
        return roadmap_abilities(roadmap, class_node.node_id, level, self._abilities, self.class_features, slugs)  # type: ignore[return-value]

    @cached_property
    def _ancestry_forms(self) -> NameIndex:
        # the forms a note's hover reads (kg.names: "elven", "dwarven", "orcish"), of the ancestries, with the
        # creatures' and class features' prose as the English an adjective is checked against
        return NameIndex.build([*self.ancestries, *self._nodes, *self.class_features])

    def ancestry_of(self, word: str) -> Node | None:
        """The Player Core ancestry ``word`` names: its name, plural or adjective ("dwarves", "elven"), or None."""
        ids = {a.node_id: a for a in self.ancestries}
        return next((ids[nid] for nid in self._ancestry_forms.candidates(word) if nid in ids), None)

    def ancestry_senses(self, ancestry: Node) -> list[str]:
        """The senses every Monster Core creature of the ancestry's trait has ("**Perception** +7; Darkvision"): a
        dwarf's or goblin's Darkvision, an elf's Low-Light Vision; none for a human (its creatures share none). The
        ancestry entries do not print their vision, their people's stat blocks do."""
        trait = ancestry.name.lower()
        shared: set[str] | None = None
        for n in self._nodes:
            if trait in {t.lower() for t in n.traits}:
                said = str(n.fields.get("perception", "")).partition(";")[2]
                senses = {x.strip() for x in said.split(",") if x.strip()}
                shared = senses if shared is None else shared & senses
        return sorted(shared or [])

    def ancestry_adjective(self, word: str) -> str | None:
        """The ancestry (its name, lower-case) an adjective names ("elven" -> "elf", "dwarven" -> "dwarf"), or None;
        not the name itself or its plural ("elf", "goblins": those name the kind already)."""
        node = self.ancestry_of(word)
        name = node.name.lower() if node is not None else None
        if name is not None and word.lower() not in (name, name + "s", name + "es"):
            return name
        return None

    def skill_actions(self, skill: str) -> list[Node]:
        """The actions of ``skill``'s entry ("**Untrained actions** Create a Diversion, Impersonate, Lie", "**Trained
        actions** Feint") that take an encounter's actions (one, two, three, a reaction or a free action: Feint, Create
        a Diversion, Demoralize; not Lie or Impersonate, which take minutes), in the entry's order."""
        node = next((n for n in self.skills if n.name.lower() == skill.lower()), None)
        if node is None:
            return []
        out = []
        for name in skill_action_names(node.text):
            for n in self._abilities.get(name.lower(), []):
                if n.type == "action" and _COMBAT_CAST.search(str(n.fields.get("cast", ""))):
                    out.append(n)
                    break
        return out

    def creatures(self) -> list[Node]:
        """All creature entries, by level then name."""
        return list(self._nodes)

    @cached_property
    def ancestry_traits(self) -> frozenset[str]:
        """The Player Core ancestries' names as traits (lower-case)."""
        return frozenset(a.name.lower() for a in self.ancestries)

    @cached_property
    def people(self) -> frozenset[str]:
        """Ids of Monster Core's people: creatures with an ancestry's trait (the Orc Veteran, the Kholo Sergeant, the
        Lawbringer Warpriest) whose other traits are people's too, a heritage's that only people have (changeling) or
        one most of them have (humanoid); a Weretiger's beast is neither, nor a leshy's plant."""
        ids = {n.node_id for n in self._nodes if self.ancestry_traits & {t.lower() for t in n.traits}}
        having: dict[str, set[str]] = {}
        for n in self._nodes:
            for t in n.traits:
                having.setdefault(t.lower(), set()).add(n.node_id)
        own = {t for t, nids in having.items() if nids <= ids or 2 * len(nids & ids) > len(ids)}
        return frozenset(n.node_id for n in self._nodes if n.node_id in ids and {t.lower() for t in n.traits} <= own)

    @cached_property
    def person_names(self) -> tuple[frozenset[str], ...]:
        """The Player Core backgrounds' and classes' names as word sets, those that name people ("guard", "street
        urchin", "wizard"); not one named by a past participle, which describes someone ("Haunted", "Cursed",
        "Blessed", "Returned": a "haunted crypt" is no haunted person's)."""
        out = []
        for n in [*self.backgrounds, *self.classes]:
            words = re.findall(r"[a-z]+", re.sub(r"\([^)]*\)", "", n.name).lower())
            if words and not words[-1].endswith("ed"):
                out.append(frozenset(words))
        return tuple(out)

    @cached_property
    def spell_lists(self) -> dict[str, Counter[str]]:
        """Each tradition's spells as Monster Core's casters show them (``spells.tradition_lists``)."""
        return tradition_lists(self._nodes)

    @cached_property
    def creature_traits(self) -> frozenset[str]:
        """Every trait a Monster Core creature has (lower-case): the kinds a word of a concept can name."""
        return frozenset(t.lower() for n in self._nodes for t in n.traits)

    @cached_property
    def kind_heads(self) -> frozenset[str]:
        """Last words of Monster Core names that name a kind though no trait does: the head of two names or more whose
        creatures share a trait ("spider": the Hunting Spider and the Goliath Spider, animals; "drake", "bear", "eel");
        not a word that names a person ("warrior", "scout", "hunter": backgrounds), nor one whose creatures share
        nothing ("queen", "horse")."""
        heads: dict[str, list[frozenset[str]]] = {}
        for n in self._nodes:
            words = re.findall(r"[a-z]+", re.sub(r"\([^)]*\)", " ", n.name).lower())
            if len(words) > 1 and words[-1] not in self.creature_traits:
                heads.setdefault(words[-1], []).append(frozenset(t.lower() for t in n.traits))
        return frozenset(h for h, sets in heads.items()
                         if len(sets) > 1 and frozenset.intersection(*sets) and h not in self.person_words)

    @cached_property
    def person_words(self) -> frozenset[str]:
        """The words of ``person_names``: what names a person ("guard", "merchant"), not a creature kind."""
        return frozenset(w for name in self.person_names for w in name)


_COMBAT_CAST = re.compile(r"\[(?:one-action|two-actions|three-actions|reaction|free-action)\]")


def skill_action_names(text: str) -> list[str]:
    """The action names a skill's entry lists as its untrained and trained actions, in order."""
    out: list[str] = []
    for m in re.finditer(r"^\*\*(?:Untrained|Trained) actions\*\*(?:\s*\([^)]*\))?\s*(.+)$", text, re.M):
        out += [a.strip() for a in m.group(1).split(",") if a.strip()]
    return out


def _spellcasting_id(class_id: str) -> str:
    """"pf2e:class:wizard" -> "pf2e:class-feature:wizard--wizard-spellcasting" (a casting class's feature)."""
    return class_id.replace(":class:", ":class-feature:", 1) + "--" + class_id.rsplit(":", 1)[-1] + "-spellcasting"
