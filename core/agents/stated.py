"""Does any held book *state* the rule a question turns on, or do the books only mention its word?

The books state a rule in two ways a reader can see: an entry is named for it (Flanking, Tower Shield, or an alias),
or an entry's text sets its name in bold as a run-in heading (Vehicle Statistics' "**Crew**", "**range increment**").
Everything else is mention: "implement" in 17 entries (cooking and writing implements, "implement the rule"), none of
them named for it or bolding it. A forum question about another book's rule repeats that book's word for it (the
thaumaturge's "implement" four times, a "siege engine" twice, "Golem Antimagic" and "golem"), and the held books,
whatever they mention, state nothing under that word.

``StatedTerms`` is that vocabulary, read from the store once: the Snowball stems of every word and word pair of the
held entries' names, aliases and bold headings. A trait definition states its trait only when some held entry
carries the trait: the glossary defines every book's traits in a line (Troop, Mythic), as ``BookUse`` sets it
aside for counting uses. ``unstated_terms`` finds, among the words and word pairs the question repeats that other
books name their entries with (the shipped catalogue, ``otherbooks.other_vocabulary``), those no held book states
and no retrieved passage even uses (docs/answerability.md, "What the books state, not what they mention"). The
question must repeat it three times by default: at two, fresh posts' ordinary words ("roof", "seem") were declined.
Twice is enough when a sentence that asks uses it and it is not one of English's commonest words
(``answerability.unstated_asked_repeats``): the scene words sit outside the asking sentences, the asked term inside
(docs/answerability.md, "What the asking sentence is about"). A sentence that asks about "it" brings in the sentence
before it (``asking_with_antecedents``, ``answerability.unstated_antecedent``), and other books' rules sections' words
join the catalogue's (``otherbooks.section_vocabulary``, ``answerability.unstated_sections``; docs/answerability.md,
"Other books' rules sections, and what "it" refers to").
No word list: the question's repeats, the store's names and headings and the catalogue decide.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gmprep.core.agents.otherbooks import quoted_in, repeated_terms, stem_tokens, zipf
from gmprep.kg.query import asking, sentences

_BOLD = re.compile(r"\*\*([^*\n]{2,60}?)\*\*")
_PAREN = re.compile(r"\s*\(.*?\)")


def _grams(stems: Sequence[str]) -> Iterable[str]:
    for n in (1, 2):
        for i in range(len(stems) - n + 1):
            yield " ".join(stems[i:i + n])


class StatedTerms:
    """The stems (single words and pairs) the held books state a rule under: entry names, aliases, bold headings."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        self._lock = threading.Lock()
        self._stated: frozenset[str] | None = None

    def _build(self) -> frozenset[str]:
        carried: set[str] = set()
        for (traits,) in self.db.execute("SELECT traits FROM nodes WHERE kind = 'entry' AND type != 'trait'"):
            carried.update(t.lower().split(" ")[0] for t in json.loads(traits or "[]") if t)
        out: set[str] = set()
        rows = self.db.execute("SELECT name, aliases, text, type FROM nodes WHERE kind = 'entry'")
        for name, aliases, text, typ in rows:
            if typ == "trait" and name.lower().split(" ")[0] not in carried:
                continue  # the glossary's line for another book's trait (Troop): no held rule carries it
            for shown in [name, *json.loads(aliases or "[]"), *_BOLD.findall(text or "")]:
                out.update(_grams(stem_tokens(_PAREN.sub("", shown))))
        return frozenset(out)

    def states(self, key: str) -> bool:
        """Some held entry is named for, aliased or bolds a phrase holding ``key`` (Snowball stems, space-joined)."""
        with self._lock:
            if self._stated is None:
                self._stated = self._build()
            return key in self._stated


@dataclass(frozen=True)
class UnstatedTerm:
    """A word (or two) the question turns on that the held books never state a rule under."""

    shown: str  # as the question first writes it
    repeats: int  # times the question uses it (same stems)


def unstated_terms(question: str, stated: StatedTerms, vocabulary: frozenset[str], min_repeats: int,
                   passages: Sequence[str], asked_repeats: int = 0, antecedent: bool = False,
                   hyphenated: bool = False, clause: bool = False, acronyms: bool = False,
                   common_max_zipf: float = 0.0) -> list[UnstatedTerm]:
    """The terms ``question`` repeats (at least ``min_repeats`` times) that other books name entries with
    (``vocabulary``: stems of their names' words and word pairs), that no held entry states (``stated``) and that none
    of ``passages`` (the retrieved passages' names and texts) uses; most repeated first. With ``asked_repeats`` (> 0),
    a term used that often is enough when a sentence that asks uses it too and it is not one of English's commonest
    words (``ASKED_MAX_ZIPF``): the asking sentence is about it ("If I crew a Crew 1 siege engine, ..., am I still
    crewing it?" after "Siege engine question: ..."). With ``antecedent``, a sentence that asks about "it" brings the
    sentence before it in (``asking_with_antecedents``); with ``hyphenated``, a hyphenated word ("dual-class") is a
    term too. With ``clause``, of a sentence that asks after a colon only the part after it asks ("The party members
    outside the cube want to help: can you reach in and pull someone out ...?" asks about pulling, not the members;
    ``asking_clause``). With ``acronyms``, a word in capitals that spells a pair's initials counts as a use of the pair
    ("Resolve Point ... 2 RP"; ``otherbooks.repeated_terms``). With ``common_max_zipf`` (> 0), a term repeated
    ``min_repeats`` times whose every word is that common in English (wordfreq zipf; "right" is 5.96) is the asker's
    too, as for ``asked_repeats`` ("don't count to the budget right? ... If I'm reading this right, ..."): no
    count of repeats makes "right" another book's rule."""
    out = []
    asks: list[str] | None = None
    for key, (shown, repeats) in repeated_terms(question, hyphenated, acronyms).items():
        if key not in vocabulary or stated.states(key):
            continue
        if repeats >= min_repeats and common_max_zipf > 0:
            freq = [zipf(w.lower()) for w in shown.split()]
            if freq and all(z is not None and z >= common_max_zipf for z in freq):
                continue
        if repeats < min_repeats:
            if not asked_repeats or repeats < asked_repeats:
                continue
            if asks is None:
                sents = sentences(question)
                own = set(asking(sents))
                asks = [asking_clause(sents[i]) if clause and i in own else sents[i]
                        for i in (asking_with_antecedents(sents) if antecedent else sorted(own))]
            common = [z for z in (zipf(w.lower()) for w in shown.split()) if z is not None]
            if not quoted_in(shown, asks) or not common or max(common) >= ASKED_MAX_ZIPF:
                continue
        if not quoted_in(shown, passages):
            out.append(UnstatedTerm(shown, repeats))
    return sorted(out, key=lambda t: -t.repeats)


# English's commonest words (zipf >= 5.5: "right", "another", "since", "little") are the asker's, whatever entry name
# of another book holds them; the asked terms of the tuning gaps are 1.1-5.2 ("Megavolt" ... "member")
ASKED_MAX_ZIPF = 5.5


# A sentence that asks after a colon says its scene first and asks after it ("The party members outside the cube want
# to help: can you reach in ...?"); a colon that opens a list or a label ("Siege engine question: If I crew a Crew 1
# siege engine, ...?") leaves the asked term after it too.
_COLON = re.compile(r":\s")


def asking_clause(sentence: str) -> str:
    """The part of an asking ``sentence`` after its last colon (followed by a space) when that part asks (ends in "?");
    else the whole sentence."""
    parts = _COLON.split(sentence)
    tail = parts[-1].strip()
    return tail if len(parts) > 1 and tail.endswith("?") else sentence


# A sentence that asks about "it" names its subject in the sentence before ("Golem Antimagic says a golem is immune to
# spells ... But what about spells that don't target it directly?"). Only the neuter singular: "they", "he" and "she"
# are mostly the asker's people ("My players love jumping from ship to ship. How far can they move ...?").
_ANAPHORA = re.compile(r"\b(?:it|its|itself)\b", re.IGNORECASE)


def asking_with_antecedents(sents: list[str]) -> list[int]:
    """The sentences that ask (``kg.query.asking``), and the sentence before each one that refers back by "it"."""
    asks = asking(sents)
    back = {i - 1 for i in asks if i > 0 and _ANAPHORA.search(sents[i].replace("\u2019", "'"))}
    return sorted(set(asks) | back)
