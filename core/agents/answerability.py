"""Can the books gmprep holds answer this question? One decision with three outcomes.

- ``answer``: the retrieved passages are about what was asked;
- ``not_in_books``: not a Pathfinder 2e question for these books (another system, off-topic);
- ``not_in_corpus``: a PF2e rule the question asks about is only *mentioned* by the retrieved
  passages (feats and items that use the word), and no entry *defines* it: the rules prose is in
  a book the user has not added (Player Core's flanking, multiple attack penalty, afflictions...).

The decision is a small multinomial logistic model over features of the question and of the
retrieval evidence (no word lists): MiniLM cosine, lexical coverage by entry *names* versus by body
text, whether the asked phrase is an entry name, how often an unnamed phrase of the question occurs
in entry bodies (mentioned but never defined), whether the question's words occur anywhere in the
store at all, the searcher's top score and how it found the top hit. It is trained on synthetic
questions generated from the corpus (``python -m gmprep.evals.answerability_train``; the weights and
the thresholds live in ``answerability.json`` beside this file, with their manifest). Running it
needs only numpy: the weights are plain numbers.

A second stage (``AnswerabilityModel.gap``, answer vs not_in_corpus) is asked when the first answers;
it is fitted with leave-one-out questions (an asked entry hidden from the candidates and the names,
``CorpusIndex.without``). When the workspace restricts ``books`` and the asked entry lives only in
books it left out, the decline says so (``decline_text``), not "add your Player Core PDF".

A question naming a pre-Remaster rule that has a Remaster equivalent (``gmprep.kg.legacy``) is
always answered, and the answer says the new name.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import resources
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from gmprep.common.settings import AnswerabilitySettings
from gmprep.common.text import QUESTION_WORDS, STOP_WORDS, stem
from gmprep.core.agents import edition, otherbooks, quotes
from gmprep.core.agents.campaign import CampaignRules
from gmprep.core.agents.coverage import PROSE_TYPES, OutlineCoverage, OutlineSection
from gmprep.core.agents.otherbooks import (
    BookUse,
    OtherBookTerm,
    asked_besides,
    foreign_terms,
    held_books,
    hinge_terms,
    other_book_terms,
    publication_terms,
    stem_tokens,
)
from gmprep.core.agents.relevance import RelevanceJudge
from gmprep.core.agents.stated import StatedTerms, unstated_terms
from gmprep.kg.legacy import HAND_LEGACY_NAMES, find_legacy, legacy_target
from gmprep.kg.models import Hit
from gmprep.kg.query import asking, sentences

_STOP = STOP_WORDS | QUESTION_WORDS  # the relevance judge's word set (common.text)

AnswerabilityOutcome = Literal["answer", "not_in_books", "not_in_corpus"]
TOP_N = 5
MAX_SPAN = 4  # words in a candidate phrase ("multiple attack penalty", "swallow whole")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9'-]*")
# words that start a question or a situation, not a rule; they never begin or end a phrase
_FILLER = frozenset("""how what when where which who why does do did is are can could would should will may might
    work works working rule rules explain mean means meaning happen happens happened exactly way ways use using
    used player players character characters pc pcs gm my our your their his her its it they them we you i
    get gets make makes take takes need needs want wants say says said tell know find like really
    also still thing things time times turn turns""".split())

FEATURES = (
    "semantic", "coverage", "name_coverage", "top_score", "top_via_name", "name_span", "name_span_in_hits",
    "unnamed_span", "unnamed_logdf", "unnamed_in_hit_names", "unnamed_in_hit_lead", "unknown_share",
    "n_content", "legacy",
    # the phrase the question is *about* (see ``asked_phrase``): an entry name, or only used in bodies?
    "asked_is_name", "asked_in_hit_names", "asked_mentions", "asked_logdf", "asked_caps", "hit_names_in_question",
)


class Assessment(BaseModel):
    """The decision for one question and the evidence it was made on."""

    outcome: AnswerabilityOutcome
    probabilities: dict[str, float] = Field(default_factory=dict)
    rule: str = ""  # the asked phrase that no entry defines (for not_in_corpus)
    # the asked entry lives only in books the workspace's ``books`` setting leaves out: (its name, its books)
    excluded: str = ""
    excluded_books: list[str] = Field(default_factory=list)
    selected_books: list[str] = Field(default_factory=list)
    renamed: list[tuple[str, str]] = Field(default_factory=list)  # (legacy name, Remaster name)
    # the core-book rules section (``coverage.py``'s outline) the question asks about that no entry states
    section: OutlineSection | None = None
    # ``section`` is a section of the organized-play campaign's guide (``campaign.py``): the campaign's name as the
    # question writes it ("PFS") and the guide's title
    campaign: str = ""
    campaign_book: str = ""
    # the question's word that neither the books nor English use: another book's term (``otherbooks.py``)
    foreign: str = ""
    foreign_book: str = ""  # the book that lists ``foreign`` by name, when one does (otherbooks.other_book_terms)
    foreign_kind: str = ""  # what that book lists it as: "feat", "class feature", ...
    # ``foreign`` is the term the question turns on that the held books use only in passing: in this many entries
    # (otherbooks.hinge_terms); None when ``foreign`` is not such a term
    foreign_uses: int | None = None
    held_books: list[str] = Field(default_factory=list)  # the books the store holds, for the decline text
    # other books' entries the question names beside the held rule it asks (an ``answer``): (name as written, book,
    # kind), said before the answer (``answer_note``); ``asked`` is the sentence that asks the held rule
    besides: list[tuple[str, str, str]] = Field(default_factory=list)
    asked: str = ""
    features: dict[str, float] = Field(default_factory=dict)

    def trace_output(self) -> dict:
        """What the answerability step shows in an answer's trace (both answerers)."""
        return self.model_dump(include={"outcome", "probabilities", "rule", "renamed", "section", "campaign", "foreign",
                                        "foreign_book", "foreign_kind", "foreign_uses", "besides", "asked"})


class AnswerabilityModel(BaseModel):
    """Standardised multinomial logistic regression, as shipped in ``answerability.json``."""

    features: list[str]
    classes: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[list[float]]
    intercept: list[float]
    # decline only when the declining class is at least this probable (set on synthetic + dev data)
    thresholds: dict[str, float] = Field(default_factory=dict)
    manifest: dict = Field(default_factory=dict)

    def probabilities(self, x: dict[str, float]) -> dict[str, float]:
        v = (np.array([x[f] for f in self.features]) - np.array(self.mean)) / np.array(self.scale)
        z = np.array(self.coef) @ v + np.array(self.intercept)
        p = np.exp(z - z.max())
        p /= p.sum()
        return {c: float(pi) for c, pi in zip(self.classes, p, strict=True)}

    # second stage, answer vs not_in_corpus on the same features, trained with leave-one-out questions:
    # asked only when this model answers (see ``gmprep.evals.answerability_train``)
    gap: AnswerabilityModel | None = None

    def decide(self, probs: dict[str, float]) -> AnswerabilityOutcome:
        best = max(probs, key=probs.__getitem__)
        if best != "answer" and probs[best] >= self.thresholds.get(best, 0.5):
            return best  # type: ignore[return-value]
        return "answer"

    def assess(self, x: dict[str, float]) -> tuple[AnswerabilityOutcome, dict[str, float]]:
        """The outcome for feature vector ``x`` and the probabilities it was decided on."""
        probs = self.probabilities(x)
        outcome = self.decide(probs)
        if outcome == "answer" and self.gap is not None:
            gap_probs = self.gap.probabilities(x)
            probs["gap_not_in_corpus"] = gap_probs["not_in_corpus"]
            if self.gap.decide(gap_probs) == "not_in_corpus":
                outcome = "not_in_corpus"
        return outcome, probs


@lru_cache(maxsize=1)
def load_model() -> AnswerabilityModel:
    """The shipped model (``core/agents/answerability.json``)."""
    ref = resources.files("gmprep.core.agents") / "answerability.json"
    return AnswerabilityModel.model_validate(json.loads(ref.read_text(encoding="utf-8")))


def tokens(text: str) -> list[str]:
    """Lower-case word tokens (apostrophes and hyphens kept inside words)."""
    return [t.strip("'-") for t in _TOKEN.findall(text.lower().replace("\u2019", "'")) if t.strip("'-")]


def is_content(word: str) -> bool:
    return word not in _STOP and word not in _FILLER and len(word) > 2 and not word.isdigit()


def spans(words: list[str], longest: int = MAX_SPAN) -> list[tuple[int, str]]:
    """Contiguous phrases of up to ``longest`` words that start and end with a content word,
    as ``(content words in it, phrase)``."""
    out = []
    for i, w in enumerate(words):
        if not is_content(w):
            continue
        for j in range(i, min(len(words), i + longest)):
            if is_content(words[j]):
                phrase = words[i : j + 1]
                out.append((sum(map(is_content, phrase)), " ".join(phrase)))
    return out


class CorpusIndex:
    """What the features ask of the store: entry names, and how many entry bodies use a phrase."""

    def __init__(self, store, hidden: frozenset[str] = frozenset()):
        self.store = store
        self._lock = threading.Lock()
        self._names: set[str] | None = None
        self._books: dict[str, set[str]] = {}
        self._df: dict[str, int] = {}
        self.hidden = hidden  # names treated as absent (the trainer's leave-one-out; empty at run time)

    def without(self, names: set[str]) -> CorpusIndex:
        """A view of this index in which ``names`` are no entry's name (caches shared): how the store
        would look had the entry never been ingested."""
        view = CorpusIndex(self.store, frozenset(names))
        view._lock, view._names, view._df, view._books = self._lock, self.names(), self._df, self._books
        return view

    def names(self) -> set[str]:
        """Every entry name and alias, lower-cased (singular and plural forms both kept)."""
        with self._lock:
            if self._names is None:
                names: set[str] = set()
                rows = self.store.db.execute("SELECT name, aliases, book FROM nodes WHERE kind = 'entry'")
                for name, aliases, book in rows:
                    for n in [name, *json.loads(aliases or "[]")]:
                        low = " ".join(tokens(re.sub(r"\(.*?\)", "", n)))
                        if low:
                            names.add(low)
                            self._books.setdefault(low, set()).add(book or "")
                self._names = names
        return self._names

    def is_name(self, phrase: str) -> bool:
        names, hidden = self.names(), self.hidden
        return any(p in names and p not in hidden for p in (phrase, phrase.rstrip("s"), f"{phrase}s"))

    def books_of(self, phrase: str) -> set[str]:
        """The books of the entries named (or aliased) ``phrase``."""
        self.names()
        out: set[str] = set()
        for p in (phrase, phrase.rstrip("s"), f"{phrase}s"):
            out |= self._books.get(p, set())
        return out

    def body_df(self, phrase: str) -> int:
        """Entries whose body holds ``phrase`` (FTS phrase match, porter-stemmed), capped at 1000."""
        if phrase in self._df:
            return self._df[phrase]
        quoted = '"' + phrase.replace('"', " ") + '"'
        try:
            row = self.store.db.execute(
                "SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT 1000)", (f"body : {quoted}",)
            ).fetchone()
            n = int(row[0])
        except sqlite3.Error:
            n = 0
        with self._lock:
            if len(self._df) > 50_000:
                self._df.clear()
            self._df[phrase] = n
        return n

    def any_df(self, word: str) -> int:
        """Entries whose name or body holds ``word`` (capped at 1000)."""
        key = f"\0{word}"
        if key not in self._df:
            try:
                row = self.store.db.execute(
                    "SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT 1000)", ('"' + word + '"',)
                ).fetchone()
                self._df[key] = int(row[0])
            except sqlite3.Error:
                self._df[key] = 0
        return self._df[key]


def _lead(hit: Hit) -> str:
    return " ".join(tokens(hit.text[:240]))


def _capitalised(question: str, phrase: str) -> bool:
    """``phrase`` is written with capitals in the question, not only as a sentence's first word: the
    books capitalise rules' names (Grab, Multiple Attack Penalty), askers often copy them."""
    rx = r"(?<![\w'])" + r"\W+".join(re.escape(w) for w in phrase.split()) + r"(?![\w'])"
    for m in re.finditer(rx, question, flags=re.IGNORECASE):
        text, before = m.group(0), question[: m.start()].rstrip()
        if any(c.isupper() for c in text) and before and before[-1] not in ".!?:\"(":
            return True
    return False


def _collocation(phrase: str, df: int, index: CorpusIndex) -> bool:
    """A multi-word phrase is a term when dropping its first or last word does not make it much more
    common: "multiple attack penalty" holds most uses of "attack penalty", "penalty apply" few of "penalty"."""
    ws = phrase.split()
    for part in (ws[1:], ws[:-1]):
        if part and is_content(part[0]) and is_content(part[-1]) and df < 0.2 * index.body_df(" ".join(part)):
            return False
    return True


def _extends_name(phrase: str, df: int, index: CorpusIndex) -> bool:
    """``phrase`` (no entry's name) holds a shorter phrase that is one, and the books use the whole for less than a
    fifth of the name's uses: that entry asked about in the asker's words ("weakness to fire": 4 bodies, Weakness
    hundreds; "gain the wounded condition"; "become off-guard"), not a rule of its own. "Multiple attack penalty" holds
    a name too (the attack trait) and is a term: 279 bodies use it, over a fifth of "attack"'s (capped at 1000)."""
    ws = phrase.split()
    for i in range(len(ws)):
        if not is_content(ws[i]):
            continue
        for j in range(i + 1, len(ws) + 1):
            if (i, j) == (0, len(ws)) or not is_content(ws[j - 1]):
                continue
            part = " ".join(ws[i:j])
            if index.is_name(part) and df < 0.2 * index.body_df(part):
                return True
    return False


def asked_phrase(question: str, words: list[str], index: CorpusIndex) -> tuple[str, bool, int, bool]:
    """The phrase the question is about: among its phrases that are an entry's name or that entry bodies
    use, the most specific one (content words, capitals, then how many bodies use it). Found from the
    question's structure and the store's statistics only. ``(phrase, is a name, body count, capitalised)``."""
    best: tuple[float, str, bool, int, bool] = (0.0, "", False, 0, False)
    for n, phrase in spans(words):
        named = index.is_name(phrase)
        df = index.body_df(phrase)
        if not named and df < (3 if n == 1 else 2):
            continue
        if not named and n > 1 and not _collocation(phrase, df, index):
            continue  # "penalty apply": the books use it, but as words that happen to meet, not as a term
        if not named and n > 1 and _extends_name(phrase, df, index):
            continue
        caps = _capitalised(question, phrase)
        score = n + 1.0 * caps + 0.2 * math.log1p(df)
        if score > best[0]:
            best = (score, phrase, named, df, caps)
    return best[1], best[2], best[3], best[4]


def absent_phrases(question: str, index: CorpusIndex, passages: Sequence[str], min_repeats: int = 3) -> list[str]:
    """Phrases of two or three content words ``question`` says at least ``min_repeats`` times, once in a sentence that
    asks, that no entry body uses (FTS phrase count 0), that are no entry's name and hold no multi-word entry name,
    that are no pre-Remaster name (``find_legacy``) and that none of ``passages`` uses: the asker's term for a rule the
    held books do not state ("full attack" three times: Pathfinder 1e's full-round attack). Most repeated first."""
    if min_repeats <= 0:
        return []
    words = tokens(question)
    legacy = f" {' '.join(tokens(' '.join(old for old, _ in find_legacy(question))))} "
    counts = Counter(p for n, p in spans(words, 3) if n >= 2 and all(is_content(w) for w in p.split()))
    seen = f" {' '.join(' '.join(tokens(t)) for t in passages)} "
    out: list[tuple[int, str]] = []
    for phrase, repeats in counts.items():
        ws = phrase.split()
        if repeats < min_repeats or f" {phrase} " in legacy or f" {phrase} " in seen or index.is_name(phrase):
            continue
        if any(index.is_name(" ".join(ws[i:j])) for i in range(len(ws)) for j in range(i + 2, len(ws) + 1)):
            continue  # "successfully treat wounds": a held rule's name with the asker's word
        if index.body_df(phrase) > 0 or not otherbooks.names_asked(question, [phrase]):
            continue
        out.append((repeats, phrase))
    return [p for _, p in sorted(out, key=lambda t: -t[0])]


def features(question: str, hits: Sequence[Hit], judge: RelevanceJudge, index: CorpusIndex) -> tuple[dict[str, float], str]:
    """The feature vector for ``question`` and its retrieved ``hits``, and the unnamed asked phrase."""
    top = list(hits[:TOP_N])
    words = tokens(question)
    content = [w for w in words if is_content(w)]
    hit_names = [" ".join(tokens(h.name)) for h in top]
    name_stems = {stem(w) for n in hit_names for w in n.split()}
    name_cov = sum(stem(w) in name_stems for w in content) / len(content) if content else 0.0

    name_span = 0
    name_span_in_hits = 0.0
    unnamed = ""
    unnamed_n = 0
    unnamed_df = 0
    for n, phrase in spans(words):
        if index.is_name(phrase):
            if n > name_span or (n == name_span and not name_span_in_hits):
                name_span = n
                name_span_in_hits = float(any(phrase in h or phrase.rstrip("s") in h for h in hit_names))
            continue
        if any(phrase in name for name in hit_names):
            continue
        df = index.body_df(phrase)
        if n > 1 and _extends_name(phrase, df, index):
            continue  # a held name in the asker's words, as for the asked phrase
        # a one-word phrase must be common in the books to count as a rule term ("flanking")
        if df >= (3 if n == 1 else 2) and (n, df) > (unnamed_n, unnamed_df):
            unnamed, unnamed_n, unnamed_df = phrase, n, df
    in_names = float(bool(unnamed) and any(unnamed in n for n in hit_names))
    in_lead = float(bool(unnamed) and any(unnamed in _lead(h) for h in top))
    unknown = sum(index.any_df(w) == 0 for w in content) / len(content) if content else 1.0
    top_score = min(float(top[0].score), 3.0) if top else 0.0
    asked, asked_named, asked_df, asked_caps = asked_phrase(question, words, index)
    low_q = " ".join(words)
    x = {
        "semantic": judge.semantic(question, top) if top else 0.0,
        "coverage": judge.coverage(question, top) if top else 0.0,
        "name_coverage": name_cov,
        "top_score": top_score,
        "top_via_name": float(bool(top) and top[0].via == "name"),
        "name_span": float(name_span),
        "name_span_in_hits": name_span_in_hits,
        "unnamed_span": float(unnamed_n),
        "unnamed_logdf": math.log1p(unnamed_df),
        "unnamed_in_hit_names": in_names,
        "unnamed_in_hit_lead": in_lead,
        "unknown_share": unknown,
        "n_content": min(len(content), 30) / 10,
        "legacy": float(bool(find_legacy(question))),
        "asked_is_name": float(asked_named),
        "asked_in_hit_names": float(bool(asked) and any(_holds(n, asked) for n in hit_names)),
        "asked_mentions": (sum(asked in " ".join(tokens(h.text)) for h in top) / len(top)) if asked and top else 0.0,
        "asked_logdf": math.log1p(asked_df),
        "asked_caps": float(asked_caps),
        "hit_names_in_question": float(any(len(n) > 3 and f" {n} " in f" {low_q} " for n in hit_names)),
    }
    # the rule a not_in_corpus answer names: what was asked when no entry is named for it
    return x, (asked if asked and not asked_named else unnamed)


def _kind(term: OtherBookTerm) -> str:
    """What the texts call ``term``: its category ("feat", "arcane thesis"), or "book" for a title. A held book's
    entry the store lacks is told by its book being among the held ones (``foreign_text``, ``besides_note``)."""
    return term.category.lower()


def _holds(name: str, phrase: str) -> bool:
    return phrase in name or phrase.rstrip("s") in name


class AnswerabilityJudge:
    """Decides answer / not_in_books / not_in_corpus for a question and its retrieved passages."""

    def __init__(self, store, judge: RelevanceJudge, model: AnswerabilityModel | None = None,
                 books: Sequence[str] = (), settings: AnswerabilitySettings | None = None,
                 spelled_out: Callable[[str], str] | None = None):
        """``spelled_out``: the question with its initials written as the names they stand for ("RK": Recall
        Knowledge; the search's name index, ``NameIndex.spelled_out``), what the statistical model reads."""
        self.spelled_out = spelled_out
        self.store = store
        self.judge = judge
        self.index = CorpusIndex(store)
        self.model = model or load_model()
        self.books = list(books)  # the workspace's ``books`` setting (empty: every book)
        self.settings = settings or AnswerabilitySettings()
        # the books' rules outline and which sections the store holds (decided once, on first use)
        self.coverage = OutlineCoverage(store, judge.embedder)
        self.campaign = CampaignRules(store)  # the organized-play guide's outline
        self.use = BookUse(store.db)  # which words the books use, for another book's terms
        self.stated = StatedTerms(store.db)  # which words the books state rules under (names, aliases, bold)

    def assess(self, question: str, hits: Sequence[Hit], guard: Sequence[str] = ()) -> Assessment:
        """The outcome for ``question`` given the passages retrieved for it. ``guard``: a Pathfinder 2e name of a
        book gmprep does not hold that the other-systems guard found (a class: summoner; Kingmaker), decided like
        another book's entry: declined (naming the first) unless an asking sentence without any of them names the
        first passage's rule and no sentence that asks names one of them (``otherbooks.names_asked``): a class or an
        adventure path in the question's asking is what is asked, in its scene it is the asker's setting."""
        top = [hits[0].name] if hits else []
        if guard and not (self.settings.other_book_besides and self.settings.guard_besides and top
                          and asked_besides(question, list(guard), top)
                          and not otherbooks.names_asked(question, list(guard))):
            return self.other_book(guard[0])
        # the model learned words, not a table's initials: "do ogres get AoO" reads as "... Reactive Strike"
        x, unnamed = features(self.spelled_out(question) if self.spelled_out else question, hits, self.judge, self.index)
        outcome, probs = self.model.assess(x)
        if outcome == "not_in_corpus" and not self.settings.model_gaps:
            outcome = "answer"  # the rules below decide the gaps (``AnswerabilitySettings.model_gaps``)
        if not hits:
            outcome = "not_in_books"
        renamed = [(legacy, self._name_of(target)) for legacy, target in find_legacy(question)]
        # a renamed rule is in the books under its Remaster name: the hand table's renames (the names GMs keep asking
        # by) answer whatever the readers below say; the journal's long tail (kg.legacy.JOURNAL_RENAMES) only where a
        # sentence that asks names one outside its examples ("How long does Stoneskin last?"; not "immune to things
        # like Wall of Stone ... or Stoneskin?", a golem question the books do not answer)
        journal = [old for old, _ in renamed if old not in HAND_LEGACY_NAMES]
        asked_journal = {old for old in journal if otherbooks.names_asked(question, [old])}
        forcing = [(old, new) for old, new in renamed if old in HAND_LEGACY_NAMES or old in asked_journal]
        if forcing:
            outcome = "answer"
        if outcome == "not_in_corpus" and not unnamed:
            outcome = "not_in_books"  # nothing the books mention was asked: not a rule they lack
        excluded, excluded_books = self._excluded(question, hits, outcome) if self.books and not forcing else ("", [])
        if excluded:
            outcome = "not_in_books"  # it is in the store, in a book this workspace left out
        section, campaign = None, None
        if outcome != "not_in_books" and not excluded:
            # the question names the organized-play campaign and a section of its guide ("PFS" and "Chronicle
            # Sheets"): the campaign's own rule, which the held books leave to that guide. A renamed spell beside it
            # ("rebuild ... my scrolls of magic missile") does not make the campaign's rule a core one
            campaign = self.campaign.about(question, self.settings.campaign_own_titles)
            if campaign is not None:
                outcome, section = "not_in_corpus", campaign.section
        if outcome != "not_in_books" and not forcing and section is None:
            # the question names a rules section of the core books that no entry states: the passages
            # only mention it, whatever the retrieval statistics say
            prose = [h.name for h in hits[:TOP_N] if h.type in PROSE_TYPES] if self.settings.outline_prose_words else []
            # a top-five rules page printed inside the section (its book, page, chapter and parents) is part of it
            places = [(h.book, h.page, h.path, h.name) for h in hits[:TOP_N] if h.type in PROSE_TYPES] \
                if self.settings.outline_printed_in else []
            match = self.coverage.about(question, x["semantic"], [h.name for h in hits[:TOP_N]], prose_names=prose,
                                        prose_places=places)
            if match is not None:
                outcome, section = "not_in_corpus", match.section
                probs["outline_cosine"], probs["outline_passages"] = match.cosine, match.passages
        foreign, foreign_book, foreign_kind = "", "", ""
        besides: list[tuple[str, str, str]] = []
        asked = ""
        if not excluded and section is None:
            # an entry another book lists by name (Risky Reload, Extended Kinesis), that no held entry is named
            # for and the held books never write: that book's rule, and the passages found are tangents. So is an
            # entry a held book lists that the store lacks (Staff Nexus), and another book named by its title
            # (Extinction Curse). A renamed rule beside them ("searing light") no longer forces an answer: whether
            # the held rule is asked is decided below, as for any other
            other = self._other_books(question)
            if guard:  # the guard's names first: the note and a decline name them, as the guard's decline did
                held = held_books(self.use.db)
                known = [(otherbooks.book_of(g, held) if self.settings.book_titles else None) or
                         OtherBookTerm(shown=g, name=g, book="", category="") for g in guard]
                other = [*known, *(t for t in other if t.shown.lower() not in {g.lower() for g in guard})]
            # unless a sentence that asks, naming none of them, names the first passage's rule (Long Jump beside
            # "greater spry sinews"; or its pre-Remaster name): then the held rule is asked, and the answer says the
            # other book's name aside
            asked = ""
            if other and hits and self.settings.other_book_besides:
                asked = self._asked_besides(question, other, hits, renamed)
            if asked:
                besides = [(t.shown, t.book, _kind(t)) for t in other]
            elif other:
                outcome, foreign = "not_in_corpus", other[0].shown
                foreign_book, foreign_kind = other[0].book, _kind(other[0])
        foreign_uses = None
        # both rules below read words, not names: they run only when the question names no other book's entry (as
        # before ``besides``: the names, asked or aside, are the finer evidence)
        if outcome != "not_in_books" and not forcing and not excluded and section is None and not foreign \
                and not besides and self.settings.hinge_slack >= 0:
            # the question repeats a word other books name their rules with, and the held books use it hardly
            # more often than the question does ("kingdom" three times; Downtime and Wish say it in passing): that
            # book's rule. A question judged off-topic stays so, as for the word rule below
            hinge = hinge_terms(question, self.use, held_books(self.use.db), self.settings.hinge_slack,
                                self.settings.hinge_repeats, [f"{h.name}\n{h.text}" for h in hits[:TOP_N]],
                                self.settings.hinge_unquoted_slack)
            if hinge:
                outcome, foreign, foreign_uses = "not_in_corpus", hinge[0].shown, hinge[0].uses
        if outcome != "not_in_books" and not forcing and not excluded and section is None and not foreign \
                and (not besides or self.settings.unstated_over_besides) and self.settings.unstated_repeats > 0 \
                and hits:
            # the question repeats another book's word that the held books state no rule under (no entry is named
            # for it, none bolds it) and no retrieved passage even uses: the passages are about something else
            # ("implement" four times; "siege engine" twice, once in a sentence that asks). States, not uses: the
            # books may mention it often. With ``unstated_over_besides`` it outweighs a held rule an asking sentence
            # names beside other books' entries ("construct companion" three times beside Command an Animal)
            # with ``unstated_sections`` other books' rules sections' words count too ("dual-class": the Gamemastery
            # Guide's Dual-Class PCs), and with ``unstated_antecedent`` the sentence before one that asks about "it"
            held = held_books(self.use.db)
            vocabulary = otherbooks.other_vocabulary(held)
            if self.settings.unstated_sections:
                vocabulary = vocabulary | otherbooks.section_vocabulary(held, self.settings.unstated_section_zipf)
            unstated = unstated_terms(question, self.stated, vocabulary, self.settings.unstated_repeats,
                                      [f"{h.name}\n{h.text}" for h in hits[:TOP_N]],
                                      self.settings.unstated_asked_repeats, antecedent=self.settings.unstated_antecedent,
                                      hyphenated=self.settings.unstated_sections,
                                      clause=self.settings.unstated_asking_clause,
                                      acronyms=self.settings.unstated_acronyms,
                                      common_max_zipf=self.settings.unstated_common_zipf)
            if besides:
                # the other books' names set aside are not what is asked, however often the question says them
                # ("greater spry sinews" twice beside Long Jump): only another term outweighs the held rule
                aside = {st for term, _, _ in besides for st in stem_tokens(term)}
                unstated = [t for t in unstated if not aside & set(stem_tokens(t.shown))]
            if unstated:
                outcome, foreign = "not_in_corpus", unstated[0].shown
                foreign_uses = self.use.uses(foreign.lower())
                foreign_book = foreign_kind = ""
        if outcome != "not_in_books" and not forcing and not excluded and section is None and not foreign \
                and not besides and self.settings.unknown_name_repeats > 0 and hits:
            # a name English never records and no held entry uses, said again in the sentence that asks, that no
            # passage found uses ("vrock" five times): a creature, place or class of a book gmprep does not hold
            names = otherbooks.unknown_names(question, self.use, [f"{h.name}\n{h.text}" for h in hits[:TOP_N]],
                                             self.settings.unknown_name_repeats)
            if names:
                outcome, foreign = "not_in_corpus", names[0]
        if outcome != "not_in_books" and not forcing and not excluded and section is None and not foreign \
                and not besides and self.settings.absent_phrase_repeats > 0 and hits:
            # a phrase of ordinary words the question says again and again, in the sentence that asks, that no entry
            # body and no passage found uses ("full attack" three times): the asker's term for a rule the books
            # do not state, and the passages are about the words, not the rule
            phrases = absent_phrases(question, self.index, [f"{h.name}\n{h.text}" for h in hits[:TOP_N]],
                                     self.settings.absent_phrase_repeats)
            if phrases:
                outcome, foreign = "not_in_corpus", phrases[0]
        if outcome != "not_in_books" and not forcing and not excluded and section is None and not foreign \
                and not besides:
            # a word neither the books nor English use is another book's term (Megavolt, liturgist): the
            # passages found for it are tangents. A question judged off-topic stays so ("a recipe for ..."
            # with a rare word is not a rule of another book)
            terms = foreign_terms(question, self.use) if otherbooks.WORD_RULE else []
            if terms:
                outcome, foreign = "not_in_corpus", terms[0]
        if outcome != "not_in_corpus" and not excluded and (not forcing or self.settings.edition_rename):
            # the question reads as another game's rules (Pathfinder 1e's "standard action", "Dexterity bonus to AC"),
            # a renamed name aside: a rule of a game whose text gmprep does not hold, however the held books' words
            # matched it ("flanking", "rage"). A rename forces the held rule only when nothing else reads so
            reading = self.edition_reading(question, tuple(old for old, _ in forcing))
            if reading is not None:
                probs["edition"] = reading.probability
                if reading.probability >= self.settings.edition_threshold:
                    outcome, section = "not_in_corpus", None
                    foreign, foreign_book = edition.decline_terms(reading, question)
                    foreign_kind, foreign_uses = "edition", None
            quoted = self.quoted_game(question) if outcome != "not_in_corpus" else None
            if quoted is not None:
                # it quotes another game's rule: that rule is asked, whatever words it shares with the held books (a
                # rename it quotes, "flat-footed", is that game's word too: the table holds no Pathfinder 2e text)
                probs["quote"] = float(quoted.count)
                outcome, section = "not_in_corpus", None
                foreign, foreign_book, foreign_kind, foreign_uses = quoted.words, quoted.game, "quote", None
        return Assessment(outcome=outcome, probabilities={k: round(v, 4) for k, v in probs.items()},
                          rule=(foreign or (section.title if section else unnamed)) if outcome == "not_in_corpus" else "",
                          foreign=foreign, foreign_book=foreign_book, foreign_kind=foreign_kind,
                          foreign_uses=foreign_uses,
                          held_books=held_books(self.use.db) if foreign or besides else [],
                          besides=besides if outcome == "answer" else [], asked=asked if outcome == "answer" else "",
                          renamed=renamed, excluded=excluded, excluded_books=excluded_books,
                          selected_books=self.books, section=section,
                          campaign=campaign.named if campaign else "", campaign_book=campaign.book if campaign else "",
                          features={k: round(v, 4) for k, v in x.items()})

    def edition_reading(self, question: str, without: tuple[str, ...] = ()) -> edition.Reading | None:
        """The other-edition reader on ``question`` (``without`` those names), or None when it is off, has no table,
        or the question says it is about Pathfinder 2e (another game's word is then the asker's for a PF2e rule)."""
        if self.settings.edition_threshold >= 1.0 or not edition.available():
            return None
        if otherbooks.names_pathfinder_2e(question):
            return None
        return edition.read(question, without)

    def quoted_game(self, question: str) -> quotes.Quote | None:
        """The other game whose rules text ``question`` quotes (``core/agents/quotes.py``), or None: when none, when
        ``quote_decline`` is off, or when the question says it is about Pathfinder 2e (a quote is then a comparison)."""
        if not self.settings.quote_decline or otherbooks.names_pathfinder_2e(question):
            return None
        return quotes.find(question)

    def edition_decline(self, question: str) -> Assessment | None:
        """not_in_corpus for a question the reader takes for another game's (``edition_threshold``) or that quotes
        another game's rules text (``quote_decline``), else None."""
        reading = self.edition_reading(question)
        if reading is None or reading.probability < self.settings.edition_threshold:
            quoted = self.quoted_game(question)
            if quoted is None:
                return None
            return Assessment(outcome="not_in_corpus", rule=quoted.words, foreign=quoted.words,
                              foreign_book=quoted.game, foreign_kind="quote", held_books=held_books(self.use.db),
                              probabilities={"quote": float(quoted.count)})
        named, game = edition.decline_terms(reading, question)
        return Assessment(outcome="not_in_corpus", rule=named, foreign=named, foreign_book=game,
                          foreign_kind="edition", held_books=held_books(self.use.db),
                          probabilities={"edition": round(reading.probability, 4)})

    def _asked_besides(self, question: str, other: Sequence[OtherBookTerm], hits: Sequence[Hit],
                       renamed: Sequence[tuple[str, str]]) -> str:
        """The sentence that asks a held rule beside ``other`` (other books' names), or "": an asking sentence without
        any of them names the first passage's rule (or its pre-Remaster name), or (``besides_held_names`` > 0) any held
        entry by a name of at least that many words, retrieved or not, outside the sentence's asides and examples ("...
        and if so does it count toward his multiple attack penalty ...?" beside a Battlecry! tactic). A held name that
        is also an entry of the other book named, of another kind, is that book's entry (``besides_homonym``)."""
        terms = [t.shown for t in other]
        held = held_books(self.use.db)
        books = [t.book for t in other]
        top = [hits[0].name, *(old for old, new in renamed if new == hits[0].name)]
        asked = asked_besides(question, terms, top)
        if asked and self.settings.besides_homonym and otherbooks.homonym(hits[0].name, books, held):
            # the held rule's name is also an entry of the other book named, of another kind (Elemental Blast, a
            # Player Core 2 spell and a Rage of Elements class feature, beside "kineticist"): that book's entry.
            # Not a trait the glossary defines for that book (Transcendence): the glossary states it
            asked = ""
        if not asked and self.settings.besides_scene_people:
            asked = self._asked_beside_scene_people(question, other, top)
        if asked or self.settings.besides_held_names <= 0:
            return asked
        sents = sentences(question)
        for i in asking(sents):
            if otherbooks.names_any(sents[i], terms):
                continue  # the sentence names another book's entry: that is what it asks
            for _, phrase in spans(tokens(otherbooks.without_asides(sents[i], examples=True))):
                if len(phrase.split()) >= self.settings.besides_held_names and self.index.is_name(phrase) \
                        and not (self.settings.besides_homonym and otherbooks.homonym(phrase, books, held)):
                    return sents[i]
        return ""

    def _asked_beside_scene_people(self, question: str, other: Sequence[OtherBookTerm], top: Sequence[str]) -> str:
        """The sentence that asks a held rule when every name in ``other`` is a kind of person the scene brings in
        with an article (``otherbooks.scene_person``): an asking sentence naming none of them that names a held entry
        with a capital, or refers back (it, he, she, they ...) to a sentence naming the first passage's rule ``top``."""
        if not other or not all(otherbooks.scene_person(question, t.shown, t.category) for t in other):
            return ""
        terms = [t.shown for t in other]
        sents = sentences(question)
        for i in asking(sents):
            if otherbooks.names_any(sents[i], terms):
                continue
            plain = otherbooks.without_asides(sents[i], examples=True)
            for _, phrase in spans(tokens(plain)):
                if self.index.is_name(phrase) and _capitalised(plain, phrase):
                    return sents[i]
            if i > 0 and otherbooks.refers_back(sents[i], possessive=True, personal=True) and \
                    otherbooks.names_any(sents[i - 1], [re.sub(r"\s*\(.*?\)", "", t) for t in top]):
                return sents[i]
        return ""

    def _other_books(self, question: str) -> list[OtherBookTerm]:
        """Other books' entries the question names, held books' entries the store lacks, then other books named
        by title (a title inside an entry's name is that entry)."""
        held = held_books(self.use.db)
        # a pre-Remaster name the legacy table renames ("Scorching Ray", Blazing Bolt now) is a held rule's, whatever
        # book printed it first
        other = [t for t in other_book_terms(question, self.use, held, self.settings.held_missing_uses)
                 if legacy_target(t.shown) is None]
        if self.settings.book_titles:
            other += [t for t in publication_terms(question, self.use, held)
                      if not any(t.shown in o.shown or o.shown in t.shown for o in other)]
            guide = self.campaign.guide_named(question)  # the organized-play campaign's own book ("PFS2 Guide")
            if guide:
                book = self.campaign.outline.campaign.short
                other.append(OtherBookTerm(shown=guide, name=book, book=book, category="book"))
        return other

    def other_book(self, term: str) -> Assessment:
        """The decision for a question the other-systems guard found to be about a Pathfinder 2e book gmprep
        does not hold (a class of another book, Kingmaker): not_in_corpus, naming the term and the books held."""
        held = held_books(self.use.db)
        # the book, when the catalogues know it: "Kingmaker" is a title, "kineticist" a class of Rage of Elements
        known = otherbooks.book_of(term, held) if self.settings.book_titles else None
        return Assessment(outcome="not_in_corpus", rule=term, foreign=term, held_books=held,
                          foreign_book=known.book if known else "", foreign_kind=_kind(known) if known else "")

    def other_game(self, term: str, game: str, legacy: bool = False) -> Assessment:
        """The decision for a question that asks another game's rule by name (the other-systems guard's
        ``game_term``: "combat reflexes", Pathfinder 1st Edition): not_in_corpus, naming the term, its game and the
        books held: that game's rules text is not among them (``answerability.other_game_not_in_corpus``). ``legacy``:
        the term is a pre-Remaster Pathfinder 2e name the Remaster books dropped (``answerability.guard_legacy``)."""
        return Assessment(outcome="not_in_corpus", rule=term, foreign=term, foreign_book=game,
                          foreign_kind="legacy" if legacy else "game",
                          held_books=held_books(self.use.db))

    def _excluded(self, question: str, hits: Sequence[Hit], outcome: str) -> tuple[str, list[str]]:
        """The entry the question asks about when only books outside the selection hold it: the asked
        phrase (or, for a decline, the question's longest entry name) that no retrieved passage is named
        for and whose entries all sit in unselected books."""
        words = tokens(question)
        hit_names = [" ".join(tokens(h.name)) for h in hits[:TOP_N]]
        asked, asked_named, _, _ = asked_phrase(question, words, self.index)
        # an answer stands when a selected book's passage uses the asked name (a GM Core summary of a
        # Player Core condition answers it); it is overruled when none even mentions it
        phrases = [asked] if asked_named and not any(asked in " ".join(tokens(h.text)) for h in hits[:TOP_N]) else []
        if outcome != "answer":
            phrases += [p for _, p in sorted(spans(words), key=lambda t: -t[0]) if self.index.is_name(p)]
        for phrase in phrases:
            books = self.index.books_of(phrase)
            if books and not books & set(self.books) and not any(_holds(n, phrase) for n in hit_names):
                return phrase, sorted(b for b in books if b)
        return "", []

    def _name_of(self, node_id: str) -> str:
        node = self.store.get(node_id)
        return node.name if node else node_id.rsplit(":", 1)[-1]


def not_in_corpus_text(rule: str, mentions: Sequence[Hit]) -> str:
    """The plain sentence for ``not_in_corpus``: name the rule, say where it lives, how to add it."""
    text = (f"The {rule} rule itself is not in the rules gmprep holds: the passages it found only mention "
            f"“{rule}”, none of them defines it. Add your Player Core PDF with `gmprep books add` "
            "(rules prose such as this is in Player Core and GM Core).")
    return _with_mentions(text, mentions)


def _with_mentions(text: str, mentions: Sequence[Hit]) -> str:
    """``text`` followed by the (up to three) passages that mention the missing rule, cited."""
    if mentions:
        text += "\n\nPassages that mention it: " + "; ".join(h.citation() for h in mentions[:3]) + "."
    return text


def section_text(section: OutlineSection, mentions: Sequence[Hit]) -> str:
    """The not_in_corpus sentence for a core-book section the store does not hold: name it, its book
    and page, and how to add the book."""
    book = section.book.removeprefix("Pathfinder ")
    text = (f"{section.title} ({section.where()}) is not in the rules gmprep holds: the passages it found "
            f"only mention it, none of them states the rule. Add your {book} PDF with `gmprep books add` "
            "to get it.")
    return _with_mentions(text, mentions)


def campaign_text(section: OutlineSection, named: str, book: str, mentions: Sequence[Hit]) -> str:
    """The not_in_corpus sentence for a rule of the organized-play campaign: its guide states it, the held books
    only name the campaign."""
    where = named if named.lower().endswith(" play") else f"{named} play"  # "PFS play", "organized play"
    text = (f"{section.title} in {where} is a rule of the organized-play campaign: its {book} states it "
            f"({section.chapter}), and the books gmprep holds only mention the campaign, so the passages it found "
            f"would answer for a home game, not for {named}. Add the {book} PDF with `gmprep books add` to get it.")
    return _with_mentions(text, mentions)


def foreign_text(term: str, books: Sequence[str], book: str = "", kind: str = "", uses: int | None = None) -> str:
    """The not_in_corpus sentence for another book's term: name it, the book that lists it when known, and the
    books gmprep holds."""
    held = ", ".join(books) or "the core rulebooks"
    if uses is not None:
        said = "never use it" if uses == 0 else (
            f"use it only in passing ({uses} {'entry' if uses == 1 else 'entries'}, none of them for its rules)")
        return (f"This question turns on “{term}”: the books gmprep holds ({held}) {said}, while books gmprep does "
                "not have name their rules with it. Add your book's PDF with `gmprep books add` to get its rules.")
    if kind == "legacy":  # a pre-Remaster name the Remaster dropped (``AnswerabilityJudge.other_game``)
        return (f"“{term}” is a pre-Remaster Pathfinder 2e name: the Remaster books gmprep holds ({held}) do not have "
                "it, so the passages it found would only be tangents. Its rules are in the pre-Remaster book that "
                "printed it; add that book's PDF with `gmprep books add` to get them.")
    if kind == "quote":  # a quoted rule of another game (``core/agents/quotes.py``)
        return (f"This question quotes {book}'s rules text (“{term} …”): gmprep holds the Pathfinder 2e Remaster "
                f"books ({held}), not that game's rules, so the passages it found would only be tangents.")
    if kind == "edition":  # the other-edition reader (``core/agents/edition.py``)
        which = f"a {book}" if book else "another game's (Pathfinder 1st Edition, D&D or Starfinder)"
        words = ", ".join(f"“{w}”" for w in term.split(", ") if w)
        return (f"This reads as {which} rules question{f' ({words})' if words else ''}: gmprep holds the Pathfinder 2e "
                f"Remaster books ({held}), not that game's rules text, so the passages it found would only be "
                "tangents.")
    if book and kind == "game":  # another game's rule (``AnswerabilityJudge.other_game``)
        return (f"“{term}” is {book} terminology: the rule asked is that game's, and its text is not in the Pathfinder "
                f"2e books gmprep holds ({held}), so the passages it found would only be tangents.")
    if book and kind == "book" and book.endswith(f" ({otherbooks.PF1})"):  # the other edition's book, by title
        return (f"This question is about {book.removesuffix(f' ({otherbooks.PF1})')}, a {otherbooks.PF1} book: its "
                f"rules are not in the Pathfinder 2e books gmprep holds ({held}), so the passages it found would "
                "only be tangents.")
    if book and kind == "book":  # another book named by its title
        return (f"This question is about {book}, which is not among the books gmprep holds ({held}), so the "
                f"passages it found would only be tangents. Add your {book} PDF with `gmprep books add` to get its "
                "rules.")
    if book and book in books:  # a held book's entry the store lacks
        what = f"“{term}” ({kind})" if kind else f"“{term}”"
        return (f"{what} is in {book}, but gmprep's copy of {book} does not have its text (its entries only name "
                f"it), so the passages it found would only be tangents. Add your {book} PDF with `gmprep books add` "
                "to get it.")
    if book:
        what = f"“{term}” ({kind})" if kind else f"“{term}”"
        return (f"{what} is from {book}, which is not among the books gmprep holds ({held}), so the passages it "
                f"found would only be tangents. Add your {book.split(' (')[0]} PDF with `gmprep books add` to get "
                "its rules.")
    return (f"“{term}” is not in the rules gmprep holds ({held}): none of these books uses the word, so it "
            "is from a book gmprep does not have. Add your book's PDF with `gmprep books add` to get its rules.")


def decline_text(verdict: Assessment, mentions: Sequence[Hit]) -> str:
    """What a declined answer says, or "" for the plain not-in-books sentence (the caller's)."""
    if verdict.excluded:
        where = " and ".join(verdict.excluded_books) or "another book"
        return (f"“{verdict.excluded}” is in {where}, which is not among the books you selected for this "
                f"workspace (the `books` setting: {', '.join(verdict.selected_books)}). The books you selected "
                "do not answer this; add that book to `books` to get its rules.")
    if verdict.outcome == "not_in_corpus" and verdict.foreign:
        return foreign_text(verdict.foreign, verdict.held_books, verdict.foreign_book, verdict.foreign_kind,
                            verdict.foreign_uses)
    if verdict.outcome == "not_in_corpus" and verdict.section is not None and verdict.campaign:
        return campaign_text(verdict.section, verdict.campaign, verdict.campaign_book, mentions)
    if verdict.outcome == "not_in_corpus" and verdict.section is not None:
        return section_text(verdict.section, mentions)
    if verdict.outcome == "not_in_corpus":
        return not_in_corpus_text(verdict.rule, mentions)
    return ""


def renamed_note(renamed: Sequence[tuple[str, str]]) -> str:
    """"Flat-footed is called Off-Guard in the Remaster." for each renamed rule asked about."""
    return " ".join(f"“{old}” is called {new} in the Remaster books." for old, new in renamed)


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def besides_note(besides: Sequence[tuple[str, str, str]], books: Sequence[str]) -> str:
    """What an answer says first when the question names other books' entries (or other books, or held books'
    entries the store lacks) beside the held rule it asks: where they are from, and that the answer is the held
    books' (it does not cover them)."""
    if not besides:
        return ""
    titles = [f"“{term}”" for term, _, kind in besides if kind == "book"]
    missing = [(term, book, kind) for term, book, kind in besides if kind != "book" and book in books]
    other = [(term, book, kind) for term, book, kind in besides if kind != "book" and book not in books]
    parts = []
    for group, tail in ((other, "which gmprep does not hold"), (missing, "but gmprep's copy does not have the text")):
        if group:
            named = [f"“{term}” ({kind})" if kind else f"“{term}”" for term, _, kind in group]
            # the guard's name with no book in the catalogues: "another book"
            named_books = sorted({book for _, book, _ in group if book})
            where = _and(named_books) if named_books else "another book"
            parts.append(f"{_and(named)} {'is' if len(named) == 1 else 'are'} "
                         f"{'from' if group is other else 'in'} {where}, {tail}")
    if titles:
        parts.append(f"{_and(titles)} {'is a book' if len(titles) == 1 else 'are books'} gmprep does not hold")
    one = len(besides) == 1
    held = ", ".join(books) or "the core rulebooks"
    return f"{'; '.join(parts)}, so this does not cover {'it' if one else 'them'}; the books it holds ({held}) say:"


def answer_note(verdict: Assessment) -> str:
    """What an answer says before its text: the Remaster names of renamed rules, and other books' entries named
    beside the rule asked ("" when neither)."""
    return " ".join(n for n in (renamed_note(verdict.renamed), besides_note(verdict.besides, verdict.held_books)) if n)
