"""Knowledge sources an answer can draw on, behind one interface.

- ``SearchSource``: the hybrid index, filtered by origin: the core books (``corpus:``) or the
  user's notes / homebrew (``notes:``), same store. Each result carries a calibrated relevance
  (``RelevanceJudge``) so "nothing relevant" is a verdict, not an empty guess.
- ``OtherSystemsSource``: a glossary of other game systems' and other books' terms. It never
  answers; it recognises questions whose subject the indexed books do not cover ("bonus action",
  "base attack bonus", "kingdom turn") and says which system the term comes from.
Later sources (web rules sites, other indexes) implement ``KnowledgeSource`` and are routed the same way.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import re
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Literal, Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field

from gmprep.common.text import full_stem
from gmprep.core.agents.otherbooks import names_asked, names_pathfinder_2e
from gmprep.core.agents.relevance import RelevanceJudge
from gmprep.kg.legacy import LEGACY_NAMES
from gmprep.kg.models import Hit, SearchFilters

if TYPE_CHECKING:
    from gmprep.kg.embedder import Embedder
    from gmprep.kg.names import NameIndex
    from gmprep.kg.store import Store

log = logging.getLogger(__name__)

Verdict = Literal["found", "nothing_relevant", "not_in_books"]


class Searcher(Protocol):
    """What the answer engine needs from ``gmprep.kg.search.Searcher``."""

    store: Store

    @property
    def embedder(self) -> Embedder | None: ...

    @property
    def names(self) -> NameIndex: ...

    def search(self, query: str, k: int = 10, filters: SearchFilters | None = None) -> list[Hit]: ...

    def search_fused(self, queries: Sequence[str], k: int = 10, filters: SearchFilters | None = None) -> list[Hit]: ...


class SourceResult(BaseModel):
    """What one source returned for one query."""

    source: str
    query: str
    verdict: Verdict
    hits: list[Hit] = Field(default_factory=list)
    relevance: float = 0.0  # calibrated: >= the judge's threshold means "on topic"
    note: str = ""
    # not_in_books because of a Pathfinder 2e book gmprep does not hold: its term (the answerability judge
    # turns this into not_in_corpus, "add your book's PDF")
    other_book: str = ""
    # every such term found (the first is ``other_book``): none may be in the sentence that asks a held rule
    other_books: list[str] = Field(default_factory=list)
    # not_in_books only for terms derived from other systems' open sources (``load_derived_terms``): the answer step
    # keeps the books' own decline (not_in_corpus, not_in_books) and declines with this note only what they would answer
    derived: bool = False
    # another game's term (not a Pathfinder 2e book's) that a question asks by name: a sentence ending in "?" (or one
    # saying it is the question) names it, and the game whose rules use it. The rule asked is that game's, whose text
    # gmprep does not hold: with ``answerability.other_game_not_in_corpus`` the decline is not_in_corpus
    # (``AnswerabilityJudge.other_game``); a scene described without a question keeps not_in_books
    game_term: str = ""
    game: str = ""
    # ``game_term`` is a pre-Remaster Pathfinder 2e name the Remaster books dropped (``load_legacy_terms``,
    # ``answerability.guard_legacy``): the decline is not_in_corpus, saying so (``AnswerabilityJudge.other_game``)
    legacy: bool = False


class KnowledgeSource(ABC):
    """A place answers can come from. ``description`` is shown to the routing step."""

    name: str
    description: str

    def available(self) -> bool:
        """Whether the source holds anything at all (an empty notes folder is not worth a route)."""
        return True

    @abstractmethod
    def retrieve(self, query: str, k: int = 6, alternates: Sequence[str] = ()) -> SourceResult:
        """The best passages for ``query``, with a verdict. ``alternates`` are other phrasings of the same
        need (a follow-up's conversation context) that a source may fuse in; ``query`` stays the judge."""


class SearchSource(KnowledgeSource):
    """Hybrid search over one family of origins in the store."""

    def __init__(
        self,
        name: str,
        description: str,
        searcher: Searcher,
        judge: RelevanceJudge,
        origins: list[str],
        books: list[str] | None = None,
    ):
        self.name = name
        self.description = description
        self.searcher = searcher
        self.judge = judge
        self.filters = SearchFilters(origins=origins, books=books or [])
        self._available: bool | None = None

    def available(self) -> bool:
        if self._available is None:
            store = self.searcher.store
            prefix = self.filters.origins[0] if self.filters.origins else None
            self._available = next(iter(store.iter_nodes(("entry",), origin_prefix=prefix)), None) is not None
        return self._available

    def retrieve(self, query: str, k: int = 6, alternates: Sequence[str] = ()) -> SourceResult:
        if alternates:
            hits = self.searcher.search_fused([query, *alternates], k=k, filters=self.filters)
        else:
            hits = self.searcher.search(query, k=k, filters=self.filters)
        relevance = self.judge.relevance(query, hits)
        verdict: Verdict = "found" if hits and relevance >= self.judge.threshold else "nothing_relevant"
        return SourceResult(source=self.name, query=query, verdict=verdict, hits=hits, relevance=relevance)


class OtherSystemTerm(BaseModel):
    """A term from another game system or another book."""

    model_config = ConfigDict(frozen=True)

    term: str
    system: str = ""
    note: str = ""
    case_sensitive: bool = False
    kind: Literal["rule", "name"] = "rule"  # "name": a system, book or class named, not a rule of it
    pf2e: bool = False  # a term of a Pathfinder 2e book gmprep does not hold (not another game's)
    derived: bool = False  # from another system's open source (``load_derived_terms``), not the hand list
    legacy: bool = False  # a pre-Remaster Pathfinder 2e name the Remaster dropped (``load_legacy_terms``); derived too


def load_other_system_terms(derived: bool = False, feats: bool = True, legacy: bool = False) -> list[OtherSystemTerm]:
    """Every glossary term (``core/agents/patterns/other-systems.yaml``), unfiltered; ``derived``: and after them the
    terms derived from other systems' open sources (``load_derived_terms``) that the list does not hold, other games'
    feats among them only with ``feats``; ``legacy``: and the pre-Remaster Pathfinder 2e names the Remaster dropped
    (``load_legacy_terms``) that neither holds."""
    ref = resources.files("gmprep.core.agents") / "patterns" / "other-systems.yaml"
    data = yaml.safe_load(ref.read_text(encoding="utf-8"))
    terms = []
    for block in data["systems"]:
        for t in block["terms"]:
            terms.append(OtherSystemTerm(system=block["system"], pf2e=bool(block.get("pf2e")), **t))
    if derived:
        listed = {t.term.lower() for t in terms}
        terms += [t for t in load_derived_terms() if t.term.lower() not in listed and (feats or not t.case_sensitive)]
    if legacy:
        listed = {t.term.lower() for t in terms}
        terms += [t for t in load_legacy_terms() if t.term.lower() not in listed]
    return terms


def load_legacy_terms() -> list[OtherSystemTerm]:
    """The pre-Remaster Pathfinder 2e names that the books the Remaster replaced (Core Rulebook, Advanced Player's Guide,
    Gamemastery Guide, Bestiary) give their creatures, creature abilities, afflictions, rules and items, and that the
    Remaster books do not use ("mummy rot"; ``core/agents/data/pf2e-legacy-derived.json.gz``, written by
    ``scripts/derive_legacy_pf2e_terms.py``). Matched in any case, but a name made of common English words ("Cult
    Leader") only as written, capitalised (``written``); decided as the other derived terms. Empty when the file is
    absent."""
    ref = resources.files("gmprep.core.agents") / "data" / "pf2e-legacy-derived.json.gz"
    try:
        data = json.loads(gzip.decompress(ref.read_bytes()).decode("utf-8"))
    except (FileNotFoundError, OSError):
        return []
    return [OtherSystemTerm(term=r["term"], system=r["system"], derived=True, legacy=True,
                            case_sensitive=bool(r.get("written"))) for r in data["terms"]]


def load_derived_terms() -> list[OtherSystemTerm]:
    """Other game systems' rules terms derived from their open sources (``core/agents/data/other-systems-derived.json.gz``,
    written by ``scripts/derive_other_systems_terms.py``: D&D 5e SRD, Pathfinder 1e, Starfinder 1e). Empty when the
    file is absent."""
    ref = resources.files("gmprep.core.agents") / "data" / "other-systems-derived.json.gz"
    try:
        data = json.loads(gzip.decompress(ref.read_bytes()).decode("utf-8"))
    except (FileNotFoundError, OSError):
        return []
    # another game's feat (``kind`` "feat": "Crane Riposte") is named as written, capitalised; its words in lower case
    # are as often the asker's own ("punch through", "steady footing")
    return [OtherSystemTerm(term=r["term"], system=r["system"], derived=True, case_sensitive=r.get("kind") == "feat")
            for r in data["terms"]]


def _term_pattern(text: str, loose: bool, plural: bool = False) -> str:
    """The regex source for ``text`` as written, or (``loose``) with its words joined by a hyphen or by spaces alike
    ("5 foot step", "5-foot step", "full round action"). ``plural``: the last word singular or plural too ("bonus
    actions", "spell-like abilities"); measured and not used (docs/answerability.md, "A held rule further down, and
    another game's terms in any spelling": "when he Wild Shapes into an animal" is a verb)."""
    if not loose:
        return re.escape(text)
    words = [w for w in re.split(r"[-\s]+", text.strip()) if w]
    if not words:
        return re.escape(text)
    last = re.escape(words[-1])
    if plural and re.fullmatch(r"[A-Za-z]*[^aeiouAEIOU\W\d]y", words[-1]) and len(words[-1]) > 2:
        last = re.escape(words[-1][:-1]) + "(?:y|ies)"  # ability, abilities
    elif plural and words[-1][-1:].isalpha() and not words[-1].endswith(("s", "S")):
        last += "(?:e?s)?"  # action, actions
    return r"[-\s]+".join([*(re.escape(w) for w in words[:-1]), last])


_AGENT = re.compile(r"^([a-z]{4,}?)(?:er|or)$")


def doer_of_said_verb(name: str, text: str) -> bool:
    """``name`` is one word that names a doer ("summoner": summon + er) and ``text`` says the verb in another form
    ("summon", "summons", "summoned", "summoning"): there the word is the verb's doer ("the creature's summoner"), not a
    class or book of that name."""
    m = _AGENT.match(name.strip().lower())
    if m is None:
        return False
    verb = m.group(1)
    return re.search(rf"\b{verb}(?:s|ed|ing)?\b", text, re.IGNORECASE) is not None


def _key_word(term: str) -> str:
    """The longest of ``term``'s words (split as ``_term_pattern`` splits them), case-folded: every written form the
    term's pattern matches holds it, so a text without it cannot match (``OtherSystemsSource._written_in``)."""
    words = [w for w in re.split(r"[-\s]+", term.strip()) if w]
    return max(words, key=len).casefold() if words else ""


def _term_regex(term: OtherSystemTerm, loose: bool = False, plural: bool = False) -> re.Pattern:
    flags = 0 if term.case_sensitive else re.IGNORECASE
    # "<term> trait" asks about a trait entry of the glossary the books do hold
    return re.compile(r"(?<![\w-])" + _term_pattern(term.term, loose, plural) + r"(?![\w-])(?!\s+traits?\b)", flags)


class OtherSystemsSource(KnowledgeSource):
    """Recognises questions about other systems' rules; its only verdicts are not_in_books / nothing."""

    name = "other-systems"
    description = "terms from other game systems (D&D 5e, Pathfinder 1e) and books gmprep does not hold"

    def __init__(self, store, terms: list[OtherSystemTerm] | None = None, names: Callable[[], NameIndex] | None = None,
                 asked_only: bool = False, loose: bool = False, derived: bool = False, feats: bool = True,
                 antecedent: bool = False, possessive: bool = False, inflected: bool = False, legacy: bool = False):
        """``names``: the searcher's name index (``Searcher.names``), shared rather than built again. ``asked_only``:
        another game's terms decline only when a sentence that asks names one (``answerability.guard_asked``).
        ``loose``: a term's words match joined by a hyphen or by spaces alike (``answerability.guard_loose_forms``).
        ``derived``: with ``terms`` None, other systems' derived vocabularies too (``answerability.guard_derived``),
        their feats only with ``feats`` (``answerability.guard_derived_feats``). ``antecedent``: a sentence that asks
        and refers back ("this ability", "it") asks what the sentence before it names (``answerability.guard_antecedent``,
        ``otherbooks.names_asked``), and with ``possessive`` by "her" / "his" / "their" before a noun too
        (``answerability.guard_possessive``). ``inflected``: a derived term the books use in another inflection is
        theirs too (``answerability.guard_derived_inflections``). ``legacy``: with ``terms`` None, the pre-Remaster
        Pathfinder 2e names the Remaster dropped too (``answerability.guard_legacy``, ``load_legacy_terms``)."""
        self.store = store
        self.possessive = possessive
        self.inflected = inflected
        self.asked_only = asked_only
        self.loose = loose
        self.antecedent = antecedent
        self._names_of = names
        self._all = terms if terms is not None else load_other_system_terms(derived, feats, legacy)
        self._terms: list[tuple[OtherSystemTerm, re.Pattern]] | None = None
        self._by_word: dict[str, list[tuple[OtherSystemTerm, re.Pattern]]] = {}  # ``_written_in``'s index
        self._classes: list[tuple[str, re.Pattern]] | None = None
        self._names: NameIndex | None = None  # built when first needed, when no searcher's index was given
        self._lock = threading.Lock()

    def terms(self) -> list[OtherSystemTerm]:
        """The active terms: those the indexed books (and notes) never use outside the trait glossary, and whose
        whole written form is not the name of a held entry (``names_held_entry``)."""
        if self._terms is None:
            active = _active_terms(self.store, tuple(self._all), self.loose, self.inflected)
            names = self._name_index()
            kept = [(t, rx) for t, rx in active if t.pf2e or not self.names_held_entry(t.term, names)]
            by_word: dict[str, list[tuple[OtherSystemTerm, re.Pattern]]] = {}
            for pair in kept:
                by_word.setdefault(_key_word(pair[0].term), []).append(pair)
            with self._lock:
                if self._terms is None:
                    self._by_word = by_word
                    self._terms = kept
        return [t for t, _ in self._terms or []]

    def _written_in(self, text: str) -> list[tuple[OtherSystemTerm, re.Pattern]]:
        """The active terms whose longest word ``text`` holds (in any case), in the terms' order: the only ones whose
        pattern can match it. One substring test per distinct word instead of ~4,000 patterns run over the text (a
        forum post's p50 16 -> 2 ms; a pasted page of thousands of words no longer spends seconds here)."""
        self.terms()
        folded = text.casefold()
        hits = {id(pair) for word, pairs in self._by_word.items() if word in folded for pair in pairs}
        return [pair for pair in self._terms or [] if id(pair) in hits]

    def names_held_entry(self, term: str, names: NameIndex | None = None) -> str:
        """The id of the held entry (not a trait) that ``term`` names whole, as the hover matcher reads names: a plural
        ("Tengus"), a pre-Remaster name ("Half-Elves") or another game's heading that is a held rule's name ("Arcane
        Schools"); "" when none. Such a term is these books' own word, whatever another game also calls it."""
        names = names or self._name_index()
        for m in names.find_mentions(term):
            if m.start > 0 or m.end < len(term.rstrip()):
                continue
            node = self.store.get(m.node_id)
            if node is not None and node.type != "trait":
                return m.node_id
        return ""

    def missing_classes(self) -> list[str]:
        """Classes the trait glossary names ("abilities from the magus class") that no entry describes."""
        with self._lock:
            if self._classes is None:
                self._classes = _missing_classes(self.store)
        return [name for name, _ in self._classes]

    def match(self, text: str) -> list[OtherSystemTerm]:
        """Active terms and missing classes used as classes in ``text`` (longest first)."""
        self.terms()
        self.missing_classes()
        pf2e_named = names_pathfinder_2e(text)
        # a pre-Remaster name is asked as one in a question about Pathfinder 2e too ("In PF2e, how does mummy rot work?")
        found = [t for t, rx in self._written_in(text) if not (t.derived and not t.legacy and pf2e_named) and rx.search(text)]
        found += [
            OtherSystemTerm(term=name, system="a class from a Pathfinder 2e book gmprep does not hold",
                            note="the trait glossary names the class, but its rules are not in these books", kind="name",
                           pf2e=True)
            for name, rx in self._classes or [] if rx.search(text)
        ]
        # "the summoner" of "a summoned creature" is whoever summoned it, not the class: the name of a class or book
        # that is an agent noun, beside another form of its verb, is the verb's doer
        found = [t for t in found if not (t.kind == "name" and doer_of_said_verb(t.term, text))]
        unique = {t.term.lower(): t for t in found}
        return sorted(unique.values(), key=lambda t: -len(t.term))

    def retrieve(self, query: str, k: int = 6, alternates: Sequence[str] = ()) -> SourceResult:
        found = self.match(query)  # alternates hold earlier turns: their terms were already judged then
        derived = [f for f in found if f.derived]
        result = self._decide(query, [f for f in found if not f.derived])
        if result.verdict == "not_in_books" or not derived:
            return result
        # only terms derived from other systems' sources: a decline only where a sentence that asks names one, and
        # one the answer step applies after the books' own decision (``SourceResult.derived``)
        t = derived[0]
        written = [m.group(0) for f in derived for rx in [self._regex(f)] if rx for m in rx.finditer(query)]
        if not names_asked(query, [*(f.term for f in derived), *written], self.antecedent, possessive=self.possessive):
            return result
        game = self._game_asked(query, derived)
        legacy = any(f.legacy and f.term == game.get("game_term") for f in derived) if game else t.legacy
        note = (f"“{t.term}” is a pre-Remaster Pathfinder 2e name; the Remaster books gmprep holds do not have it"
                if legacy else f"“{t.term}” is {t.system} terminology")
        return SourceResult(source=self.name, query=query, verdict="not_in_books", relevance=1.0, note=note,
                            derived=True, legacy=legacy and bool(game), **game)

    def _decide(self, query: str, found: list[OtherSystemTerm]) -> SourceResult:
        """The verdict on the hand list's terms found in ``query``."""
        if not found:
            return SourceResult(source=self.name, query=query, verdict="nothing_relevant")
        t = found[0]
        note = f"“{t.term}” is {t.system} terminology" + (f" ({t.note})" if t.note else "")
        named = self.rules_named_besides(query) if all(f.kind == "name" for f in found) else []
        if named:
            # "new to PF2e from 5e and trying to understand Bulk": the other system is the asker's background
            # (only names of systems, books or classes were found, no rule of theirs) and the question names a
            # rule these books hold, so it is answered from them
            return SourceResult(source=self.name, query=query, verdict="nothing_relevant",
                                note=f"{note}; the question also names {named[0]}, which the books hold")
        # the terms as the question writes them ("5 foot step" for the list's "5-foot step"), for ``names_asked``
        written = [*(m.group(0) for f in found for rx in [self._regex(f)] if rx for m in rx.finditer(query))] \
            if self.loose else []
        if self.asked_only and not any(f.pf2e for f in found) \
                and not names_asked(query, [*(f.term for f in found), *written], self.antecedent, possessive=self.possessive):
            # "Is there no special off-hand penalty like PF1, just the standard -5 per follow-up attack?", "how does
            # something like Combat Reflexes let me use a second one?": another game's terms only in the question's
            # setting or in an example it gives, none in a sentence that asks (``otherbooks.names_asked``): what is
            # asked is the books' rule, decided with the passages like any other question
            return SourceResult(source=self.name, query=query, verdict="nothing_relevant",
                                note=f"{note}; no sentence that asks names it")
        other_book = t.term if all(f.pf2e for f in found) else ""
        game = {} if other_book else self._game_asked(query, [f for f in found if not f.pf2e])
        return SourceResult(source=self.name, query=query, verdict="not_in_books", relevance=1.0, note=note,
                            other_book=other_book, other_books=[f.term for f in found] if other_book else [], **game)

    def _game_asked(self, query: str, found: Sequence[OtherSystemTerm]) -> dict[str, str]:
        """``game_term`` and ``game`` of a decline: the first of ``found`` (another game's terms) that a question
        names, as the question writes it, in a sentence ending in "?" or one saying it is the question (or the sentence
        before one that refers back, with ``antecedent``); {} when none does."""
        for f in found:
            rx = self._regex(f)
            forms = [f.term, *(m.group(0) for m in (rx.finditer(query) if rx else ()))]
            if names_asked(query, forms, self.antecedent, questions_only=True, possessive=self.possessive):
                return {"game_term": f.term, "game": f.system}
        return {}

    def _regex(self, term: OtherSystemTerm) -> re.Pattern | None:
        """The compiled pattern of an active term (None for a missing class)."""
        return next((rx for t, rx in self._terms or [] if t == term), None)

    def rules_named_besides(self, text: str) -> list[str]:
        """Rules the books hold that ``text`` names by their capitalised name ("Cat Fall", "Bulk"; not a trait,
        not inside another system's term): the hover matcher's accepted mentions (``kg.names``)."""
        spans = [m.span() for _, rx in [*self._written_in(text), *(self._classes or [])] for m in rx.finditer(text)]
        out = []
        for m in self._name_index().find_mentions(text):
            if any(a < m.end and m.start < b for a, b in spans) or not m.text[:1].isupper():
                continue
            node = self.store.get(m.node_id)
            if node is not None and node.type != "trait":
                out.append(m.text)
        return out

    def _name_index(self) -> NameIndex:
        if self._names_of is not None:
            return self._names_of()
        with self._lock:
            if self._names is None:
                from gmprep.kg.names import NameIndex

                self._names = NameIndex.build(self.store.iter_nodes(("entry",)))
        return self._names


_CLASS_TRAIT = re.compile(r"abilities from the ([A-Za-z][A-Za-z -]{1,30}?) class", re.IGNORECASE)


def _class_usage(name: str) -> re.Pattern:
    """``name`` used as a character class: "my magus", "a 3rd-level magus", "the magus's", "magus class"."""
    n = re.escape(name)
    before = r"(?:\b(?:my|our|your|his|her|their|a|an|the|level[- ]\d+|\d+(?:st|nd|rd|th)[- ]level)\s+)"
    after = r"(?:'s|s\b|\s+(?:class|dedication|archetype|feats?|level|levels)\b)"
    # "the kineticist trait" asks about the trait entry, which the books' glossary does hold
    return re.compile(rf"{before}{n}(?![\w-])(?!\s+traits?\b)|(?<![\w-]){n}{after}", re.IGNORECASE)


def _missing_classes(store) -> list[tuple[str, re.Pattern]]:
    """Classes named by trait entries (Foundry's glossary lists every book's classes) with no entry of their own."""
    names: set[str] = set()
    described: set[str] = set()
    for node in store.iter_nodes(("entry",)):
        if node.type == "trait":
            m = _CLASS_TRAIT.search(node.text or "")
            if m:
                names.add(m.group(1).strip().lower())
        else:
            described.add(node.name.strip().lower())
    return [(n, _class_usage(n)) for n in sorted(names - described)]


_SCAN_WORD = re.compile(r"[^\W_][\w'\u2019]*")


def _derived_used(store, terms: Sequence[OtherSystemTerm], inflected: bool = False) -> set[str]:
    """The derived terms that some non-trait entry uses in any written form (words joined by a hyphen or spaces, any
    case), found by word sequences rather than one alternation of ~2,500 patterns (seconds, not half a minute).
    ``inflected``: a one-word term in any inflection too, by Snowball stem ("Befuddled" where the books write "befuddle
    foes", "Multiclassing" beside "multiclass archetype"; ``answerability.guard_derived_inflections``). Not a phrase:
    GM Core's advice on converting first-edition creatures writes "spell-like abilities", another game's term."""
    if not terms:
        return set()
    by_key: dict[tuple[str, ...], list[str]] = {}
    for t in terms:
        key = tuple(w.lower() for w in re.split(r"[-\s]+", t.term.strip()) if w)
        by_key.setdefault(key, []).append(t.term)
        if inflected and len(key) == 1:
            by_key.setdefault((_STEM_MARK + full_stem(key[0]),), []).append(t.term)
    stems: dict[str, str] | None = {} if inflected else None  # each distinct word stemmed once
    firsts: dict[str, list[tuple[str, ...]]] = {}
    for key in by_key:
        firsts.setdefault(key[0], []).append(key)
    used: set[str] = set()
    for node in store.iter_nodes(("entry",)):
        if node.type == "trait":
            continue
        text = f"{node.name}\n{node.text}"
        # each word with whether a hyphen joins it to the word before (the patterns' (?<![\w-]) boundary)
        spans = list(_SCAN_WORD.finditer(text))
        words = [m.group(0).lower().replace("\u2019", "'") for m in spans]
        joined = [i > 0 and text[spans[i - 1].end():m.start()] == "-" for i, m in enumerate(spans)]
        seps_ok = [i > 0 and re.fullmatch(r"[-\s]+", text[spans[i - 1].end():m.start()]) is not None
                   for i, m in enumerate(spans)]
        for i, w in enumerate(words):
            if stems is not None and not joined[i] and not (i + 1 < len(words) and joined[i + 1]):
                st = stems.get(w)
                if st is None:
                    st = stems[w] = _STEM_MARK + full_stem(w)
                used.update(by_key.get((st,), ()))
            for key in firsts.get(w, ()):
                n = len(key)
                if tuple(words[i:i + n]) != key or joined[i] or (i + n < len(words) and joined[i + n]):
                    continue
                if all(seps_ok[j] for j in range(i + 1, i + n)):
                    used.update(by_key[key])
    return used


_STEM_MARK = "\x00"  # a stem key never equals a word key

_ACTIVE_CACHE: dict[tuple[str, str], list[tuple[OtherSystemTerm, re.Pattern]]] = {}
# The terms the store uses are also kept in its metadata, so a new process (a CLI question, an eval, the server's first
# question) reads them instead of scanning every entry again (~4 s on two cores). The key covers what the scan reads:
# the entries (their count and every source's digest: a rebuilt corpus, an edited note), the terms and both options.
USED_META_KEY = "other_systems_used"
USED_FORMAT = 1  # bump when what counts as "used" changes


def _used_key(store, terms: Sequence[OtherSystemTerm], loose: bool, inflected: bool,
              digests: Sequence[tuple[str, str]]) -> str:
    data = [USED_FORMAT, store.entry_count(), list(digests), loose, inflected, [t.model_dump(mode="json") for t in terms]]
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode("utf-8")).hexdigest()


def _saved_used(store, key: str) -> set[str] | None:
    """The used terms the store's metadata keeps for ``key``, or None (none kept, another key, unreadable)."""
    try:
        saved = json.loads(store.meta.get(USED_META_KEY, "null") if hasattr(store, "meta") else "null")
    except (ValueError, sqlite3.Error):
        return None
    if not isinstance(saved, dict) or saved.get("key") != key or not isinstance(saved.get("used"), list):
        return None
    return {str(t) for t in saved["used"]}


def _save_used(store, key: str, used: set[str]) -> None:
    """Keep ``used`` in the store's metadata; a read-only store (or a failed write) just scans again next time."""
    if getattr(store, "read_only", True) or not hasattr(store, "set_meta"):
        return
    try:
        store.set_meta(**{USED_META_KEY: json.dumps({"key": key, "used": sorted(used)})})
    except sqlite3.Error as exc:
        log.debug("could not keep the other systems' used terms in the store: %s", exc)


def _active_terms(store, terms: tuple[OtherSystemTerm, ...], loose: bool = False,
                  inflected: bool = False) -> list[tuple[OtherSystemTerm, re.Pattern]]:
    """Drop legacy PF2e names and every term the store uses outside the trait glossary (cached per store). ``loose``:
    terms are matched in any written form (``_term_pattern``), in the store as in questions."""
    # the notes' digests change when the user edits a note: the scan must then run again
    digests = sorted(store.source_digests().items()) if hasattr(store, "source_digests") else []
    key = (str(getattr(store, "root", id(store))), f"{store.entry_count()}:{hash(terms)}:{digests}:{loose}:{inflected}")
    if key in _ACTIVE_CACHE:
        return _ACTIVE_CACHE[key]
    legacy = {name.lower() for name in LEGACY_NAMES}
    candidates = [t for t in terms if t.term.lower() not in legacy and not t.derived]
    derived = [t for t in terms if t.term.lower() not in legacy and t.derived]
    own = {t.term: _term_regex(t, loose) for t in candidates}
    saved_key = _used_key(store, terms, loose, inflected, digests)
    used = _saved_used(store, saved_key)
    if used is None:
        used = _scan_used(store, candidates, derived, own, loose, inflected)
        _save_used(store, saved_key, used)
    own.update({t.term: _term_regex(t, True) for t in derived if t.term not in used})
    candidates += derived
    active = [(t, own[t.term]) for t in candidates if t.term not in used]
    log.debug("other-systems glossary: %d of %d terms active", len(active), len(candidates))
    _ACTIVE_CACHE[key] = active
    return active


def _scan_used(store, candidates: list[OtherSystemTerm], derived: list[OtherSystemTerm],
               own: dict[str, re.Pattern], loose: bool, inflected: bool) -> set[str]:
    """The terms some non-trait entry of ``store`` uses: the hand list's by one alternation, the derived ones by word
    sequences (``_derived_used``)."""
    by_lower: dict[str, list[OtherSystemTerm]] = {}
    for t in candidates:
        by_lower.setdefault(t.term.lower(), []).append(t)
    # One pass over the store with one alternation: a term the books use outside the trait glossary
    # (Foundry's trait list names classes from every book) is the books' own word, not a foreign one.
    combined = re.compile(
        r"(?<![\w-])(?:" + "|".join(_term_pattern(k, loose) for k in sorted(by_lower, key=len, reverse=True))
        + r")(?![\w-])",
        re.IGNORECASE,
    )
    used: set[str] = set()
    for node in store.iter_nodes(("entry",)):
        if node.type == "trait":
            continue
        for m in combined.finditer(f"{node.name}\n{node.text}"):
            written = m.group(0)
            # loose: the match is a form of whichever terms' own patterns take it whole
            for t in (by_lower.get(written.lower(), ()) if not loose else
                      [c for c in candidates if own[c.term].fullmatch(written)]):
                if not t.case_sensitive or written == t.term or (loose and own[t.term].fullmatch(written)):
                    used.add(t.term)
    return used | _derived_used(store, derived, inflected)
