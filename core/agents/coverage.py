"""Which rules sections of the core books the store holds, from the books' own outline.

``ingest/data/pf2e/rules-outline.json`` lists the sections of the Remaster core books' rules chapters
(Player Core's Playing the Game, the rules parts of its Spells and Equipment chapters, GM Core's rules
chapters) with their book, chapter, parent sections, printed page where a source gave one, and a one-line
scope. The bundled corpus holds only some of them as prose (the GM-screen pages, conditions, actions);
a user's book added with ``gmprep books add`` adds its sections.

A section is *held* when an entry states it: an entry (any origin: the corpus, a GM-screen rule page, a
user's book section) is named for the section's title, or a rule page or book section's name contains
the title ("Terrain and Cover" holds Cover). Decided from the entry names only, again whenever the
store's entries change (a book added while a server runs).

``OutlineCoverage.about`` says which unheld section a question asks about, if any: the question must
name the section (its title's words, stemmed, all in the question), be about it (MiniLM cosine to the
section's "title: scope" at least ``MIN_COSINE``) at least as much as about the best retrieved passage
(less ``MAX_BEHIND``), and no retrieved passage may be named for part of the title (an "Invested" trait
entry states what "Investing Magic Items" asks) or be a rules page printed inside the section (``printed_in``: its
book, page, chapter and parent sections, and a heading or name with a word of the title; "Step 1: Start Your Turn"
is part of Rounds and Turns, which no entry is named for). The thresholds are measured on the tuning sets
(docs/answerability.md), not guessed.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

import numpy as np
from pydantic import BaseModel, Field

from gmprep.common.text import STOP_WORDS, stem

OUTLINE_FILE = "rules-outline.json"
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
# entry types whose name can hold a section inside a longer title ("Terrain and Cover")
PROSE_TYPES = ("rule", "book-section", "sidebar")
# a sub-heading inside a rules section: a bold line alone
_HEADING = re.compile(r"(?m)^\*\*([^*\n]{3,80})\*\*$")

# measured on the tuning sets (docs/answerability.md, "Coverage from the books' outline")
MIN_COSINE = 0.40  # the question is about the section at least this much
MAX_BEHIND = 0.02  # ... and the best retrieved passage is at most this much closer to the question


class OutlineSection(BaseModel):
    """One rules section of a core book."""

    id: str
    book: str
    chapter: str
    path: list[str] = Field(default_factory=list)  # parent sections inside the chapter, outermost first
    title: str
    page: str | None = None
    scope: str
    source_url: str | None = None

    def printed_in(self, book: str | None, page: str | None, path: Sequence[str], name: str = "") -> bool:
        """An entry ``name`` of ``book``, printed on ``page`` under ``path`` (its chapter and parent sections, outermost
        first), is part of this section: the same book, a printed page in common, the section's chapter and parent
        sections among the entry's, and under them the entry's own headings or its name share a word of the title
        ("Step 1: Start Your Turn", Player Core p. 435 under Chapter 8 / Encounter Mode / Turns, is part of Rounds and
        Turns; "Aquatic Combat", on the same page under Encounter Mode / Special Battles, is not). False when the
        section's page is unknown."""
        if book != self.book or not self.page or not page or not _pages(self.page) & _pages(page):
            return False
        above = (self.chapter, *self.path)
        if not all(p in path for p in above):
            return False
        below = path[max(path.index(p) for p in above) + 1:]
        title = title_stems(self.title)
        return any(title & title_stems(h) for h in (*below, name))

    def where(self) -> str:
        """"Player Core p. 402" or "Player Core, Chapter 8: Playing the Game"."""
        book = self.book.removeprefix("Pathfinder ")
        return f"{book} p. {self.page}" if self.page else f"{book}, {self.chapter}"


class RulesOutline(BaseModel):
    manifest: dict = Field(default_factory=dict)
    sections: list[OutlineSection]


@lru_cache(maxsize=1)
def load_outline() -> RulesOutline:
    """The bundled outline (``ingest/data/pf2e/rules-outline.json``)."""
    text = resources.files("gmprep.ingest").joinpath("data", "pf2e", OUTLINE_FILE).read_text(encoding="utf-8")
    return RulesOutline.model_validate(json.loads(text))


def _pages(page: str) -> set[int]:
    """The printed pages of "435", "411-412" or "411\u2013412" (empty when not numbers)."""
    nums = [int(n) for n in re.findall(r"\d+", page)]
    if len(nums) == 2 and re.fullmatch(r"\s*\d+\s*[-\u2013]\s*\d+\s*", page) and nums[0] <= nums[1] <= nums[0] + 50:
        return set(range(nums[0], nums[1] + 1))
    return set(nums[:1]) if re.fullmatch(r"\s*\d+\s*", page) else set()


def _words(text: str) -> list[str]:
    return [w.strip("'-") for w in _WORD.findall(text.lower().replace("\u2019", "'")) if w.strip("'-")]


def title_stems(title: str) -> frozenset[str]:
    """The stems of a title's content words ("Heightened Spells" -> {heigh, spell})."""
    return frozenset(stem(w) for w in _words(title) if w not in STOP_WORDS and not w.isdigit())


class SectionMatch(BaseModel):
    section: OutlineSection
    cosine: float  # question vs "title: scope"
    passages: float  # question vs the best retrieved passage


class OutlineCoverage:
    """The outline, which sections the store holds, and which unheld one a question is about."""

    def __init__(self, store, embedder, outline: RulesOutline | None = None):
        self.store = store
        self.embedder = embedder
        self.outline = outline or load_outline()
        self._lock = threading.Lock()
        self._held: dict[str, bool] | None = None
        self._held_stamp: tuple = ()
        self._vectors: np.ndarray | None = None
        self._stems = {s.id: title_stems(s.title) for s in self.outline.sections}

    def held(self) -> dict[str, bool]:
        """Section id -> whether an entry of the store states it (from entry names; decided again when the
        store's entries change, e.g. a book added with ``gmprep books add`` while a server is running)."""
        stamp = tuple(self.store.db.execute("SELECT count(*), max(rowid) FROM nodes WHERE kind = 'entry'").fetchone())
        with self._lock:
            if self._held is None or stamp != self._held_stamp:
                self._held, self._held_stamp = self._compute_held(), stamp
        return self._held

    def _compute_held(self) -> dict[str, bool]:
        names: set[str] = set()
        prose: list[str] = []
        prose_stems: set[frozenset[str]] = set()
        marks = ",".join("?" * len(PROSE_TYPES))
        rows = self.store.db.execute(
            f"SELECT name, aliases, type, CASE WHEN type IN ({marks}) THEN text END FROM nodes WHERE kind = 'entry'",
            tuple(PROSE_TYPES))
        for name, aliases, typ, text in rows:
            # a rules section's own sub-headings (a bold line alone: "**Duplicate Effects**" inside Rules
            # Overview) state their rule as much as a section of that name does
            for n in [name, *json.loads(aliases or "[]"), *_HEADING.findall(text or "")]:
                low = " ".join(_words(re.sub(r"\(.*?\)", "", n)))
                names.add(low)
                if typ in PROSE_TYPES:
                    prose.append(f" {low} ")
                    prose_stems.add(title_stems(n))
        out = {}
        for s in self.outline.sections:
            t = " ".join(_words(s.title))
            forms = {t, t.rstrip("s"), f"{t}s"}
            # a rules section whose title holds every word of the outline's title, inflected as it may be
            # ("Step 4: Degree of Success", "Spell DC and Spell Attack Modifier"), or whose title of two
            # words or more is part of it (a section "Critical Specialization" states "Critical
            # Specialization Effects")
            ts = self._stems[s.id]
            out[s.id] = (bool(forms & names) or any(f" {f} " in p for f in forms for p in prose)
                         or (bool(ts) and any(ts <= p or (len(p) >= 2 and p <= ts) for p in prose_stems)))
        return out

    def unheld(self) -> list[OutlineSection]:
        held = self.held()
        return [s for s in self.outline.sections if not held[s.id]]

    def _section_vectors(self) -> np.ndarray:
        with self._lock:
            if self._vectors is None:
                texts = [f"{s.title}: {s.scope}" for s in self.outline.sections]
                self._vectors = np.asarray(self.embedder.encode(texts), dtype=np.float32)
        return self._vectors

    def candidates(self, question: str) -> list[OutlineSection]:
        """Unheld sections whose title the question names (all its content words, stemmed)."""
        q = {stem(w) for w in _words(question)}
        return [s for s in self.unheld() if (ts := self._stems[s.id]) and ts <= q]

    def about(self, question: str, passage_cosine: float, hit_names: Sequence[str] = (),
              q_vec: np.ndarray | None = None, min_cosine: float = MIN_COSINE,
              max_behind: float = MAX_BEHIND, prose_names: Sequence[str] = (),
              prose_places: Sequence[tuple[str | None, str | None, Sequence[str], str]] = ()) -> SectionMatch | None:
        """The unheld section the question asks about, or None. ``passage_cosine`` is the question's best
        MiniLM cosine to the retrieved passages (the relevance judge's ``semantic``), ``hit_names`` the
        names of those passages, ``prose_names`` those of them that are rules prose (a rule page, a book's
        section or sidebar): one whose name shares a content word with the section's title states part of it
        ("Step 1: Start Your Turn" for Rounds and Turns). ``prose_places``: (book, printed page, path, name) of those rules
        prose passages; one printed inside a section (``OutlineSection.printed_in``) is part of it, so the store states
        that section whatever its entries are named."""
        cands = self.candidates(question)
        if not cands or self.embedder is None:
            return None
        if q_vec is None:
            q_vec = np.asarray(self.embedder.encode_query(question), dtype=np.float32)
        vecs = self._section_vectors()
        pos = {s.id: i for i, s in enumerate(self.outline.sections)}
        name_stems = [ns for n in hit_names if (ns := title_stems(n))]
        for cos, s in sorted(((float(vecs[pos[s.id]] @ q_vec), s) for s in cands), key=lambda t: -t[0]):
            if cos < min_cosine or passage_cosine - cos > max_behind:
                break  # sorted: no later candidate passes either
            if any(ns <= self._stems[s.id] for ns in name_stems):
                continue  # a retrieved entry is named for part of it: the passages state it
            if any(title_stems(n) & self._stems[s.id] for n in prose_names):
                continue  # a retrieved rules page is named with a word of its title: it states that part
            if any(s.printed_in(*place) for place in prose_places):
                continue  # a retrieved rules page is printed inside the section: the store holds (part of) its text
            return SectionMatch(section=s, cosine=round(cos, 4), passages=round(passage_cosine, 4))
        return None

