"""Is the question about another book's term? A word that neither the books gmprep holds nor English use.

Forum questions about rules gmprep does not hold name them with their own words: "Megavolt", "eidolon",
"Kingmaker", "liturgist", "PFS". Such a word is used by no entry of the store (trait definitions aside:
the trait glossary defines every book's traits, "eidolon" included, in one line each) and is rare in
English (``wordfreq``'s zipf frequency), so it is a game term of a book the store lacks. Common English
words the books happen not to use ("warehouse", "toddler") are not, and neither is a word an entry is
named for. A word English never records (zipf 0) is
left alone: it is more often a name from the asker's campaign or a typo. No word list: the store and
English frequencies decide, with two thresholds measured on the tuning sets (docs/answerability.md).

``wordfreq`` is optional: without it nothing is flagged (the judge behaves as before).
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gmprep.common.text import QUESTION_WORDS, STOP_WORDS, snowball_stem
from gmprep.kg.models import Node
from gmprep.kg.names import OTHER_ID_PREFIX
from gmprep.kg.query import asking, sentences

# Off by default since its one held-out run (docs/answerability.md, "Held-out, run once"): on the 147
# answerable held-out questions it declined 4 (words the books use in another form, "clumsiest", or a
# creature's group, "warband", "Crasher") while it found 2 more of the 25 held-out gaps than the glossary path
# alone. `AnswerabilityJudge.assess` reads it at call time; the classes and books of other PF2e books
# (`AnswerabilityJudge.other_book`) do not depend on it.
WORD_RULE = False
MAX_ZIPF = 2.7  # rarer in English than this (zipf: log10 of uses per billion words)
MAX_USES = 0  # entries (trait definitions aside) that use the word at most this often
CAPS_ZIPF = 3.0  # the same for a word written as a name
CAPS_USES = 1
MIN_LEN = 4
_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*")
_STOP = STOP_WORDS | QUESTION_WORDS


def content_words(question: str) -> list[tuple[str, str, bool]]:
    """``(lower-case word, as written, capitalised)`` for the question's words, a possessive's "'s"
    dropped; capitalised: written with a capital, not as a sentence's first word (as a name)."""
    out = []
    for m in _WORD.finditer(question):
        shown = re.sub(r"['\u2019]s?$", "", m.group(0))
        low = shown.lower()
        before = question[: m.start()].rstrip()
        caps = shown[:1].isupper() and bool(before) and before[-1] not in ".!?:\"("
        if low and low not in _STOP:
            out.append((low, shown, caps))
    return out


@lru_cache(maxsize=4096)
def zipf(word: str) -> float | None:
    """English frequency of ``word`` (zipf scale), or None when ``wordfreq`` is not installed."""
    try:
        from wordfreq import zipf_frequency
    except ImportError:  # pragma: no cover - optional dependency
        return None
    return float(zipf_frequency(word, "en"))


class BookUse:
    """How many entries of the store use a word (its stem), and which words entries are named for; trait
    definitions aside both times."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        self._lock = threading.Lock()
        self._uses: dict[str, int] = {}
        self._names: set[str] | None = None
        self._glossary: set[str] | None = None

    def is_name(self, word: str) -> bool:
        """Some entry other than a trait definition is named (or aliased) ``word``."""
        with self._lock:
            if self._names is None:
                names: set[str] = set()
                rows = self.db.execute("SELECT name, aliases FROM nodes WHERE kind = 'entry' AND type != 'trait'")
                for name, aliases in rows:
                    for n in [name, *json.loads(aliases or "[]")]:
                        names.add(re.sub(r"\s*\(.*?\)", "", n).strip().lower())
                self._names = names
        return any(w in self._names for w in (word, word.rstrip("s"), f"{word}s"))

    def glossary_books(self) -> set[str]:
        """The books of the trait definitions (the trait glossary): their chapters are no entry's use of a word."""
        with self._lock:
            if self._glossary is None:
                rows = self.db.execute("SELECT DISTINCT book FROM nodes WHERE kind = 'entry' AND type = 'trait'")
                self._glossary = {b for (b,) in rows if b}
        return self._glossary

    def uses(self, word: str, cap: int = 50) -> int:
        with self._lock:
            if word in self._uses:
                return self._uses[word]
        # FTS matches the porter stem, so "misfires" finds "misfire" and "barded" finds "barding": an
        # inflection of a word the books use is the books' word
        n = 0
        try:
            glossary = self.glossary_books()
            rows = self.db.execute(
                "SELECT n.type, n.traits, n.book FROM fts f JOIN nodes n ON n.rowid = f.rowid WHERE fts MATCH ? "
                "LIMIT 2000", ('"' + word.replace('"', " ") + '"',))
            forms = {word, word.rstrip("s")}
            for typ, traits, book in rows:
                # an entry tagged with the word does not use it: shared feats carry every class that gets
                # them as traits (magus, thaumaturge) and repeat the tag as a heading in their text. Nor does the
                # trait glossary's own chapter, which lists every trait it defines ("anadi")
                if typ != "trait" and book not in glossary \
                        and not forms & {t.lower() for t in json.loads(traits or "[]")}:
                    n += 1
                    if n >= cap:
                        break
        except sqlite3.Error:
            n = cap  # cannot tell: treat as the books' word
        with self._lock:
            self._uses[word] = n
        return n


def foreign_terms(question: str, use: BookUse, max_zipf: float = MAX_ZIPF, max_uses: int = MAX_USES,
                  caps_zipf: float = CAPS_ZIPF, caps_uses: int = CAPS_USES) -> list[str]:
    """The question's words that neither the books nor English use (another book's terms), as written.
    A word written as a name (capitalised mid-sentence: "Envoys' Alliance", "Ikon") may be a little more
    common in English and the books (``caps_zipf``, ``caps_uses``): the asker is naming a rule."""
    out: list[str] = []
    for word, shown, caps in content_words(question):
        if len(word) < MIN_LEN or not word.isalpha() or use.is_name(word) or shown in out:
            continue
        z = zipf(word)
        # zipf 0: English never records it, more often a name in the asker's campaign ("Ezren"), a creature
        # or a typo than a published term; measured: every such word on the tuning sets was one of those
        if z is None or z <= 0.0:
            continue
        zmax, umax = (max(max_zipf, caps_zipf), max(max_uses, caps_uses)) if caps else (max_zipf, max_uses)
        if z < zmax and use.uses(word) <= umax:
            out.append(shown)
    return out


@lru_cache(maxsize=8)
def _held_books(db: sqlite3.Connection) -> tuple[str, ...]:
    rows = db.execute("SELECT DISTINCT book FROM nodes WHERE kind = 'entry' AND type != 'trait' AND book != ''")
    return tuple(sorted(b.removeprefix("Pathfinder ") for (b,) in rows if b))


def held_books(db: sqlite3.Connection) -> list[str]:
    """The books whose entries the store holds ("Player Core", "GM Core", ... and any added book)."""
    return list(_held_books(db))


# ----- other books' entries by name ---------------------------------------------------------------------------
# core/agents/data/other-books.tsv.gz: the names Archives of Nethys lists for every book (ingest/aon_sources.py,
# scripts/transcribe_source_lists.py). A question that names an entry of a book the store does not hold, that no
# held entry is named for and the held books never write, asks about that book.
OTHER_BOOKS = Path(__file__).with_name("data") / "other-books.tsv.gz"
NAME_ZIPF = 2.7  # a name written in lower case counts when English rarely uses it (the word rule's threshold)
MAX_NAME_WORDS = 6
# The books the Remaster replaced (Player Core: the Core Rulebook; Player Core 2: the Advanced Player's Guide; GM Core:
# the Gamemastery Guide; Monster Core: the Bestiaries). A name only they list is mostly a pre-Remaster name of a
# rule the held books keep under another name (Attack of Opportunity, Combat Reflexes): search finds the Remaster
# rule, and kg/legacy.py says the rename; such a question is answered, not declined.
SUPERSEDED = frozenset({"Core Rulebook", "Advanced Player's Guide", "Gamemastery Guide", "Bestiary", "Bestiary 2",
                        "Bestiary 3"})
_SMALL = frozenset({"of", "the", "a", "an", "and", "or", "to", "in", "on", "for", "with", "from", "at", "by"})
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\u2019-]*")


def _norm(text: str) -> str:
    text = re.sub(r"\s*\(.*?\)", "", text).replace("\u2019", "'").lower()
    return " ".join(t.strip("'-") for t in _TOKEN.findall(text))


@dataclass(frozen=True)
class OtherBookTerm:
    """An entry of a book gmprep does not hold, as the question writes it; or (``missing``) an entry of a book it
    holds that the store has no entry for (the bundled corpus lacks its text: Staff Nexus, a Player Core arcane
    thesis); or (``category`` "book") the book itself, named ("Extinction Curse", "Book of the Dead")."""

    shown: str
    name: str
    book: str
    category: str
    missing: bool = False


@lru_cache(maxsize=2)
def _catalogue(path: Path = OTHER_BOOKS) -> dict[str, tuple[tuple[str, str, str], ...]]:
    """Normalised name -> ((name, book, category), ...) over the shipped catalogue; empty when it is missing."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    try:  # written by gmprep.ingest.aon_sources.write_tsv (columns book, line, category, name, path, commit)
        with gzip.open(path, "rt", encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    except OSError:
        return {}
    for r in rows:
        key = _norm(r["name"])
        if key:
            out.setdefault(key, []).append((r["name"], r["book"], r["category"]))
    return {k: tuple(v) for k, v in out.items()}


def _singular(category: str) -> str:
    """"Feats" -> "Feat", "Familiar Abilities" -> "Familiar Ability" (the lists' headings are plural; "Arcane
    Thesis" is not)."""
    if category.endswith("ies"):
        return category[:-3] + "y"
    if category.endswith("sses"):  # "Classes"
        return category[:-2]
    plural = category.endswith("s") and not category.endswith(("ss", "is"))
    return category[:-1] if plural else category


def _titled(words: list[str], sentence_start: bool) -> bool:
    """Written as a name: every word capitalised but small ones (one word: capitalised mid-sentence)."""
    big = [w for w in words if w.lower() not in _SMALL] or words
    if not all(w[:1].isupper() for w in big):
        return False
    return len(big) >= 2 or not sentence_start


def _in_held_name(toks: list[re.Match], i: int, n: int, use: BookUse) -> bool:
    """Tokens ``i .. i+n-1`` overlap a run of two or more words (up to ``MAX_NAME_WORDS``) that a held entry is
    named for."""
    for m in range(2, MAX_NAME_WORDS + 1):
        for j in range(max(0, i - m + 1), min(i + n, len(toks) - m + 1)):
            if use.is_name(_norm(" ".join(t.group(0) for t in toks[j:j + m]))):
                return True
    return False


# A held book's entry that the store has no entry for: the catalogue lists it for Player Core (Staff Nexus, an arcane
# thesis) but the bundled corpus kept only the class feature that introduces the theses. Up to this many held entries
# (trait definitions and tags aside) may write the name. 0: a name they write may be stated inside a longer entry
# (the cleric's Deific Weapon in the class entry), which no count tells from a list of choices (the alchemist's
# "- Toxicologist"); measured, docs/answerability.md.
MISSING_USES = 0


def other_book_terms(question: str, use: BookUse, held: Sequence[str],
                     missing_uses: int = MISSING_USES) -> list[OtherBookTerm]:
    """Entries of books other than ``held`` that the question names (longest first, left to right); and entries
    the held books list that the store lacks (``missing``: no entry is named for them and at most ``missing_uses``
    held entries write them; ``missing_uses`` -1 leaves them out)."""
    cat = _catalogue()
    if not cat:
        return []
    held_books_ = {b.removeprefix("Pathfinder ") for b in held}
    held_set = held_books_ | SUPERSEDED
    toks = list(_TOKEN.finditer(question))
    used = [False] * len(toks)
    out: list[OtherBookTerm] = []
    for n in range(min(MAX_NAME_WORDS, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            if any(used[i:i + n]):
                continue
            words = [t.group(0) for t in toks[i:i + n]]
            # "Titan's Breaker's immanence": the name, possessive
            key = re.sub(r"'s?$", "", _norm(" ".join(words)))
            # or its plural, or the plural the book lists ("vessel spell" for Vessel Spells)
            found = cat.get(key) or (cat.get(key[:-1]) if key.endswith("s") else None) or cat.get(f"{key}s")
            if not found:
                continue
            books = [(name, book, category) for name, book, category in found if book not in held_set]
            ours = [(name, book, category) for name, book, category in found if book in held_books_]
            missing = bool(ours) and missing_uses >= 0
            if missing:
                books = ours  # a held book lists it: the store should have it
            elif not books or len(books) < len(found):
                continue  # a superseded book lists it too: mostly the old name of a held rule
            if n == 1 and (len(key) < MIN_LEN or key in _STOP):
                continue
            before = question[: toks[i].start()].rstrip()
            start = not before or before[-1] in ".!?:\"(\n"
            # a name in lower case counts when English rarely uses it, or when it is several words none of them
            # small ("shield augmentation", "air repeater"): the held books never write the phrase (below)
            spelled = n >= 2 and not any(w.lower() in _SMALL or w.lower() in _STOP for w in words)
            if missing and n >= 2 and _in_held_name(toks, i, n, use):
                continue  # "Burn It" inside "Burn It All": the held entry is named
            if not _titled(words, start):
                if missing and spelled:
                    continue  # "a 1st-rank scroll", "a sailing ship": the held books' own phrases, in their words
                if spelled and _in_held_name(toks, i, n, use):
                    continue  # "the Shed Spirit spell": part of a held entry's name, not "Spirit Spell"
                # zipf 0 (English never records it) counts here, unlike for the word rule: the catalogue lists it
                # as a published name ("anadi", an ancestry), not the asker's character or a typo
                z = zipf(key)
                if not spelled and (z is None or z >= NAME_ZIPF or (missing and z <= 0.0)):
                    continue
            if use.is_name(key) or use.uses(key) > (missing_uses if missing else 0):
                continue  # the held books name or write it: it is theirs as well
            # a class is listed as a class and as its multiclass archetype: say the class
            name, book, category = min(books, key=lambda r: r[2] != "Classes")
            used[i:i + n] = [True] * n
            if any(t.name == name for t in out):
                continue  # named again
            shown = re.sub(r"['\u2019]s?$", "", question[toks[i].start():toks[i + n - 1].end()])
            out.append(OtherBookTerm(shown=shown, name=name,
                                     book=book, category=_singular(category), missing=missing))
    return out


# The question says it is about Pathfinder 2e ("Is there a coup de grace in 2e?", "First time running PF2e ... There
# are no surprise rounds, right?"): another system's term is then the asker's word for what they look for in these
# books, not a question about that system
_PF2E_NAMED = re.compile(r"(?<![\w-])(?:PF2e?|P2e|2e|PF2E|Pathfinder 2e?|Pathfinder (?:2nd|Second) Edition|"
                         r"(?:2nd|second) edition|Remaster(?:ed)?)(?![\w-])", re.IGNORECASE)


def names_pathfinder_2e(text: str) -> bool:
    """Whether ``text`` says it is about Pathfinder 2e ("in PF2e", "converted to 2e", "the Remaster")."""
    return _PF2E_NAMED.search(text) is not None


# ----- other books by title -------------------------------------------------------------------------------------------
# core/agents/data/other-publications.tsv: the publications the saved source pages are about (title, product line,
# and the Adventure Path a volume belongs to) and the adventure groups AoN names (ingest/aon_sources.py). A question
# that names one ("the circus in Extinction Curse", "the undead archetypes from Book of the Dead") may ask about its
# rules; ``AnswerabilityJudge.assess`` decides as for another book's entry (``asked_besides``).
OTHER_PUBLICATIONS = Path(__file__).with_name("data") / "other-publications.tsv"
# core/agents/data/pf1-publications.tsv: the Pathfinder 1st Edition publications (scripts/transcribe_pf1_sources.py,
# less the titles a 2e book also has): "Pathfinder Unchained", "a Reign of Winter campaign" ask about that edition
PF1_PUBLICATIONS = Path(__file__).with_name("data") / "pf1-publications.tsv"
PF1 = "Pathfinder 1st Edition"
# "Pathfinder #151: The Show Must Go On", "Pathfinder Adventure Path #219: ...", "PFS Scenario #7-03: ...": askers
# write the volume's own title
_VOLUME = re.compile(r"^(?:Pathfinder(?: Adventure Path)?|PFS Scenario) #[\d-]+:?\s+")


@lru_cache(maxsize=2)
def _publications(path: Path = OTHER_PUBLICATIONS, pf1: Path = PF1_PUBLICATIONS) -> tuple[tuple[str, str], ...]:
    """(title, group) for every publication and adventure group; empty when the files are missing. A Pathfinder
    1st Edition title or group says so ("Reign of Winter (Pathfinder 1st Edition)"), so that the texts name the
    edition."""
    out: list[tuple[str, str]] = []
    for file, edition in ((path, ""), (pf1, PF1)):
        try:
            with file.open(encoding="utf-8") as f:
                rows = [(r["title"], r["group"]) for r in csv.DictReader(f, delimiter="\t")]
        except OSError:
            continue
        out += [(_edition(t, edition), _edition(g, edition)) for t, g in rows]
    return tuple(out)


def _edition(title: str, edition: str) -> str:
    return f"{title} ({edition})" if title and edition else title


def _unedition(title: str) -> str:
    """The title as written: without the edition ``_publications`` adds."""
    return title.removesuffix(f" ({PF1})")


def _title_forms(title: str) -> set[str]:
    """How a question writes a publication's title: as titled, without the volume number, without "(Hardcover)"."""
    title = _unedition(title)
    short = re.sub(r"\s*\(.*?\)", "", _VOLUME.sub("", title)).strip()
    return {t for t in (title, short) if t}


def publication_terms(question: str, use: BookUse, held: Sequence[str]) -> list[OtherBookTerm]:
    """Books gmprep does not hold that the question names by title, written as a name ("Extinction Curse", "Season
    of Ghosts book 3"). A book is held when the store has its entries; an Adventure Path when it has one of its
    volumes; the superseded core books (Core Rulebook, ...) are the held books' earlier editions."""
    pubs = _publications()
    if not pubs:
        return []
    held_set = {b.removeprefix("Pathfinder ") for b in held}
    held_groups = {g for t, g in pubs if g and t in held_set}
    out: list[OtherBookTerm] = []
    spans: list[tuple[int, int]] = []
    forms = sorted({(f, t, g) for t, g in pubs for f in _title_forms(t)} | {(_unedition(g), g, g) for _, g in pubs if g},
                   key=lambda x: -len(x[0]))
    # a question that says it is about Pathfinder 2e ("running Reign of Winter converted to 2e") plays the other
    # edition's book in this one's rules
    pf2e = names_pathfinder_2e(question)
    for form, title, group in forms:
        if title in held_set or title in SUPERSEDED or (group and group in held_groups):
            continue
        if pf2e and (group or title).endswith(f" ({PF1})"):
            continue
        for m in re.finditer(r"(?<![\w'])" + re.escape(form) + r"(?![\w'])", question):
            if any(a < m.end() and m.start() < b for a, b in spans):
                continue
            words = _TOKEN.findall(m.group(0))
            before = question[: m.start()].rstrip()
            start = not before or before[-1] in ".!?:\"(\n"
            key = _norm(form)
            if not words or not _titled(words, start) or use.is_name(key):
                continue
            if len(words) == 1 and use.uses(key) > 0:
                continue  # one word the held books write is more often a place or a thing than this book
            spans.append((m.start(), m.end()))
            if not any(t.book == (group or title) for t in out):
                out.append(OtherBookTerm(shown=m.group(0), name=form, book=group or title, category="book"))
    return out


def book_of(term: str, held: Sequence[str]) -> OtherBookTerm | None:
    """The book gmprep does not hold that ``term`` names (a title: Kingmaker) or that lists it (a class: kineticist,
    Rage of Elements), for the other-systems guard's Pathfinder 2e terms; None when no such book is known."""
    held_set = {b.removeprefix("Pathfinder ") for b in held}
    key = _norm(term)
    for title, group in _publications():
        if key in {_norm(f) for f in _title_forms(title)} and title not in held_set | SUPERSEDED:
            return OtherBookTerm(shown=term, name=title, book=group or title, category="book")
    found = _catalogue().get(key) or (_catalogue().get(key[:-1]) if key.endswith("s") else None) or ()
    books = [(name, book, category) for name, book, category in found if book not in held_set | SUPERSEDED]
    if books and len(books) == len(found):
        # a class is listed as a class and as its multiclass archetype: say the class
        name, book, category = min(books, key=lambda r: r[2] != "Classes")
        return OtherBookTerm(shown=term, name=name, book=book, category=_singular(category))
    return None


# ----- the term the question turns on -----------------------------------------------------------------------------
# A question about another book's rule repeats that book's word for it ("kingdom" three times, "boons" four, "Envoys"
# three). When the held books use that word in hardly more entries than the question repeats it, and books
# gmprep does not hold name their entries with it, the question turns on a rule of those books: the held books only
# say the word in passing ("kingdom" in Downtime and Wish). Thresholds: ``AnswerabilitySettings`` (common/settings.py).


def _stems(words: Sequence[str]) -> str:
    return " ".join(snowball_stem(w) for w in words)


def other_vocabulary(held: Sequence[str]) -> frozenset[str]:
    """Stemmed words and word pairs of the names that only books other than ``held`` (the store's books, "Pathfinder
    Player Core" or "Player Core") and the superseded ones list."""
    return _other_vocabulary(frozenset({b.removeprefix("Pathfinder ") for b in held} | SUPERSEDED))


@lru_cache(maxsize=4)
def _other_vocabulary(held: frozenset[str]) -> frozenset[str]:
    """Stemmed words and word pairs of the names only books other than ``held`` (and the superseded ones) list."""
    out: set[str] = set()
    for key, rows in _catalogue().items():
        if all(book in held for _, book, _ in rows):
            continue
        ws = [re.sub(r"'s?$", "", w) for w in key.split()]
        out.update(_stems(ws[i:i + n]) for n in (1, 2) for i in range(len(ws) - n + 1))
    return frozenset(out)


# core/agents/data/other-rules-sections.tsv.gz: the rules sections other books head (ingest/aon_sources.py,
# ``read_rules_sections``): the Gamemastery Guide's "Dual-Class PCs", the Core Rulebook's "Alignment Damage". The entry
# catalogue leaves rules sections out (their titles are ordinary words), so they serve only the word rule
# (``stated.unstated_terms``), whose conditions (repeated, asked, stated by no held entry, used by no passage found)
# decide; never the name rule above.
OTHER_SECTIONS = Path(__file__).with_name("data") / "other-rules-sections.tsv.gz"


def section_vocabulary(held: Sequence[str], max_zipf: float = 4.5) -> frozenset[str]:
    """Stemmed words and word pairs of the rules sections that books other than ``held`` head and no held book heads
    (``held``: the store's books, "Pathfinder Player Core" or "Player Core"). The superseded books count as other books
    here: a section the Remaster books did not restate under its title (Alignment Damage, Dual-Class PCs) is a rule
    only a book gmprep does not hold states. Section titles are mostly ordinary words ("Normal Travel", "Card Games"):
    a single word counts only when its English frequency is below ``max_zipf`` (``answerability.unstated_section_zipf``:
    Payout, Dual-Class), a word pair always (Alignment Damage)."""
    return _section_vocabulary(frozenset(b.removeprefix("Pathfinder ") for b in held), max_zipf)


@lru_cache(maxsize=4)
def _section_vocabulary(held: frozenset[str], max_zipf: float, path: Path = OTHER_SECTIONS) -> frozenset[str]:
    books: dict[str, set[str]] = {}
    try:  # written by gmprep.ingest.aon_sources.write_tsv (columns book, line, category, name, path, commit)
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for r in csv.DictReader(f, delimiter="\t"):
                key = _norm(r["name"])
                if key:
                    books.setdefault(key, set()).add(r["book"].removeprefix("Pathfinder "))
    except OSError:
        return frozenset()
    out: set[str] = set()
    for key, by in books.items():
        if by & held:
            continue  # a held book heads it too: the held books state it
        ws = [re.sub(r"'s?$", "", w) for w in key.split()]
        out.update(_stems(ws[i:i + 2]) for i in range(len(ws) - 1))
        out.update(_stems([w]) for w in ws if (z := zipf(w)) is not None and z < max_zipf)
    return frozenset(out)


@dataclass(frozen=True)
class HingeTerm:
    """A word (or two) the question repeats that the held books use only in passing."""

    shown: str  # as the question first writes it
    repeats: int  # times the question uses it (same stem)
    uses: int  # entries of the held books that use it (trait definitions and tags aside)


def stem_tokens(text: str) -> list[str]:
    """``text``'s words as Snowball stems, lower-case, a possessive's "'s" dropped."""
    return [snowball_stem(re.sub(r"['\u2019]s?$", "", m.group(0)).lower()) for m in _TOKEN.finditer(text)]



_HYPHENATED = re.compile(r"[a-z]+(?:-[a-z]+)+")


def repeated_terms(question: str, hyphenated: bool = False, acronyms: bool = False) -> dict[str, tuple[str, int]]:
    """The question's content words and pairs of adjacent content words, by their stems: (as first written, uses).
    "As written" prefers a use inside a sentence: "Siege engine question: ... a Crew 1 siege engine" is "siege engine".
    ``hyphenated``: a hyphenated word ("dual-class") is a content word too (letters and inner hyphens only).
    ``acronyms``: a word in capitals that spells the initials of a pair the question writes out ("1 Resolve Point ...
    with 2 RP") is a use of that pair too."""
    matches = list(_TOKEN.finditer(question))
    written = [re.sub(r"['\u2019]s?$", "", m.group(0)) for m in matches]
    opening = [not question[:m.start()].rstrip() or question[:m.start()].rstrip()[-1] in ".!?:\"'(" for m in matches]
    words = [w.lower() for w in written]
    content = [len(w) >= MIN_LEN and (w.isalpha() or (hyphenated and _HYPHENATED.fullmatch(w) is not None))
               and w not in _STOP for w in words]
    out: dict[str, tuple[str, int]] = {}
    first_opens: dict[str, bool] = {}
    for n in (1, 2):
        for i in range(len(words) - n + 1):
            if all(content[i:i + n]):
                key = _stems(words[i:i + n])
                shown, seen = out.get(key, (" ".join(written[i:i + n]), 0))
                if seen and first_opens[key] and not opening[i]:
                    shown, first_opens[key] = " ".join(written[i:i + n]), False
                first_opens.setdefault(key, opening[i])
                out[key] = (shown, seen + 1)
    if acronyms:
        initials: dict[str, str] = {}  # "rp" -> the pair's key, for pairs written out
        for i in range(len(words) - 1):
            if content[i] and content[i + 1] and written[i][:1].isupper() and written[i + 1][:1].isupper():
                initials.setdefault(words[i][0] + words[i + 1][0], _stems(words[i:i + 2]))
        said = Counter(w[:2].lower() for w in written if _ACRONYM.fullmatch(w))
        for short, n in said.items():
            pair = initials.get(short)
            if pair is not None:
                shown, seen = out[pair]
                out[pair] = (shown, seen + n)
    return out


_ACRONYM = re.compile(r"[A-Z]{2}s?")


def quoted_in(term: str, texts: Sequence[str]) -> bool:
    """Some text of ``texts`` uses ``term`` (same Snowball stems, in order)."""
    key = stem_tokens(term)
    n = len(key)
    for text in texts:
        st = stem_tokens(text)
        if n and any(st[i:i + n] == key for i in range(len(st) - n + 1)):
            return True
    return False


def hinge_terms(question: str, use: BookUse, held: Sequence[str], slack: int, min_repeats: int,
                passages: Sequence[str] | None = None, unquoted_slack: int = -1) -> list[HingeTerm]:
    """The terms the question repeats (at least ``min_repeats`` times, one or two content words) that no held entry
    is named for, that at most ``repeats + slack`` held entries use, and that other books' entry names use; rarest
    first. A term none of ``passages`` (the retrieved passages' names and texts) uses may be used by up to
    ``repeats + unquoted_slack`` held entries: the passages found are not about the word the question turns on
    (the thaumaturge's "implement" four times; the books say it of cooking and writing implements)."""
    vocab = other_vocabulary(held)
    if not vocab:
        return []
    out = []
    for key, (shown, repeats) in repeated_terms(question).items():
        if repeats < min_repeats or key not in vocab or use.is_name(shown.lower()):
            continue
        uses = use.uses(shown.lower())
        if uses <= repeats + slack or (passages is not None and uses <= repeats + unquoted_slack
                                       and not quoted_in(shown, passages)):
            out.append(HingeTerm(shown, repeats, uses))
    return sorted(out, key=lambda t: (t.uses, -t.repeats))


# ----- a name no book and no English text uses -----------------------------------------------------------------------
# "The vrock's Dance of Ruin ability requires 3 actions ... Does that mean a vrock must be flying ...?": a creature, a
# place or a class of a book gmprep does not hold is a word English never records (wordfreq zipf 0) and no held entry
# uses. Said once it is as often the asker's campaign ("Ezren") or a typo; said again in the sentence that asks, with
# no retrieved passage using it, the question is about it. Counted on the tuning sets and the 15,386 generated
# questions (docs/answerability.md, "A held name that is another book's entry too"): no answerable question is flagged.


def unknown_names(question: str, use: BookUse, passages: Sequence[str], min_repeats: int = 2) -> list[str]:
    """Words (letters only) ``question`` says at least ``min_repeats`` times, once in a sentence that asks, that English
    never records (zipf 0), no held entry uses or is named for, and none of ``passages`` (the retrieved passages'
    names and texts) uses; as first written, most repeated first."""
    if min_repeats <= 0:
        return []
    sents = sentences(question)
    asks = [sents[i] for i in asking(sents)]
    out: list[tuple[int, str]] = []
    for shown, repeats in repeated_terms(question).values():
        if repeats < min_repeats or " " in shown or zipf(shown.lower()) != 0.0:
            continue
        low = shown.lower()
        if use.is_name(low) or use.uses(low) > 0 or not quoted_in(shown, asks) or quoted_in(shown, passages):
            continue
        out.append((repeats, shown))
    return [shown for _, shown in sorted(out, key=lambda t: -t[0])]


# ----- other books' entries, named in a note --------------------------------------------------------------------------
# A GM's notes name entries of books gmprep does not hold ("Spellstrike", "Defiant Banner", a Tracking Tag on the
# shopping list). The catalogue knows each one's book and kind, not its text, so a hover can say where the rule is
# from instead of showing nothing (server/markdown.py, ``other_book_markdown``). Only names no held entry, alias or
# legacy name already answers (the name index checks, ``NameIndex.build``), and not the ones that are plain English:
# one word as common as ``HOVER_NAME_ZIPF`` or more ("Guardian", "Stone", "Support", "Doll") or a name that opens with
# an article ("The Vision", a harrow card). The mention scorer then decides each one in its context, as for any entry.
# Measured on the tuning notes (docs/hover.md, "Entries of books gmprep does not hold").
HOVER_NAME_ZIPF = 2.5
# the catalogue's headings -> the store's entry types (the scorer's type feature; the hover's kind): the rest are
# class options and the like, shown under their heading
_ENTRY_TYPES = {
    "Feats": "feat", "Equipment": "equipment", "Weapons": "equipment", "Armor": "equipment", "Shields": "equipment",
    "Vehicles": "equipment", "Siege Weapons": "equipment", "Spells": "spell", "Rituals": "spell",
    "Class Features": "class-feature", "Classes": "class", "Archetypes": "archetype", "Ancestries": "ancestry",
    "Ancestry Heritages": "heritage", "Backgrounds": "background", "Hazards": "hazard", "Conditions": "condition",
    "Animal Companions": "creature",
}


def catalogue_entries(max_zipf: float = HOVER_NAME_ZIPF,
                      held: Iterable[str] = ("Player Core", "Player Core 2", "GM Core", "Monster Core")) -> list[Node]:
    """One name-only entry per catalogue name that only books other than ``held`` list (the Remaster's superseded
    books included: "thunderstone" is a Core Rulebook item the Remaster dropped), for the name index of notes:
    ``node_id`` ``other:<name>``, the entry type its heading maps to, ``book`` the book that lists it (a class before
    its multiclass archetype), ``fields`` the heading and every book that lists it; no text."""
    held_set = {b.removeprefix("Pathfinder ") for b in held}
    out: list[Node] = []
    for key, rows in _catalogue().items():
        if any(book in held_set for _, book, _ in rows):
            continue  # a held book lists it: the store has it (or the bundled corpus lacks its text)
        words = key.split()
        if not words or words[0] in ("the", "a", "an") or len(key) < MIN_LEN \
                or all(w in _STOP or w in _SMALL for w in words):
            continue  # "The Vision" is a harrow card's title; "To Me" is two function words
        if len(words) == 1:
            z = zipf(key)
            if z is None or z >= max_zipf:
                continue  # without wordfreq no single word is offered: most are English too
        name, book, category = min(rows, key=lambda r: (r[2] != "Classes", r[1] in SUPERSEDED, r[1]))
        slug = re.sub(r"[^a-z0-9]+", "-", key).strip("-")
        out.append(Node(node_id=f"{OTHER_ID_PREFIX}{slug}", source_id=f"{OTHER_ID_PREFIX}{slug}", kind="entry",
                        name=re.sub(r"\s*\(.*?\)$", "", name) or name, type=_ENTRY_TYPES.get(category, "rule"),
                        book=book, origin="catalogue:other-books",
                        fields={"category": _singular(category),
                                "books": sorted({b for _, b, _ in rows}),
                                "superseded": all(b in SUPERSEDED for _, b, _ in rows)}))
    return out


# ----- another book's name beside a held rule ------------------------------------------------------------------------
# "Bonuses to Leap distance like greater spry sinews ... So if my character ... rolls a 30 on the Athletics check to
# Long Jump, do they jump only 30 feet ...?": the other book's item is named, but what is asked is Long Jump. The
# evidence is the question's structure and the retrieval: a sentence that asks (ends in "?"), with no other book's
# name in it, names the rule of the passage retrieval ranked first. A parenthesis is an aside ("(like Flowing Spirit
# Strike with the Gleaming Blade)"): it names examples, not what is asked.
_ASIDE = re.compile(r"\([^()]*\)")


def _names(words: list[str], name: list[str]) -> bool:
    """``words`` hold ``name`` in order (its last word singular or plural)."""
    n = len(name)
    last = name[-1].rstrip("s") if n else ""
    return bool(n) and any(words[i:i + n - 1] == name[:-1] and words[i + n - 1].rstrip("s") == last
                           for i in range(len(words) - n + 1))


# An example the question gives for a kind of thing ("encounter activities like the exemplar's Scar of the Survivor",
# "such as Retributive Strike") is an aside too: up to the clause's end (a comma, colon, semicolon or the sentence's
# end). Read only where a name must not be asked (``names_asked``), not where a held rule must be.
_EXAMPLE = re.compile(r"(?<![\w-])(?:like|such as)\s(?!to\b)[^,;:?!.]*", re.IGNORECASE)  # not "I'd like to play a ...", "spell-like"
# a sentence that says it is the question ("I have a question about how ...", "Kineticist question: ...") states what
# is asked though it does not end in "?"
_ANNOUNCES = re.compile(r"\bquestions?\b", re.IGNORECASE)


# A sentence refers back to the one before it by "it" or by a demonstrative before a noun ("Her 1st level domain power
# is a spell-like ability and a touch attack. Does using this ability provoke ...?", "... he could take a 5 foot step
# between each attack ... Wouldn't that move interrupt his attack?"); not by "they", "them", "he" or "she", mostly the
# asker's people, and not by "that" before a function word ("so that the", "means that it": a conjunction)
_BACK_IT = re.compile(r"(?<![\w'-])(?:it|its|itself)(?![\w'-])", re.IGNORECASE)
_BACK_DEMONSTRATIVE = re.compile(r"(?<![\w'-])(?:this|these|that|those)\s+([a-z][a-z'-]*)", re.IGNORECASE)
# a possessive before a noun: "What's her concentration modifier?" after "... a lillend tries to use her hallucinatory
# terrain spell-like ability ..." (``possessive``): whose it is, the sentence before says
_BACK_PERSON = re.compile(r"(?<![\w'-])(?:he|she|they|them|him)(?![\w'-])", re.IGNORECASE)
# the catalogue's categories whose entries are kinds of people (an NPC of the scene may be one)
PERSON_CATEGORIES = frozenset({"archetype", "background", "class", "ancestry", "ancestry heritage", "heritage",
                               "archetypes", "backgrounds", "classes", "ancestries", "ancestry heritages"})
# after such a name, a word that makes it the asker's build, not a person of the scene
_BUILD_AFTER = re.compile(r"\s*(?:'s\s+)?(?:dedication|archetype|class|feats?|abilit(?:y|ies)|features?|build|levels?)\b",
                          re.IGNORECASE)
_SCENE_ARTICLE = re.compile(r"(?:^|[\s(\"'])(?:a|an|the)\s+$", re.IGNORECASE)
# before the article, words that make the name what a player builds or plays ("playing a Magus", "as a kineticist")
_BUILD_BEFORE = re.compile(r"(?<![\w'-])(?:play|plays|playing|played|as|am|build|building|built|multiclass|"
                           r"multiclassing|choose|chose|choosing|take|took|taking|pick|picked)\s+(?:a|an|the)\s+$",
                           re.IGNORECASE)


def scene_person(question: str, shown: str, category: str) -> bool:
    """``shown`` (another book's entry as ``question`` writes it) is a kind of person (``PERSON_CATEGORIES``) and every
    time the question writes it, an article brings it in ("A Hellknight patrol", "an Ulfen raider", "the Eagle Knight")
    and no word makes it a build ("Hellknight Armiger Dedication", "the summoner class", "the magus's feats"): a person of
    the scene, not the asker's character ("my summoner") or rules."""
    if category.lower() not in PERSON_CATEGORIES or not shown:
        return False
    text = question.replace("\u2019", "'")
    found = list(re.finditer(r"(?<![\w-])" + re.escape(shown) + r"(?![\w-])", text, re.IGNORECASE))
    return bool(found) and all(_SCENE_ARTICLE.search(text[:m.start()]) and not _BUILD_BEFORE.search(text[:m.start()])
                               and not _BUILD_AFTER.match(text, m.end()) for m in found)


_BACK_POSSESSIVE = re.compile(r"(?<![\w'-])(?:her|his|their)\s+([a-z][a-z'-]*)", re.IGNORECASE)


def refers_back(sentence: str, possessive: bool = False, personal: bool = False) -> bool:
    """``sentence`` refers to what the sentence before it names: "it", or "this" / "that" / "these" / "those" before a
    word that is no function word ("this ability", "that move", "those rules"); with ``possessive``, "her" / "his" /
    "their" before such a word too ("her concentration modifier"); with ``personal``, "he", "she", "they", "them",
    "him" too (a person the sentence before names)."""
    text = _ASIDE.sub(" ", sentence.replace("\u2019", "'"))
    if _BACK_IT.search(text) or (personal and _BACK_PERSON.search(text)):
        return True
    found = [*_BACK_DEMONSTRATIVE.finditer(text), *(_BACK_POSSESSIVE.finditer(text) if possessive else ())]
    return any(m.group(1).lower() not in STOP_WORDS for m in found)


def names_asked(question: str, terms: Sequence[str], antecedent: bool = False, questions_only: bool = False,
                possessive: bool = False) -> str:
    """The first sentence that asks (ends in "?", or says it is the question) and names one of ``terms`` outside its
    asides (parentheses, examples given with "like" / "such as"), or "": the names are then only the scene's. With
    ``antecedent``, a sentence that asks and refers back (``refers_back``: "Does using this ability provoke ...?")
    asks about what the sentence before it names, read the same way (that sentence is returned). With
    ``questions_only``, a text without a question mark asks nothing (``kg.query.asking`` takes its last sentence as
    the one that asks): a scene described, not a rule asked. ``possessive``: "her" / "his" / "their" before a noun
    refers back too (``refers_back``)."""
    def words(text: str) -> list[str]:  # a possessive names its owner ("the summoner's shared hit point pool")
        return [re.sub(r"'s$", "", t.lower()).strip("'-") for t in _TOKEN.findall(text.replace("\u2019", "'"))]

    foreign = [w for w in (words(t) for t in terms) if w]
    sents = sentences(question)
    asks = set(asking(sents)) | {i for i, s in enumerate(sents) if _ANNOUNCES.search(s)}
    if questions_only:
        asks = {i for i in asks if sents[i].endswith("?") or _ANNOUNCES.search(sents[i])}
    if antecedent:
        asks |= {i - 1 for i in asks if i > 0 and refers_back(sents[i], possessive)}
    for i in sorted(asks):
        if any(_names(words(_EXAMPLE.sub(" ", _ASIDE.sub(" ", sents[i]))), f) for f in foreign):
            return sents[i]
    return ""


def without_asides(text: str, examples: bool = False) -> str:
    """``text`` without its parentheses and (``examples``) the examples it gives with "like" / "such as"."""
    text = _ASIDE.sub(" ", text)
    return _EXAMPLE.sub(" ", text) if examples else text


def names_any(sentence: str, terms: Sequence[str]) -> bool:
    """``sentence`` names one of ``terms`` outside its parentheses (as ``asked_besides`` reads it)."""
    def words(text: str) -> list[str]:
        return [t.lower().strip("'-") for t in _TOKEN.findall(text.replace("\u2019", "'"))]

    said = words(_ASIDE.sub(" ", sentence))
    return any(f and _names(said, f) for f in (words(t) for t in terms))


def homonym(name: str, books: Iterable[str], held: Sequence[str]) -> bool:
    """``name`` (a held entry's, the first passage's) is also the name of an entry of one of ``books`` (the other books
    whose entries the question names) that the catalogue lists under a category no held book lists that name under:
    Rage of Elements' Elemental Blast (class feature) beside Player Core 2's spell. Then naming it is naming that
    book's entry. A name a held book lists under the same category (Shield Block: class features of Player Core and
    of Battlecry!) is the held rule. A one-word name (Ready: Player Core's action, Battlecry!'s tactic; Shield) is as
    often the asker's own word as either entry, and the catalogue's categories for it are incomplete: never a homonym.
    ``held``: the store's books ("Pathfinder Player Core" or "Player Core")."""
    key = _norm(name)
    if len(key.split()) < 2:
        return False
    rows = _catalogue().get(key, ())
    mine = {b.removeprefix("Pathfinder ") for b in held}
    theirs = {b.removeprefix("Pathfinder ") for b in books if b} - mine
    held_categories = {category for _, book, category in rows if book in mine}
    return any(book in theirs and category not in held_categories for _, book, category in rows)


def asked_besides(question: str, terms: Sequence[str], top_name: str | Sequence[str]) -> str:
    """The sentence of ``question`` that asks about the rule ``top_name`` (the first retrieved passage's name, or its
    names: the Remaster name and the pre-Remaster one the question writes) without naming any of ``terms`` (other
    books' names as the question writes them), or "" when none does: then the other book's rule is what is asked."""
    def words(text: str) -> list[str]:
        return [t.lower().strip("'-") for t in _TOKEN.findall(text.replace("\u2019", "'"))]

    tops = [top_name] if isinstance(top_name, str) else list(top_name)
    names = [n for n in (words(re.sub(r"\s*\(.*?\)", "", t)) for t in tops) if n]
    if not names:
        return ""
    foreign = [words(t) for t in terms]
    sents = sentences(question)
    for i in asking(sents):
        said = words(_ASIDE.sub(" ", sents[i]))
        if not any(f and _names(said, f) for f in foreign) and any(_names(said, n) for n in names):
            return sents[i]
    return ""
