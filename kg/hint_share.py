"""How much of a name's bonus an entry named inside a question keeps (issue 12): a learned decision.

A forum post names the spells, feats and actions of its story around what it asks ("our cavalier has the
Impressive Mount feat; when the mount ..."), and the asked rule is often named too ("Can I Ready a Hunted
Shot?"). A word count cannot tell the two apart; where and how the name is written can: in the sentence that
asks (ending in "?", or the last one when none does), right after a question word ("how does X", "can I X"),
early or late in the post, capitalised, how many entries the question names, how long it is.

``features`` reads those for each named entry (``QueryAnalysis.spans``); ``HintModel`` is a standardised
logistic regression over them, fitted by ``gmprep.training.hint_share`` on automatically labelled rows (written
questions told long with another entry named in passing, ``training/long_questions.py``: the asked entry is a
positive, the passing one a negative) and shipped in ``hint_share.json`` beside this file with its manifest.
A name keeps ``min(1, p / keep_at)`` of its bonus, ``p`` the model's probability that it is what is asked.
Numpy only at run time: a few dot products a query.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from importlib import resources

import numpy as np
from pydantic import BaseModel, Field

from gmprep.common.errors import GmprepError
from gmprep.common.text import content_stems

FEATURES = (
    "in_ask",  # in a sentence that asks (ends in "?"; the last sentence when none does)
    "after_qword",  # a question word opens the clause it is in, at most QWORD_GAP words before it
    "ask_rel",  # where its sentence (the first asking one naming it) sits among the question's (0 first, 1 last)
    "pos_in_sent",  # its place in that sentence (0 its start, 1 its end)
    "echo",  # share of the name's content words the asking sentences say elsewhere ("... Impressive Mount. When the mount ...")
    "only_ask",  # no asking sentence names any other entry
    "capital",  # written capitalised where a sentence does not start
    "verb",  # an action used as a verb ("Trips"), not a name
    "times",  # log of how often the question names it
    "log_words",  # log of the question's words
    "log_named",  # log of the distinct entries the question names
    "n_asks",  # asking sentences in the question
    "name_words",  # words in the name as written (log)
)
QWORD_GAP = 4
# The English words that open a question; a closed class of the language, not tuned on any set.
_QWORDS = frozenset(
    "how what which when where why who whom whose can could does do did is are was were will would should shall may "
    "might must has have".split()
)
_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=\S)|\n+")
_CLAUSE = re.compile(r"[,;:()\u2014]|\s-\s|\b(?:and|but|or|so|if)\b", re.I)
_TOKEN = re.compile(r"\S+")


def _sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text`` (the split ``kg.query.condense`` reads)."""
    out, at = [], 0
    for m in _SENTENCE.finditer(text):
        if text[at:m.start()].strip():
            out.append((at, m.start()))
        at = m.end()
    if text[at:].strip():
        out.append((at, len(text)))
    return out or [(0, len(text))]


def _words(text: str) -> int:
    return len(_TOKEN.findall(text))


def features(text: str, spans: dict[str, list[tuple[int, int]]], named: dict[str, str]) -> dict[str, np.ndarray]:
    """The ``FEATURES`` row of each entry ``named`` that ``spans`` places in ``text``."""
    sents = _sentences(text)
    asks = [i for i, (a, b) in enumerate(sents) if text[a:b].rstrip().endswith("?")] or [len(sents) - 1]
    n_words = max(1, _words(text))
    n_named = max(1, len(named))

    def sentence_of(pos: int) -> int:
        return next((i for i, (a, b) in enumerate(sents) if a <= pos < b), len(sents) - 1)

    ask_text = " ".join(text[sents[i][0]:sents[i][1]] for i in asks)
    ask_start = [sents[i] for i in asks]
    placed = {nid: sorted(sp) for nid, sp in spans.items() if nid in named and sp}
    in_asks = {nid for nid, sp in placed.items() if any(sentence_of(a) in asks for a, _ in sp)}
    out: dict[str, np.ndarray] = {}
    for nid, sp in placed.items():
        where = [(a, b, sentence_of(a)) for a, b in sp]
        asked = [w for w in where if w[2] in asks]
        a, b, si = (asked or where)[0]
        s0, s1 = sents[si]
        before = text[s0:a]
        clause = _CLAUSE.split(before)[-1] if before.strip() else ""
        lead = [w.strip("\"'(").lower() for w in _TOKEN.findall(clause)]
        after_qword = bool(lead) and lead[0] in _QWORDS and len(lead) <= QWORD_GAP
        sent_words = max(1, _words(text[s0:s1]))
        first = text[a:b][:1]
        starts_sentence = not before.strip()
        stems = content_stems(text[a:b])
        rest = ask_text
        for x, y in sp:  # the asking sentences without the name's own spans
            for s0_, s1_ in ask_start:
                if s0_ <= x < s1_:
                    rest = rest.replace(text[x:y], " ")
        echo = len(stems & content_stems(rest)) / len(stems) if stems else 0.0
        row = [
            float(bool(asked)),
            float(after_qword),
            si / max(1, len(sents) - 1) if len(sents) > 1 else 1.0,
            _words(before) / sent_words,
            echo,
            float(bool(asked) and in_asks == {nid}),
            float(first.isupper() and not starts_sentence),
            float(named.get(nid) == "verb"),
            math.log(len(sp)),
            math.log(n_words),
            math.log(n_named),
            float(len(asks)),
            math.log(max(1, _words(text[a:b]))),
        ]
        out[nid] = np.asarray(row, dtype=np.float64)
    return out


class HintModel(BaseModel):
    """Standardised binary logistic regression over ``FEATURES``, as shipped in ``hint_share.json``."""

    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    manifest: dict = Field(default_factory=dict)

    def probability(self, row: np.ndarray) -> float:
        z = (row - np.asarray(self.mean)) / np.asarray(self.scale)
        return 1.0 / (1.0 + math.exp(-(float(z @ np.asarray(self.coef)) + self.intercept)))

    def shares(self, text: str, spans: dict[str, list[tuple[int, int]]], named: dict[str, str],
               keep_at: float) -> dict[str, float]:
        """``node_id -> share`` of its name bonus for each placed entry of ``named``: ``min(1, p / keep_at)``."""
        rows = features(text, spans, named)
        return {nid: min(1.0, self.probability(row) / max(1e-6, keep_at)) for nid, row in rows.items()}


@lru_cache(maxsize=1)
def shipped() -> HintModel:
    """The shipped model (``kg/hint_share.json``)."""
    ref = resources.files("gmprep.kg") / "hint_share.json"
    model = HintModel.model_validate(json.loads(ref.read_text(encoding="utf-8")))
    if tuple(model.features) != FEATURES:
        raise GmprepError("kg/hint_share.json was fitted on other features: refit it (python -m gmprep.training.hint_share)")
    return model
