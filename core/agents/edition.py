"""The other-edition reader: how much a text reads as another game's rules (Pathfinder 1e, D&D, Starfinder 1e)
rather than Pathfinder 2e's, from word n-gram weights learned on both sides' books
(``scripts/fit_other_edition_reader.py`` -> ``data/other-edition-ngrams.json.gz``). Plain Python at run time.

A text's raw score is the sum of the weights of the distinct unigrams and bigrams it contains (an n-gram neither
side's books use weighs nothing: an asker's casual prose is no evidence either way); ``calibration`` turns it into
the probability that a window of the books' text with that score is another game's.
"""
from __future__ import annotations

import gzip
import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "other-edition-ngrams.json.gz"

# English function words (pronouns, determiners, auxiliaries, prepositions, conjunctions): how a text is written,
# not which game's rules it states (Pathfinder 1e writes "he or she", Pathfinder 2e "they"); never weighed, alone or
# as both words of a bigram.
STOP = frozenset("""
a an the this that these those some any each every either neither no none all both few many much more most other
another such own same i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his
himself she her hers herself it its itself they them their theirs themselves one ones what which who whom whose
whatever whichever whoever be am is are was were been being have has had having do does did doing done will would
shall should can could may might must ought not nor and or but if then else so than too very just only also as of
at by for from in into onto on off out over under up down to with without about above below between through during
before after again further once here there when where why how while because until unless although though whether
yet s t d ll m re ve don't doesn't didn't can't won't isn't aren't wasn't weren't i'm i've i'd you're he's she's
it's we're they're that's there's what's let's
""".split())

_BREAK = re.compile(r"[.!?;:()\[\]\"“”\n]+")
_TOKEN = re.compile(r"[a-z0-9]+(?:['’-][a-z0-9]+)*|\d+(?:[.,]\d+)?")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?$")


def tokens(text: str) -> list[str | None]:
    """Lower-case words (numbers as ``#``), ``None`` between clauses (no bigram spans one)."""
    out: list[str | None] = []
    for part in _BREAK.split(text.lower()):
        words = [("#" if _NUMBER.match(w) else w.replace("’", "'")) for w in _TOKEN.findall(part)]
        if words:
            out += words
            out.append(None)
    return out


def ngrams(toks: list[str | None], distinct: bool = True) -> list[tuple[str, ...]]:
    grams: list[tuple[str, ...]] = []
    prev: str | None = None
    for t in toks:
        if t is not None:
            grams.append((t,))
            if prev is not None:
                grams.append((prev, t))
        prev = t
    return list(dict.fromkeys(grams)) if distinct else grams


def raw_score(toks: list[str | None], weights: dict[str, float]) -> float:
    return sum(weights.get(" ".join(g), 0.0) for g in ngrams(toks))


@dataclass
class Reading:
    probability: float
    raw: float
    evidence: list[tuple[str, float]] = field(default_factory=list)  # the question's n-grams, heaviest first


@lru_cache(maxsize=1)
def _table() -> dict:
    with gzip.open(DATA, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def available() -> bool:
    return DATA.exists()


def read(text: str, without: tuple[str, ...] = ()) -> Reading:
    """How much ``text`` reads as another game's rules. ``without``: phrases whose n-grams do not count (a rename the
    caller reads on its own)."""
    table = _table()
    weights: dict[str, float] = table["weights"]
    drop = {" ".join(g) for phrase in without for g in ngrams(tokens(phrase))}
    ev = [(" ".join(g), weights.get(" ".join(g), 0.0)) for g in ngrams(tokens(text))]
    ev = [(g, w) for g, w in ev if w and g not in drop]
    raw = sum(w for _, w in ev)
    cal = table["calibration"]
    z = max(min(cal["a"] * raw + cal["b"], 40.0), -40.0)
    return Reading(1 / (1 + math.exp(-z)), raw, sorted(ev, key=lambda e: -e[1]))


_GAME_NAMES = {"Pathfinder 1e": "Pathfinder 1st Edition / D&D 3.5", "D&D 5e SRD": "D&D 5th Edition",
               "Starfinder 1e": "Starfinder 1st Edition"}


def game(reading: Reading) -> str:
    """The game the question's other-side n-grams are from, when one holds at least two thirds of their weight
    (each n-gram's game: the system whose text uses it at the highest rate, at least twice the next one's); ""
    when no game is clear."""
    table = _table()
    mass: dict[int, float] = {}
    for g, w in reading.evidence:
        if w > 0 and g in table["games"]:
            mass[table["games"][g]] = mass.get(table["games"][g], 0.0) + w
    total = sum(w for _, w in reading.evidence if w > 0)
    if not mass or total <= 0:
        return ""
    best = max(mass, key=lambda k: mass[k])
    return _GAME_NAMES.get(table["systems"][best], table["systems"][best]) if mass[best] >= 2 / 3 * total else ""


def as_written(text: str, gram: str) -> str:
    """``gram`` as ``text`` writes it ("CR", "Dexterity bonus"), or ``gram``."""
    m = re.search(r"(?<![\w-])" + r"[\s]+".join(re.escape(w) for w in gram.split(" ")) + r"(?![\w-])", text, re.IGNORECASE)
    return m.group(0) if m else gram


def shown(reading: Reading, most: int = 3, text: str = "") -> list[str]:
    """The question's heaviest other-side n-grams without a function word or a number, none sharing a word with one
    named before it: what the decline names ("standard action", "full-round"), as ``text`` writes them."""
    out: list[str] = []
    seen: set[str] = set()
    for g, w in reading.evidence:
        if w <= 0 or len(out) >= most:
            break
        words = g.split(" ")
        if any(x in STOP or x == "#" for x in words) or seen & set(words):
            continue
        out.append(as_written(text, g) if text else g)
        seen |= set(words)
    return out


def decline_terms(reading: Reading, text: str) -> tuple[str, str]:
    """What a decline on ``reading`` names: the question's heaviest other-side words as it writes them ("standard
    action, full-round") and the game they are from ("" when no game is clear)."""
    return ", ".join(shown(reading, text=text)), game(reading)
