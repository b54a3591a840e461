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

import json
import re
import sqlite3
import threading
from functools import lru_cache

from gmprep.common.text import QUESTION_WORDS, STOP_WORDS

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

    def uses(self, word: str, cap: int = 50) -> int:
        with self._lock:
            if word in self._uses:
                return self._uses[word]
        # FTS matches the porter stem, so "misfires" finds "misfire" and "barded" finds "barding": an
        # inflection of a word the books use is the books' word
        n = 0
        try:
            rows = self.db.execute(
                "SELECT n.type, n.traits FROM fts f JOIN nodes n ON n.rowid = f.rowid WHERE fts MATCH ? LIMIT 2000",
                ('"' + word.replace('"', " ") + '"',))
            forms = {word, word.rstrip("s")}
            for typ, traits in rows:
                # an entry tagged with the word does not use it: shared feats carry every class that gets
                # them as traits (magus, thaumaturge) and repeat the tag as a heading in their text
                if typ != "trait" and not forms & {t.lower() for t in json.loads(traits or "[]")}:
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
