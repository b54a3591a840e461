"""The name index: every entry name, alias and legacy name, found in free text.

``NameIndex.build(nodes)`` turns entry names into token keys (lowercase word tokens, punctuation
dropped) in a dict, plus the set of their prefixes, so ``find_mentions`` walks a note's tokens once:
leftmost-longest, non-overlapping, case-insensitive, on word boundaries. Generated variants:
plurals of the last word ("goblin warriors"), the singular of plural multi-word names ("hero
point"), reordered item grades ("minor healing potion" for "Healing Potion (Minor)", "+1 weapon
potency"), "<rune> rune", "persistent fire damage", and the legacy names of ``kg.legacy``.
Values after conditions ("frightened 2") and valued traits ("deadly d10", "reach 10 ft") are
part of the mention. Notes also read forms that are no name (``NOTE_FORMS``): verb forms and
adjectives, compounds written open, hyphenated or closed ("short bow", "chainmail"), initials
written in capitals ("RK", "LoH"), and a statistic's value for its rules section ("resist 10").

Precision over recall: a name is never matched partially or fuzzily; common English words that
are also entry names ("light", "hidden", "fire") only count with a sign they are meant as rules
(a value, emphasis, a capital inside a sentence, or a following "trait"/"spell"/... word); a
capitalised name glued to other capitalised words ("Phoenix Down") is taken for an unknown proper
name and skipped; code blocks, inline code and URLs are never read.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache

from pydantic import BaseModel, Field

from gmprep.kg.legacy import HAND_LEGACY_NAMES, LEGACY_NAMES, LEGACY_SPELLINGS
from gmprep.kg.models import Node

# The node ids of name-only entries of books the store does not hold (``NameIndex.build``'s ``others``): a hover
# says which book names it, having no text to show
OTHER_ID_PREFIX = "other:"

# Default preference when one name belongs to several entries (lower wins):
# "Trip" action over trait, "Reactive Strike" action over feat, "Leshy" ancestry over trait,
# "Treat Wounds" action over the rules page, "Shield Block" feat over the class feature.
TYPE_PRIORITY = {
    "condition": 0, "action": 1, "rule": 2, "spell": 3, "class": 4, "ancestry": 5, "heritage": 6,
    "creature": 7, "hazard": 8, "equipment": 9, "feat": 10, "archetype": 11, "background": 12,
    "class-feature": 13, "trait": 14, "skill": 15,
}
# A word right after a name that says which kind of entry is meant ("the flourish trait").
CONTEXT_TYPES = {
    "trait": "trait", "traits": "trait", "spell": "spell", "spells": "spell", "cantrip": "spell",
    "ritual": "spell", "feat": "feat", "feats": "feat", "action": "action", "actions": "action",
    "activity": "action", "reaction": "action", "condition": "condition", "conditions": "condition",
    "rule": "rule", "rules": "rule", "creature": "creature", "creatures": "creature",
    "monster": "creature", "hazard": "hazard", "trap": "hazard", "heritage": "heritage",
    "ancestry": "ancestry", "class": "class", "archetype": "archetype", "background": "background",
    "item": "equipment", "items": "equipment", "rune": "equipment", "runes": "equipment",
}
# Entry names that are far more often plain English in a GM's note than a rule reference.
COMMON_WORDS = frozenset("""
a aid air animal arc area attack aura avoid beast boost brace broken calling calm capacity charm
chases class climb climbing cold command common comfort companion complex composite concentrate
conditions construct contact contract critical curse cursed death delay demon detection devil
disease divine dream drop duels earth emotion escape exploration exposed fear fire fleeing flourish
fly focus focused follow force fortune friendly general ghost giant grab grabbed guard healing heal
helpful hidden hide holy hostile human indifferent infiltration influence interact jump leadership
leap light magical manipulate mental metal mist mug move none nightmare observed occult open plant
point poison portable potion press primal professional range rare reach ready recovery reflection
release reputation research resting rope scout search secret seek sense senses shadow skill sleep
social sonic spirit splash staff stance stand step stride strike structure subtle summon summoned
swim tactic tea tech thought time training transfer trap treasure troop twin undead uncommon unique
visual wand water wood zone falling traits attitudes unfriendly controlled tracking swarm reload
mounted ingested inhaled injury virtual whetstone sweep scatter range shove trip disarm grapple
minion dragon bomb scroll oil fungus snare wounded dying darkness electricity acid sonic mirror torch
rope shield knock track gossip level mark note lock chain bell map book candle ladder hammer net club
status message request perform mount travel craft discover stop pick lie shatter wish web protection
striking keen sack harm unholy hallucination manifestation sustain repair borrow subsist coerce
""".split())
_ITALIC_TYPE = "spell"  # *fireball*: italics mark a spell name in prep notes (as in the books)
_NUMBER_RE = re.compile(r"^\d+$")
_DIE_RE = re.compile(r"^d(\d+)$")
_GRADES = {
    "minor", "lesser", "moderate", "greater", "major", "true", "young", "adult", "ancient",
    "standard-grade", "high-grade", "supreme", "fine", "type i", "type ii", "type iii", "type iv",
}
_DAMAGE_TYPES = (
    "acid bleed bludgeoning cold electricity fire force mental piercing poison slashing sonic "
    "spirit vitality void"
).split()
# Rules-page terms the GM screen pages define without being their title.
RULE_ALIASES = {
    "greater cover": "pf2e:rule:gm-screen--terrain-and-cover",
    "lesser cover": "pf2e:rule:gm-screen--terrain-and-cover",
    "standard cover": "pf2e:rule:gm-screen--terrain-and-cover",
    "difficult terrain": "pf2e:rule:gm-screen--terrain-and-cover",
    "greater difficult terrain": "pf2e:rule:gm-screen--terrain-and-cover",
    "hazardous terrain": "pf2e:rule:gm-screen--terrain-and-cover",
    "bright light": "pf2e:rule:gm-screen--light",
    "dim light": "pf2e:rule:gm-screen--light",
    "counteract check": "pf2e:rule:gm-screen--counteracting",
    "counteract rank": "pf2e:rule:gm-screen--counteracting",
    "recovery check": "pf2e:rule:gm-screen--death-dying-and-unconscious",
    "falling damage": "pf2e:rule:gm-screen--falling",
    "elite adjustment": "pf2e:rule:gm-screen--monster-adjustments",
    "elite adjustments": "pf2e:rule:gm-screen--monster-adjustments",
    "weak adjustment": "pf2e:rule:gm-screen--monster-adjustments",
    "weak adjustments": "pf2e:rule:gm-screen--monster-adjustments",
    "elite template": "pf2e:rule:gm-screen--monster-adjustments",
    "weak template": "pf2e:rule:gm-screen--monster-adjustments",
    "bulk": "pf2e:rule:gm-screen--bulk-and-encumbered",
    "xp award": "pf2e:rule:gm-screen--xp-awards",
    "encounter budget": "pf2e:rule:gm-screen--encounter-budget",
    "travel speed": "pf2e:rule:gm-screen--travel-speed",
    "level-based dc": "pf2e:rule:gm-screen--dcs-by-level",
    "level-based dcs": "pf2e:rule:gm-screen--dcs-by-level",
}

# a "+" belongs to a number ("+1 striking"), not to a word: a build list's "+fireball" is Fireball
_TOKEN = re.compile(r"(?:\+(?=\d))?[A-Za-z0-9]+(?:['\u2019\-][A-Za-z0-9]+)*")
# Regions never read in plain text (notes go through ``kg.prose``, which masks them structurally):
# fenced code, inline code, URLs, link targets, HTML comments, e-mail addresses. Every pattern starts
# at most once per position and never backtracks over a long run, so the cost stays linear.
_SKIP = re.compile(
    r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]*`|<!--.*?(?:-->|\Z)|\]\([^)\n]*\)"
    r"|\b(?:https?|ftp|file)://\S+|\bwww\.\S+|(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    re.S,
)
# Forms only note scanning reads (search queries keep to names, aliases, plurals and legacy names).
NOTE_FORMS = frozenset({"inflected", "adjective", "compound", "plural-note", "acronym", "valued", "ability"})
# forms read in queries only: the Remaster journal's long tail of renames, and rules-prose section titles
QUERY_FORMS = frozenset({"journal", "section"})
# Forms that mean an entry only with their sign in the text: never looked up alone.
_SIGNED_FORMS = frozenset({"acronym", "valued"})
# Particles after a verb that keep the action's meaning ("stood up" -> Stand); English grammar.
_PARTICLES = ("up", "down", "out", "off", "away", "back", "over", "aside")
_ADJ_SUFFIXES = ("en", "ish", "ic", "an", "ese", "i")
# What may stand between two words of one name: spaces, at most one line break (with the block quote
# markers that continue a quote on the next line: "Recall\n> Knowledge"), ( ) and commas.
_JOIN = re.compile(r"[ \t]*(?:[(),][ \t]*)*(?:\n[ \t]*(?:>[ \t]*)*)?(?:[(),][ \t]*)*")
_SENTENCE_PUNCT = frozenset(".!?:;|#>*([\"\x00")  # \x00: kg.prose's mask (a block marker, markup)
# Determiners, pronouns and auxiliaries (closed-class English): never half of a compound name
# ("fear some" is not Fearsome, "were rats" not Wererat).
_GRAMMAR = frozenset(
    "some any many much this that these those what whom whose them they their "
    "was were are been being have has had does did can could will would shall should may might must".split()
)
_CLASS_TRAIT = re.compile(r"abilities from the [\w' -]+ class", re.I)
_LIST_MARKER = re.compile(r"(?:^|\n)[ \t]*(?:[-+*]|\d+[.)])$")
# Entry types whose one-word names GMs write as two words and back ("short bow", "chainmail").
_COMPOUND_TYPES = frozenset({"equipment", "spell", "creature", "rule"})
# What GMs abbreviate to initials in play ("RK", "LoH", "AoO"); items and creatures are written out.
_ACRONYM_TYPES = frozenset({"action", "spell", "feat", "class-feature", "rule", "condition"})
_ACRONYM_MIN_CITED = 5  # entries of the corpus naming it, for its initials to be a candidate
# Quality nouns (English morphology): a rules section so named is a statistic when a number follows.
_QUALITY_SUFFIXES = ("ness", "ance", "ence", "ity")
_LEVEL_PAGE = re.compile(r"^level \d+$", re.I)
# A creature's ability: a bold name opening a line of its stat block ("**Zombie Rot** An infected ..."),
# not a statistic's label followed by its value ("**Perception** +3").
_ABILITY = re.compile(r"(?m)^\*\*([A-Z][A-Za-z' -]{2,40}?)\*\*(?![ \t]*[+\d(])")
# Lowercase words inside a longer proper name (English grammar, not a list of names).
_CONNECTORS = frozenset({"of", "the", "and", "de", "du", "von", "van", "la", "le", "del"})
# a title's function words (closed classes: articles, prepositions, pronouns, conjunctions, auxiliaries): a section
# title needs two words besides these to be a name ("Treasure by Level"; not "In This Book")
_TITLE_SMALL = frozenset("""a an and as at by for from in into of on or per the to with without nor but if not no
i i'm me my we our you your he him his she her it its they them their this that these those what how when who why
is are be was were do does did can will""".split())
_STOP_BEFORE = {"a", "an", "the", "my", "his", "her", "their", "our", "your", "its", "this", "that"}
# Words after a skill's name that say the skill is meant ("Stealth DC", "stealth checks", "Crafting
# skill"): the rules' own vocabulary for a statistic, not a list of names.
_SKILL_CONTEXT = frozenset("check checks dc dcs skill skills modifier modifiers proficiency roll rolls".split())
# Words before a name that ask for a spell, as the books write them: the verb of Cast a Spell ("cast
# Sleep", "casts guidance") and the items that hold one spell by name ("scroll of", "wand of"; Scroll and
# Magic Wand entries name their spell after "of"). Like CONTEXT_TYPES, this is the game's own wording.
_SPELL_VERBS = frozenset("cast casts casting casted recast recasts".split())
_SPELL_HOLDERS = frozenset("scroll scrolls wand wands".split())


class Mention(BaseModel):
    """One entry name found in text: character offsets, the entry, an optional value
    ("frightened 2" -> 2, "deadly d10" -> 10), and the legacy name when the text used one."""

    start: int
    end: int
    text: str
    node_id: str
    name: str
    value: int | None = None
    legacy_name: str | None = None
    confidence: float = 1.0  # the context scorer's confidence that the rule is meant
    form: str = "name"  # how the text matched: name, alias, plural, legacy, inflected, adjective, family
    alternatives: list[str] = Field(default_factory=list)  # other entries the words name, best first


@dataclass(frozen=True, slots=True)
class _Candidate:
    node_id: str
    name: str
    type: str
    rank: tuple  # sort key: variant kind, type priority, id length, id
    legacy_name: str | None = None
    form: str = "name"


@dataclass(slots=True)
class Match:
    """One leftmost-longest name match in a text, before anything decides whether it is meant:
    the entries it could name (``candidates``, best first), the one the nearby words ask for
    (``chosen``), a value after it, and whether the built-in rules of thumb accept it."""

    start: int
    end: int  # after the value, when there is one
    candidates: list[_Candidate]
    chosen: _Candidate
    value: int | None
    heuristic: bool  # accepted by the rules of thumb in ``NameIndex._accept``
    name_end: int = -1  # end of the name's own words (before "2" of "frightened 2")
    veto: bool = False  # never a mention, whatever a scorer says (a class's trait without "trait")
    asked: bool = False  # the words before it ask for a spell: "cast Sleep", "scroll of detect magic"

    def mention(self, text: str, confidence: float = 1.0) -> Mention:
        c = self.chosen
        alts = [o.node_id for o in self.candidates if o.node_id != c.node_id]
        return Mention(
            start=self.start, end=self.end, text=text[self.start:self.end], node_id=c.node_id, name=c.name,
            value=self.value, legacy_name=c.legacy_name, confidence=confidence, form=c.form,
            alternatives=list(dict.fromkeys(alts)),
        )


@dataclass(slots=True)
class _Token:
    start: int
    end: int
    norm: str
    upper: bool  # starts with a capital letter
    caps: bool = False  # a capital after the first: written as initials ("RK", "LoH", "AoO")


def normalize_token(tok: str) -> str:
    """Lowercase with typographic apostrophes folded."""
    return tok.replace("\u2019", "'").lower()


def name_key(name: str) -> tuple[str, ...]:
    """The token key of a name: its word tokens, lowercased; punctuation and spacing ignored."""
    return tuple(normalize_token(m.group()) for m in _TOKEN.finditer(name))


def _head_plurals(key: tuple[str, ...]) -> set[str]:
    """An item name's plurals on its head noun, the word before "of": "potions of shared memories", "bags of
    holding", "elixirs of life"."""
    if "of" not in key[1:-1]:
        return set()
    k = list(key).index("of", 1)
    return {" ".join([*key[:k - 1], p, *key[k:]]) for p in _plural(key[k - 1])}


@cache
def _plural(word: str) -> set[str]:
    """Plural forms of a noun from lemminflect's lexicon (its rules for words it doesn't know)."""
    if word[-1:].isdigit() or len(word) < 3 or not word.isalpha():
        return set()
    from lemminflect import getAllInflections, getAllInflectionsOOV, getAllLemmas

    if word.endswith("s") and set(getAllLemmas(word, upos="NOUN").get("NOUN", ())) - {word}:
        return set()  # already a plural ("Treat Wounds", "Signature Spells"): no "woundses"
    known = set(getAllInflections(word, upos="NOUN").get("NNS") or ()) - {word}
    if known:
        return known
    # a word the lexicon lacks or counts as a mass noun ("ooze") takes the regular plural ("oozes");
    # a name in -y after a consonant is also written with a plain "s" ("leshys" beside "leshies")
    forms = set(getAllInflectionsOOV(word, upos="NOUN").get("NNS") or ()) - {word}
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        forms.add(word + "s")
    return forms


@cache
def _verb_lemmas(word: str) -> tuple[str, ...]:
    """The verbs a word is a form of (lemminflect): "frightened" -> ("frighten",)."""
    from lemminflect import getAllLemmas

    return tuple(getAllLemmas(word, upos="VERB").get("VERB", ()))


@cache
def _verb_forms(word: str) -> set[str]:
    """Past, participle, -ing and third-person forms of a verb (lemminflect's lexicon only: a word
    it does not know as a verb gets none)."""
    if len(word) < 3 or not word.isalpha():
        return set()
    from lemminflect import getAllInflections

    infl = getAllInflections(word, upos="VERB")
    return {f for tag in ("VBD", "VBN", "VBG", "VBZ") for f in infl.get(tag, ()) if f != word}


def _singular(word: str) -> str | None:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("ss") or not word.endswith("s") or len(word) < 4:
        return None
    return word[:-1]


class NameIndex:
    """Entry names, aliases and legacy names -> entries, searchable in free text."""

    def __init__(self) -> None:
        self._keys: dict[tuple[str, ...], list[_Candidate]] = {}
        self._prefixes: set[tuple[str, ...]] = set()
        self._valued_traits: set[str] = set()
        self._by_id: dict[str, tuple[str, str]] = {}  # node_id -> (name, type)
        # traits that only mark a class's abilities ("This indicates abilities from the magus class"):
        # a GM writing "Magus" or "Commander" means the class or a rank, never this trait
        self._class_traits: set[str] = set()
        self._vocab: set[str] = set()
        self._others: set[str] = set()  # name-only entries of books the store does not hold (``build``)

    # ---- building -------------------------------------------------------------------------
    @classmethod
    def build(cls, nodes: Iterable[Node], others: Iterable[Node] = ()) -> NameIndex:
        """Index every entry node's name, aliases and generated variants, plus legacy names. ``others``: name-only
        entries of books the store does not hold (``core.agents.otherbooks.catalogue_entries``), indexed by name and
        plural only, and only where no entry, alias, legacy name or form of ``nodes`` already reads the words (a class
        trait aside: "Magus" names the class, never the trait that marks its abilities)."""
        idx = cls()
        nodes_list = list(nodes)
        # "Level 2" archetype pages are corpus artefacts, not names anyone writes; the books' rules-prose
        # sections (``fields.hover_name`` False, ingest/aon_rules.py) are searchable and citable but not names:
        # their titles are headings ("Introduction", "Rewards", "Walls", "Wind", "Level") that read as plain
        # English in a note, and where a title is a rule's name (Dying, Cover, Persistent Damage) the
        # condition, action or GM-screen page already answers the hover
        entries = [n for n in nodes_list if n.kind == "entry" and not _LEVEL_PAGE.match(n.name)
                   and not n.is_prose]
        # the words of the corpus's own prose, rules sections included: what counts as an English word
        # when a form is derived
        prose_words: list[tuple[str, list[str]]] = []
        for node in nodes_list:
            if node.kind == "entry" and node.text:
                words = re.findall(r"[a-z]+", node.text.lower())
                idx._vocab.update(words)
                prose_words.append((node.node_id, words))
        for node in entries:
            idx._by_id[node.node_id] = (node.name, node.type)
            if node.type == "trait" and _CLASS_TRAIT.search((node.text or "")[:200]):
                idx._class_traits.add(node.node_id)
        for node in entries:
            idx._add_entry(node)
            for trait in node.traits:
                base, _, val = trait.rpartition("-")
                if base and (_DIE_RE.match(val) or _NUMBER_RE.match(val) or len(val) == 1):
                    idx._valued_traits.add(base)
        idx._valued_traits &= {nid.rsplit(":", 1)[1] for nid, (_, t) in idx._by_id.items() if t == "trait"}
        idx._valued_traits.add("reach")  # creature and weapon text: "reach 10 feet"
        for alias, target in RULE_ALIASES.items():
            idx._add(alias, target, variant=1)
        if "pf2e:condition:persistent-damage" in idx._by_id:
            for dtype in _DAMAGE_TYPES:
                idx._add(f"persistent {dtype} damage", "pf2e:condition:persistent-damage", variant=1)
        # the journal's long tail (``JOURNAL_RENAMES``) is read in queries only (form "journal", ``_usable``): in
        # notes, on one held-out split, it added ten hovers and no true one (docs/answerability.md)
        for legacy, target in LEGACY_NAMES.items():
            idx._add(legacy, target, variant=1, legacy_name=legacy,
                     form="name" if legacy in HAND_LEGACY_NAMES else "journal")
        for spelling, legacy in LEGACY_SPELLINGS.items():
            idx._add(spelling, LEGACY_NAMES[legacy], variant=1, legacy_name=legacy)
        idx._add_families(entries)
        idx._add_note_forms(entries)
        idx._add_statistics([n for n in nodes_list if n.kind == "entry" and n.is_prose])
        idx._add_section_titles([n for n in nodes_list if n.kind == "entry" and n.is_prose])
        idx._add_acronyms(entries, prose_words)
        idx._add_abilities(entries)
        idx._add_others(list(others))
        for cands in idx._keys.values():
            cands.sort(key=lambda c: c.rank)
        idx._vocab = set()  # only needed while building
        return idx

    def _add_others(self, others: list[Node]) -> None:
        """Name-only entries of other books, under words nothing held reads (see ``build``)."""
        for node in others:
            key = name_key(node.name)
            if not key or self._taken(key):
                continue
            self._others.add(node.node_id)
            self._by_id[node.node_id] = (node.name, node.type)
            self._add(node.name, node.node_id, variant=0)
            # an archetype's name in the plural is its order's or people's members ("the Lion Blades", "Mammoth
            # Lords" of the region), not the archetype: only the held archetypes' plurals are names (their text
            # is the hover)
            if node.type not in ("condition", "trait", "archetype"):
                for p in _plural(key[-1]):
                    self._add(" ".join([*key[:-1], p]), node.node_id, variant=2, form="plural")

    def _taken(self, key: tuple[str, ...]) -> bool:
        """Some entry already reads these words (a class's trait aside, which a GM never means by the class name)."""
        return any(c.node_id not in self._class_traits for c in self._keys.get(key, ()))

    def _add(
        self, text: str | tuple[str, ...], node_id: str, *, variant: int, legacy_name: str | None = None,
        form: str = "name",
    ) -> None:
        if node_id not in self._by_id:
            return
        key = name_key(text) if isinstance(text, str) else text
        if not key:
            return
        if node_id in self._others and self._taken(key):
            return  # another book's name never competes with a held entry for the same words
        name, etype = self._by_id[node_id]
        if legacy_name and form == "name":
            form = "legacy"
        rank = (variant, TYPE_PRIORITY.get(etype, 20), len(node_id), node_id)
        cand = _Candidate(node_id, name, etype, rank, legacy_name, form)
        bucket = self._keys.setdefault(key, [])
        if all(c.node_id != node_id for c in bucket):
            bucket.append(cand)
        else:  # keep the better variant of the same entry
            bucket[:] = [c if c.node_id != node_id or c.rank <= rank else cand for c in bucket]
        for i in range(1, len(key) + 1):
            self._prefixes.add(key[:i])

    def _add_entry(self, node: Node) -> None:
        nid = node.node_id
        self._add(node.name, nid, variant=0)
        for alias in node.aliases:
            self._add(alias, nid, variant=1, form="alias")
        key = name_key(node.name)
        forms: set[str] = set()  # grade reorders and rune names: the name itself, written otherwise
        plurals: set[str] = set()
        m = re.match(r"^(.*?)\s*\(([^()]+)\)$", node.name)
        base = m.group(1) if m else node.name
        if m:
            grade = m.group(2).strip().lower()
            if grade in _GRADES or re.fullmatch(r"\+\d", grade):
                forms |= {f"{grade} {base}", f"{base} {grade}"}
                base_key = name_key(base)
                if base_key and node.type in ("equipment", "creature"):  # "minor healing potions"
                    plurals |= {" ".join([grade, *base_key[:-1], p]) for p in _plural(base_key[-1])}
        if node.type == "equipment" and "etched" in str(node.fields.get("usage", "")):
            forms |= {f"{f} rune" for f in [node.name, *forms]}
        # plurals of the last word, singular of plural multi-word names
        if node.type not in ("condition", "trait") and key and not m:
            for p in _plural(key[-1]):
                plurals.add(" ".join([*key[:-1], p]))
        if len(key) > 1 and not m and node.type in ("rule", "equipment", "hazard", "creature"):
            sing = _singular(key[-1])
            if sing:
                plurals.add(" ".join([*key[:-1], sing]))
        if node.type == "equipment" and not m:
            plurals |= _head_plurals(key)
        for form in sorted(forms):
            self._add(form, nid, variant=2, form="alias")
        for form in sorted(plurals - forms):
            self._add(form, nid, variant=2, form="plural")
        if node.type == "equipment" and len(key) >= 3 and key[-1] == "armor" and not m and key[:-1] not in self._keys:
            # armor written without its head noun: "studded leather" (two words at least: "leather"
            # alone is the material)
            self._add(" ".join(key[:-1]), nid, variant=4, form="compound")

    def _add_families(self, nodes: list[Node]) -> None:
        """Map a graded item's bare family name ("healing potion") to its lowest grade, when no
        entry has that name itself."""
        families: dict[tuple[str, ...], Node] = {}
        for node in nodes:
            m = re.match(r"^(.*?)\s*\(([^()]+)\)$", node.name)
            if node.kind != "entry" or not m or node.type != "equipment":
                continue
            fam = name_key(m.group(1))
            best = families.get(fam)
            if best is None or (node.level or 0, node.node_id) < (best.level or 0, best.node_id):
                families[fam] = node
        for fam, node in families.items():
            if fam not in self._keys:
                self._add(" ".join(fam), node.node_id, variant=3, form="family")
                # "healing potions"; "elixirs of life" (the family of Elixir of Life (Minor) ...)
                for form in sorted({" ".join((*fam[:-1], p)) for p in _plural(fam[-1])} | _head_plurals(fam)):
                    if tuple(form.split()) not in self._keys:
                        self._add(form, node.node_id, variant=3, form="plural-note")

    def _add_note_forms(self, nodes: list[Node]) -> None:
        """Forms GMs write that are not names: verb forms of actions ("trips", "Hunted Prey",
        "stood up" when the action's own text says "You stand up"), adjectives of ancestries found
        in the corpus's own prose ("elven", "dwarven"), and plurals of traits ("scrolls", "troops")."""
        vocab = self._vocab
        for node in nodes:
            key = name_key(node.name)
            if node.type == "action" and key and "(" not in node.name:
                first, rest = key[0], key[1:]
                forms = _verb_forms(first)
                m = re.match(r"you\s+" + re.escape(first) + r"\s+(\w+)", (node.text or "").lower())
                particle = m.group(1) if m and m.group(1) in _PARTICLES and not rest else None
                for f in forms | {first}:
                    if f != first:
                        self._add(" ".join((f, *rest)), node.node_id, variant=4, form="inflected")
                    if particle:
                        self._add(f"{f} {particle}", node.node_id, variant=4, form="inflected")
            if node.type == "trait" and len(key) == 1:
                for p in _plural(key[0]):
                    self._add(p, node.node_id, variant=4, form="plural-note")
            if node.type == "action" and ("a" in key[1:-1] or "an" in key[1:-1]):
                # "Raise Shield", "Grab Edge": GMs drop the article
                self._add(" ".join(w for w in key if w not in ("a", "an")), node.node_id, variant=4, form="inflected")
            if node.type == "condition" and len(key) == 1 and key[0].endswith(("ed", "en")):
                # "frightens", "frighten": the verb behind a participle condition
                for lemma in _verb_lemmas(key[0]):
                    for f in {lemma} | _verb_forms(lemma):
                        if (f,) not in self._keys and f != key[0] and not f.endswith(("ed", "en")):
                            self._add(f, node.node_id, variant=4, form="inflected")
            if node.type in ("trait", "rule") and len(key) == 1 and key[0].endswith("ity") \
                    and key[0][:-3] in vocab and (key[0][:-3],) not in self._keys:
                # "electric" for the electricity trait: the adjective an -ity noun is made from
                self._add(key[0][:-3], node.node_id, variant=4, form="adjective")
            if node.type == "ancestry" and len(key) == 1:
                word = key[0]
                stems = {word, word[:-1] if word.endswith("e") else word}
                stems |= {p[:-2] if p.endswith("es") else p[:-1] for p in _plural(word)}
                for stem in stems:
                    for suf in _ADJ_SUFFIXES:
                        adj = stem + suf
                        if adj != word and adj in vocab and (adj,) not in self._keys:
                            self._add(adj, node.node_id, variant=4, form="adjective")
        self._add_compounds()
        # Skills (Stealth, Perception) hover their own index entry (type "skill", ingest/skills.py), not
        # the skill-actions table (judged a wrong entry on real notes).

    def _add_compounds(self) -> None:
        """Compounds written open or closed, derived from the index's own keys: "short bow",
        "short-bow", "composite short bow", "morning stars" for Shortbow, Composite Shortbow and
        Morningstar; "chainmail" for Chain Mail. A closed word is cut where exactly one cut makes two
        words of the corpus's prose (halves of 4 letters or more first, else of 3; no function word:
        never "can trip", "were rats"); a two-word item or creature name is closed when both words
        have 3 letters or more."""
        for key, cands in list(self._keys.items()):
            if len(key) > 3:
                continue
            kept = [c for c in cands if c.type in _COMPOUND_TYPES and c.form not in NOTE_FORMS]
            if not kept:
                continue
            forms: list[tuple[str, ...]] = []
            kept_closed: list[_Candidate] = []
            for k, word in enumerate(key):
                cut = self._cut(word)
                if cut:
                    forms += [(*key[:k], *cut, *key[k + 1:]), (*key[:k], "-".join(cut), *key[k + 1:])]
            if len(key) == 2 and all(len(w) >= 3 and w.isalpha() for w in key):
                forms += [("".join(key),), ("-".join(key),)]
                kept_closed = [c for c in kept if c.form == "name" and c.type in ("equipment", "creature")]
            for form in forms:
                if form in self._keys:
                    continue
                for c in kept if len(form) != 1 or len(key) == 1 else kept_closed:
                    self._add(form, c.node_id, variant=4, form="compound")

    def _cut(self, word: str) -> tuple[str, str] | None:
        """The one place a closed compound splits into two prose words ("shortbow" -> short, bow)."""
        if len(word) < 6 or not word.isalpha():
            return None
        for least in (4, 3):
            splits = [(word[:k], word[k:]) for k in range(least, len(word) - least + 1)
                      if word[:k] in self._vocab and word[k:] in self._vocab
                      and word[:k] not in _GRAMMAR and word[k:] not in _GRAMMAR]
            if splits:
                return splits[0] if len(splits) == 1 else None
        return None

    def _add_statistics(self, prose: list[Node]) -> None:
        """Rules-prose sections named by a statistic (a quality noun: "Resistance", "Weakness",
        "Hardness") are candidates only with a number after them ("resist 10", "weakness 5"), as are
        the verb an -ance/-ence noun is made from and the plural. Other section titles stay unnamed."""
        for node in prose:
            key = name_key(node.name)
            if len(key) != 1 or not key[0].endswith(_QUALITY_SUFFIXES) or key in self._keys:
                continue
            word = key[0]
            self._by_id[node.node_id] = (node.name, node.type)
            forms = {word} | _plural(word)
            if word.endswith(("ance", "ence")) and _verb_forms(word[:-4]):
                forms.add(word[:-4])
            for f in sorted(forms):
                if (f,) not in self._keys:
                    self._add(f, node.node_id, variant=3, form="valued")

    def _add_section_titles(self, prose: list[Node]) -> None:
        """Rules-prose sections titled by a name of two content words or more ("Treasure by Level", "Multiple
        Exposures", "Falling on a Creature") that no entry is named and no other section is titled: a question
        that writes the title asks for that section. Read in queries only (form "section", ``_usable``): in a
        note such a title is a heading's words, and the one-word ones ("Walls", "Wind") are English."""
        titles: dict[tuple[str, ...], list[Node]] = {}
        for node in prose:
            key = name_key(node.name)
            if sum(1 for w in key if w not in _TITLE_SMALL) >= 2 and key not in self._keys:
                titles.setdefault(key, []).append(node)
        for nodes in titles.values():
            if len(nodes) != 1:
                continue  # "Adjusting Treasure" in two chapters: the title alone does not say which
            node = nodes[0]
            self._by_id[node.node_id] = (node.name, node.type)
            self._add(node.name, node.node_id, variant=2, form="section")

    def _add_acronyms(self, nodes: list[Node], prose_words: list[tuple[str, list[str]]]) -> None:
        """Initials of a name of two words or more ("RK", "LoH"; "AoO" of the legacy Attack of
        Opportunity) of what is used at the table (actions, spells, feats, rules, conditions), when
        they are no word of the corpus's prose, no other key, no other such entry's initials, and the
        entry is one the corpus's other entries name often (``_ACRONYM_MIN_CITED``: Recall Knowledge
        and Reactive Strike are named in about a hundred, Lay on Hands in 8; a feat named nowhere else
        is no table's shorthand, and its initials collide with a note's "HQ" or "VR"). Matched only
        where written with a capital after the first letter (``_longest``)."""
        by_initials: dict[str, set[str]] = {}
        names = [(n.name, n.node_id) for n in nodes if n.type in _ACRONYM_TYPES] + [(n, t) for n, t in LEGACY_NAMES.items() if n in HAND_LEGACY_NAMES]
        for name, nid in names:
            key = name_key(name)
            if nid not in self._by_id or len(key) < 2 or "(" in name or not all(w[:1].isalpha() for w in key):
                continue  # (an index of some entries only, as the creature resolver's, lacks legacy targets)
            by_initials.setdefault("".join(w[0] for w in key), set()).add(nid)
        wanted: dict[str, tuple[str, ...]] = {}  # entry -> its current name's key
        for initials, ids in by_initials.items():
            nid = next(iter(ids))
            if len(ids) == 1 and initials not in self._vocab and (initials,) not in self._keys:
                wanted[nid] = name_key(self._by_id[nid][0])
        by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for nid, key in wanted.items():
            by_first.setdefault(key[0], []).append((key, nid))
        cited: dict[str, int] = dict.fromkeys(wanted, 0)
        for owner, words in prose_words:
            found = {nid for i, w in enumerate(words) if w in by_first
                     for key, nid in by_first[w] if tuple(words[i:i + len(key)]) == key and nid != owner}
            for nid in found:
                cited[nid] += 1
        for initials, ids in by_initials.items():
            nid = next(iter(ids))
            if nid in wanted and cited[nid] >= _ACRONYM_MIN_CITED:
                self._add(initials, nid, variant=5, form="acronym")

    def _add_abilities(self, nodes: list[Node]) -> None:
        """A creature's ability named for the creature ("zombie rot", "goblin pox", "giant viper venom")
        names that creature: GMs write the ability for the monster that has it. Only an ability of two
        words or more that shares a word with the name of every creature that has it (so "Sneak Attack",
        held by creatures of every name, stays out), and that is no entry's name already; when several
        creatures have it, the first by the index's order answers and the hover lists the others."""
        holders: dict[tuple[str, ...], list[str]] = {}
        for node in nodes:
            if node.type != "creature" or not node.text:
                continue
            own = set(name_key(node.name))
            for m in _ABILITY.finditer(node.text):
                key = name_key(m.group(1))
                if len(key) >= 2 and own & set(key) and key not in self._keys:
                    holders.setdefault(key, []).append(node.node_id)
                elif len(key) >= 2 and key not in self._keys:
                    holders.setdefault(key, []).append("")  # held by a creature not so named
        for key, ids in holders.items():
            if all(ids):
                for nid in dict.fromkeys(ids):
                    self._add(key, nid, variant=4, form="ability")

    def with_aliases(self, aliases: dict[str, str]) -> tuple[NameIndex, list[str]]:
        """This index plus a workspace's own shorthand (``hover.aliases``: "strat" -> Devise a Stratagem),
        which wins over any other entry its words name; and the aliases whose target names no entry
        (an entry's id or name, as ``lookup`` reads it). The index itself is not changed."""
        if not aliases:
            return self, []
        idx = copy.copy(self)
        idx._keys = dict(self._keys)
        idx._prefixes = set(self._prefixes)
        unknown: list[str] = []
        for text, target in aliases.items():
            nid = target if target in self._by_id else self.lookup(target)
            key = name_key(text)
            if nid is None or not key:
                unknown.append(text)
                continue
            idx._keys[key] = list(self._keys.get(key, ()))  # the shared index's list stays as it is
            idx._add(key, nid, variant=-1, form="workspace")
            idx._keys[key].sort(key=lambda c: c.rank)
        return idx, unknown

    # ---- lookup ---------------------------------------------------------------------------
    def _named(self, name: str) -> list[_Candidate]:
        # initials and a statistic's word mean an entry only with their sign in a text (capitals, a value)
        return [c for c in self._keys.get(name_key(name), ()) if c.form not in _SIGNED_FORMS]

    @property
    def has_others(self) -> bool:
        """Whether the index holds name-only entries of books the store does not hold (``build``'s ``others``)."""
        return bool(self._others)

    def lookup(self, name: str) -> str | None:
        """The entry id of an exact (normalised) name, alias or legacy name, or None."""
        cands = self._named(name)
        return cands[0].node_id if cands else None

    def candidates(self, name: str) -> list[str]:
        """Every entry id a name could mean, best first."""
        return [c.node_id for c in self._named(name)]

    def legacy_of(self, name: str) -> str | None:
        """The canonical legacy name if ``name`` is a legacy name, else None."""
        cands = self._named(name)
        return cands[0].legacy_name if cands else None

    def __len__(self) -> int:
        return len(self._keys)

    # ---- scanning -------------------------------------------------------------------------
    def find_mentions(self, text: str, *, note_forms: bool = False, titles: bool = False,
                      spell_cues: bool = False, initials: bool = False) -> list[Mention]:
        """Every entry name in ``text`` the rules of thumb accept: leftmost-longest,
        non-overlapping, case-insensitive. ``note_forms`` also reads verb forms, ancestry
        adjectives (what notes say; search queries keep to names). ``titles``: rules sections' titles too (form
        "section": what a question asks by, not what an entry's text links to). ``initials``: a question's initials
        too ("RK", "AoO": form "acronym", which notes read always)."""
        return [m.mention(text) for m in self.matches(text, note_forms=note_forms, titles=titles, spell_cues=spell_cues,
                                                      initials=initials) if m.heuristic]

    def spelled_out(self, text: str) -> str:
        """``text`` with the initials it writes for a name ("RK", "AoO", "LoH") replaced by that name ("Recall
        Knowledge", "Reactive Strike", "Lay on Hands"): how a question reads to what knows names, not initials."""
        for m in sorted(self.find_mentions(text, titles=True, initials=True), key=lambda m: -m.start):
            if m.form == "acronym":
                text = text[:m.start] + m.name + text[m.end:]
        return text

    def matches(self, text: str, *, note_forms: bool = True, skip: bool = True, spell_cues: bool = False,
                titles: bool = False, initials: bool = False) -> list[Match]:
        """Every leftmost-longest name match in ``text``, accepted by the rules of thumb or not
        (``Match.heuristic``), for a context scorer to decide. ``skip=False`` when the text is
        already masked by ``kg.prose``. ``spell_cues``: the words before a name may ask for a spell
        ("cast Sleep", ``_spell_asked``; the setting ``hover.spell_cues``). Linear in ``text``."""
        return list(self._iter_matches(text, note_forms, skip, spell_cues, titles, initials))

    def _iter_matches(self, text: str, note_forms: bool, skip: bool, spell_cues: bool = False,
                      titles: bool = False, initials: bool = False) -> Iterator[Match]:
        tokens = _tokens(text, skip)
        joins = [
            _JOIN.fullmatch(text, tokens[k].end, tokens[k + 1].start) is not None
            for k in range(len(tokens) - 1)
        ]
        i, n = 0, len(tokens)
        while i < n:
            j_best, cands = self._longest(tokens, joins, i, note_forms, titles, initials)
            if cands is None:
                i += 1
                continue
            match, j_end = self._choose(text, tokens, joins, i, j_best, cands, spell_cues)
            yield match
            # a rejected name is skipped whole: never fall back to a part of it
            i = (j_end if match.heuristic else j_best) + 1

    def _longest(self, tokens: list[_Token], joins: list[bool], i: int, note_forms: bool = True, titles: bool = False,
                 initials: bool = False):
        key: tuple[str, ...] = ()
        best_j, best = i, None
        j = i
        while j < len(tokens):
            if j > i and not joins[j - 1]:
                break
            norm = tokens[j].norm
            if norm.endswith("'s") and key + (norm,) not in self._prefixes:
                # possessive on the last word: "the ogre's club"
                cands = self._usable(self._keys.get(key + (norm[:-2],)), note_forms, titles, initials)
                if cands:
                    best_j, best = j, cands
                break
            key = key + (norm,)
            if key not in self._prefixes:
                break
            cands = self._usable(self._keys.get(key), note_forms, titles, initials)
            if cands and any(c.form == "valued" for c in cands) and not _number_follows(tokens, joins, j):
                cands = [c for c in cands if c.form != "valued"] or None
            if cands and j == i and not tokens[j].caps and any(c.form == "acronym" for c in cands):
                # initials only as initials: "RK", "LoH", never "dad" or "von"
                cands = [c for c in cands if c.form != "acronym"] or None
            if cands:
                best_j, best = j, cands
            j += 1
        return best_j, best

    @staticmethod
    def _usable(cands: list[_Candidate] | None, note_forms: bool, titles: bool = False,
                initials: bool = False) -> list[_Candidate] | None:
        if cands and not titles:  # section titles only where a question is read (``titles``)
            cands = [c for c in cands if c.form != "section"] or None
        if cands and note_forms:  # a note: the journal's renames are read in queries only
            return [c for c in cands if c.form not in QUERY_FORMS] or None
        if not cands or note_forms:
            return cands
        kept = [c for c in cands if c.form not in NOTE_FORMS or (initials and c.form == "acronym")]
        return kept or None

    def _choose(self, text, tokens, joins, i, j, cands, spell_cues: bool = False) -> tuple[Match, int]:
        start, end = tokens[i].start, tokens[j].end
        nxt = tokens[j + 1] if j + 1 < len(tokens) and joins[j] else None
        emphasis = _emphasised(text, start, end)
        # which kind of entry the context asks for
        want = None
        if nxt is not None and nxt.norm in CONTEXT_TYPES and text[end:nxt.start].strip() == "":
            want = CONTEXT_TYPES[nxt.norm]
        elif emphasis == "*":
            want = _ITALIC_TYPE
        asked = spell_cues and want is None and any(c.type == "spell" for c in cands) \
            and _spell_asked(text, tokens, joins, i)
        if asked:
            want = "spell"
        # a value after the name: "frightened 2", "deadly d10", "reach 10 ft", "versatile P"
        value, j_end = None, j
        if nxt is not None and text[end:nxt.start].strip() == "":
            cond = next((c for c in cands if c.type == "condition"), None)
            trait = next((c for c in cands if c.type == "trait"
                          and c.node_id.rsplit(":", 1)[1] in self._valued_traits), None)
            if cond and _NUMBER_RE.match(nxt.norm):
                want, value, j_end = "condition", int(nxt.norm), j + 1
            elif trait and (_DIE_RE.match(nxt.norm) or _NUMBER_RE.match(nxt.norm)):
                want, j_end = "trait", j + 1
                die = _DIE_RE.match(nxt.norm)
                value = int(die.group(1)) if die and nxt.norm.startswith("d") else int(nxt.norm)
                after = tokens[j + 2] if j + 2 < len(tokens) and joins[j + 1] else None
                if after is not None and after.norm in ("ft", "feet", "foot") and \
                        text[tokens[j + 1].end:after.start].strip() == "":
                    j_end = j + 2
            elif trait and len(nxt.norm) == 1 and text[nxt.start].isupper() and nxt.norm in "bps":
                want, j_end = "trait", j + 1
            elif _NUMBER_RE.match(nxt.norm) and any(c.form == "valued" for c in cands):
                # a statistic's value: "resist 10", "Hardness 5"
                cands = sorted(cands, key=lambda c: c.form != "valued")
                value, j_end = int(nxt.norm), j + 1
        skill = next((c for c in cands if c.type == "skill"), None)
        if skill is not None and want is None and nxt is not None and nxt.norm in _SKILL_CONTEXT \
                and text[end:nxt.start].strip() == "":
            want = "skill"
        elif skill is not None and want is None and i > 0 and joins[i - 1] and _NUMBER_RE.match(tokens[i - 1].norm) \
                and text[tokens[i - 1].end:start].strip() == "":
            # a number before it is a roll or a DC: "rolled 38 perception", "DC 16 diplomacy"
            want = "skill"
        chosen = next((c for c in cands if c.type == want), None) if want else None
        chosen = chosen or cands[0]
        if chosen.type == "trait" and want is None:
            # a trait is named as one ("the climbing trait"); its word alone is the other entry it
            # also names, an action's form most often ("climbing", "tracking": Climb, Track)
            chosen = next((c for c in cands if c.type != "trait"), chosen)
        if chosen.type == "skill" and want != "skill":
            # a skill's name that is also an action's -ing form ("Crafting an item", "crafting items")
            # is the activity unless the skill's own words follow or "trained in" precedes it
            prev = tokens[i - 1].norm if i > 0 else ""
            verb = next((c for c in cands if c.type == "action" and c.form == "inflected"), None)
            if verb is not None and prev != "in":
                chosen = verb
        stop = tokens[j_end].end
        if chosen.name.endswith(")") and stop < len(text) and text[stop] == ")" and j_end == j:
            stop += 1
        veto = chosen.node_id in self._class_traits and want != "trait"
        # the books always capitalise a skill: in lowercase the word is its English sense ("lore and
        # RP", "the survival systems", "an encouraging performance") unless a skill word follows or a
        # roll or DC precedes it. Left to the scorer, lowercase skills on the tuning notes were rules
        # 8 times in 14 (docs/hover.md): too few to show
        veto = veto or (chosen.type == "skill" and want != "skill" and not tokens[i].upper)
        # another book's name of several words is written as a name: in lowercase it is most often the English
        # phrase ("magical knowledge", "cross the threshold", "righteous fury"), which the held books' names are
        # not held to (their phrases are the rules the note is about)
        veto = veto or (chosen.node_id in self._others and j > i and not all(
            t.upper for t in tokens[i:j + 1] if t.norm not in _TITLE_SMALL))
        veto = veto and chosen.form != "workspace"
        ok = not veto and self._accept(text, tokens, joins, i, j, chosen, value, emphasis, want)
        return Match(start, stop, cands, chosen, value, ok, end, veto, asked and chosen.type == "spell"), j_end

    def _accept(self, text, tokens, joins, i, j, chosen: _Candidate, value, emphasis, want) -> bool:
        """The rules of thumb: whether a match reads as a rule reference without a learned scorer."""
        start, end = tokens[i].start, tokens[j].end
        first = tokens[i]
        if chosen.form == "workspace":
            return True  # the workspace's own alias: the GM said what it means
        # plain English guard for single common words
        common = _is_common(first.norm)
        if j == i and value is None and common and not emphasis and want is None:
            # a capital inside a sentence marks a rule; at a sentence start only an action's does
            # ("Trip him into the pit" is the action, "Light the torches" is not the rules page)
            if not first.upper or (_at_sentence_start(text, start) and chosen.type != "action"):
                return False
        # forms only notes use (verb forms, adjectives) need a capital or emphasis, or a
        # name of more than one word ("hunted prey")
        if chosen.form in NOTE_FORMS and not emphasis and want is None and j == i and value is None:
            if not first.upper or (chosen.form != "inflected" and _at_sentence_start(text, start)):
                return False
        # backgrounds, archetypes and single-word feats read as plain nouns in lowercase
        if not first.upper and want is None and not emphasis and (
            chosen.type in ("background", "archetype")
            or (j == i and chosen.type in ("feat", "class-feature"))
        ):
            return False
        if j == i and chosen.type == "trait" and value is None and want != "trait" and common:
            return False
        # a capitalised name glued to other capitalised words is part of an unknown proper name
        if first.upper and chosen.type not in ("action", "condition") and not emphasis and want is None:
            if _glued_capital(text, tokens, joins, i, j):
                return False
        del end
        return True


def _spell_asked(text: str, tokens: list[_Token], joins: list[bool], i: int) -> bool:
    """Whether the words just before token ``i`` ask for a spell: a form of "cast" ("cast Sleep",
    "casts guidance") or a spell-holding item and "of" ("scrolls of detect magic", "wand of charm"),
    each joined to it by spaces only (not across a sentence or a line)."""
    def before(k: int) -> _Token | None:
        if k < 1 or not joins[k - 1] or text[tokens[k - 1].end:tokens[k].start] != " ":
            return None
        return tokens[k - 1]

    prev = before(i)
    if prev is None:
        return False
    if prev.norm in _SPELL_VERBS:
        return True
    holder = before(i - 1) if prev.norm == "of" else None
    return holder is not None and holder.norm in _SPELL_HOLDERS


def _number_follows(tokens: list[_Token], joins: list[bool], j: int) -> bool:
    """Whether a number follows token ``j``, next or after one word ("resist 10", "resistance fire 5")."""
    for k in (j + 1, j + 2):
        if k >= len(tokens) or not joins[k - 1]:
            return False
        if _NUMBER_RE.match(tokens[k].norm):
            return True
    return False


def _is_common(word: str) -> bool:
    """Whether ``word`` or its singular ("ropes", "torches", "bodies") is a plain-English word."""
    word = word.removesuffix("'s")
    if word in COMMON_WORDS:
        return True
    if word.endswith("ies") and word[:-3] + "y" in COMMON_WORDS:
        return True
    return (word.endswith("es") and word[:-2] in COMMON_WORDS) or (word.endswith("s") and word[:-1] in COMMON_WORDS)


def _tokens(text: str, skip: bool = True) -> list[_Token]:
    skips = [(m.start(), m.end()) for m in _SKIP.finditer(text)] if skip else []
    out: list[_Token] = []
    s = 0
    for m in _TOKEN.finditer(text):
        while s < len(skips) and skips[s][1] <= m.start():
            s += 1
        if s < len(skips) and skips[s][0] < m.end():
            continue
        tok = m.group()
        upper = tok.lstrip("+")[:1].isupper()
        out.append(_Token(m.start(), m.end(), normalize_token(tok), upper, upper and tok[1:] != tok[1:].lower()))
    return out


def _emphasised(text: str, start: int, end: int) -> str | None:
    """'*' or '_' when the span is wrapped in single emphasis markers, '**' for bold,
    '[[' for a wiki link, else None."""
    before, after = text[max(0, start - 2):start], text[end:end + 2]
    if before.endswith("[[") or before.endswith("["):
        return "["
    if before == "**" and after == "**":
        return "**"
    if before[-1:] in ("*", "_") and after[:1] == before[-1:]:
        return "*"
    return None


def _at_sentence_start(text: str, start: int) -> bool:
    """Whether only spaces stand between ``start`` and a line start, sentence punctuation, a
    markup character or a list marker. Reads back over the spaces and a few characters only, so
    calling it for every name keeps a scan linear (it once re-read the whole line: quadratic)."""
    k = start
    while k > 0 and text[k - 1] in " \t":
        k -= 1
    if k == 0 or text[k - 1] in "\n\r" or text[k - 1] in _SENTENCE_PUNCT:
        return True
    return _LIST_MARKER.search(text, max(0, k - 12), k) is not None or (
        k <= 12 and re.fullmatch(r"[ \t]*(?:[-+*]|\d+[.)])", text[:k]) is not None
    )


def _glued_capital(text: str, tokens: list[_Token], joins: list[bool], i: int, j: int) -> bool:
    nxt = tokens[j + 1] if j + 1 < len(tokens) else None
    if nxt is not None and nxt.upper and text[tokens[j].end:nxt.start] == " " and nxt.norm not in CONTEXT_TYPES:
        return True
    prev = tokens[i - 1] if i > 0 else None
    if prev is not None and prev.upper and text[prev.end:tokens[i].start] == " " \
            and not prev.norm.endswith("'s") and prev.norm not in _STOP_BEFORE \
            and not _at_sentence_start(text, prev.start):
        return True
    # "Hands of the Everlight", "Order of the Nail": a capitalised word, lowercase connectors, the name
    k = i - 1
    while k >= 0 and i - k <= 3 and not tokens[k].upper and tokens[k].norm in _CONNECTORS \
            and text[tokens[k].end:tokens[k + 1].start] == " ":
        k -= 1
    if k < i - 1 and k >= 0 and tokens[k].upper and text[tokens[k].end:tokens[k + 1].start] == " " \
            and not _at_sentence_start(text, tokens[k].start):
        return True
    return False
