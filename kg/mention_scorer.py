"""Deciding, in context, whether a candidate rule name in a note is meant as the rule.

The scanner (markdown-aware, ``server``/``kg`` side) proposes candidates: a span of the note whose words
match an entry name (exactly, inflected, plural or through a legacy name). ``MentionScorer`` gives each a
confidence in 0..1 from the evidence a GM's eye uses, read from a bounded window around the span (so the
cost per candidate is constant and a scan stays linear in the note's length):

- the entry: its type, how many words its name has, how common its words are in ordinary English
  (zipf frequencies taken from ``wordfreq`` at training time and stored in the model file);
- the writing: case (capital inside a sentence, all lowercase, exact case of the entry name), sentence
  start, bold/italic, link text, heading, list item, table cell (from ``SpanContext``);
- the neighbours: a value after the name ("frightened 2", "deadly d10"), a type word after it
  ("the *flourish* trait"), a determiner before it ("the city gates"), capitalised words glued to it
  ("Hands of the Everlight", "Laughing Shadow"), and how much rule vocabulary is nearby: each word's
  log-odds of appearing in rule prose rather than ordinary English, learned from the corpus against
  ``wordfreq`` (not a hand-written list); the note's own headings are read the same way.

The weights are a logistic regression trained by ``gmprep hover train-scorer`` (``kg/mention_scorer_train.py``)
on automatically labelled corpus text; the model file and its manifest live in ``kg/mention_scorer_model/``.
Scoring is pure Python over a few dozen numbers: no model runs per mention.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from gmprep.common.errors import GmprepError

MODEL_DIR = Path(__file__).with_name("mention_scorer_model")
MODEL_FILE = "mention_scorer.json"
Strictness = Literal["loose", "normal", "strict"]

# How far around a span the scorer reads (characters). Bounded so a scan stays linear.
WINDOW_CHARS = 160
CONTEXT_TOKENS = 8  # words each side whose rule-vocabulary log-odds are averaged

_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019\-]*|\d+")
_VALUE_AFTER = re.compile(r"^[ \t]*(?:\+?\d+\b|d\d+\b|[+-]\d+)")
_SENTENCE_END = re.compile(r"(?:^|[.!?:;|>#\n]|^\s*(?:[-+*]|\d+[.)]))[\s*_\[\"(]*$")
# Grammar words, not rule vocabulary: determiners before a noun, and the connectors inside a longer
# proper name ("Hands of the Everlight", "Order of the Nail").
DETERMINERS = frozenset("the a an this that these those his her their its our my your no some any every".split())
NAME_CONNECTORS = frozenset("of the de du von van la le del".split())
# Type words that follow a name to say which kind of entry is meant ("the grab trait").
TYPE_WORDS = {
    "trait": "trait", "traits": "trait", "spell": "spell", "spells": "spell", "cantrip": "spell",
    "ritual": "spell", "focus": "spell", "feat": "feat", "feats": "feat", "action": "action",
    "actions": "action", "activity": "action", "reaction": "action", "condition": "condition",
    "conditions": "condition", "rule": "rule", "rules": "rule", "creature": "creature",
    "creatures": "creature", "hazard": "hazard", "heritage": "heritage", "ancestry": "ancestry",
    "class": "class", "archetype": "archetype", "background": "background", "item": "equipment",
    "items": "equipment", "rune": "equipment", "runes": "equipment",
    # "Stealth DC", "the enemy's Perception DC": the DC names a statistic, it is not part of a proper name
    "dc": "skill", "dcs": "skill",
}
# Features read over the whole note, not the span's window: the note pass adds their weighted values to
# each candidate's logit before its section and the note's evidence are read (``kg.note_scan.note_logits``).
# ``section_numbers`` / ``note_numbers``: the share of number tokens among the words of the candidate's
# section / of the whole note: combat logs, stat blocks and loot lists are full of numbers, narration is
# not. Only a layer learned from notes (``kg.mention_residual``) weighs them; the corpus model never sees
# a note.
NOTE_FEATURES = ("section_numbers", "note_numbers")
# The local frame of a lowercase candidate: the token just before it and the token just after it (a word,
# lowercased; a number as "<num>"; a punctuation mark; "<start>" / "<end>" at the window's edge; markup
# that wraps a name is skipped). ``frame_logodds`` (in the model file, learned by ``gmprep hover
# train-scorer`` from the corpus's own labels: ``kg.mention_scorer_train.frame_table``) holds each
# frame token's log-odds of surrounding a rule mention rather than an everyday sense, "p:<tok>" before and
# "n:<tok>" after ("a ward" / "ward off", "the familiar" / "familiar with"). A model without the table
# gives no ``frame_lower`` feature and scores as before.
# The kind of thing a trait names: ``creature_kind`` (in the model file, from the corpus's trait lists:
# ``kg.mention_scorer_train.creature_kinds``) holds, per trait entry, the share of the entries carrying it
# that are creatures. A lowercase "zombies" or "gremlins" in narration names the creatures (a rule mention),
# a lowercase "attack" or "water" the everyday word; the type one-hots alone cannot tell the traits apart.
# Features ``creature_kind`` and ``creature_kind_lower`` (times ``lowercase``), weighed by the note-learned
# layer when a refit is given the table (``calibrate --creature-kinds``); a model without it scores as before.
# The noun slot of such a word (``creature_kind_noun_slot`` in the model file, ``calibrate --kind-noun-slot``;
# measured, not shipped: docs/hover.md section 5): a singular creature-kind word directly followed by a
# lowercase noun ("humanoid figure", "giant tick") is an adjective, not the creatures, so
# ``creature_kind_lower`` is 0 there; the plural ("zombies") and a kind word followed by anything else (a
# finite verb "the ooze approaches", a type word "zombie creature", a function word, punctuation) keep it.
# "Noun" is lemminflect's lexicon (``noun_word``).
FRAME_SKIP = frozenset("*_[]()`~")
_FRAME_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\u2019\-]*|\d+|[^\sA-Za-z\d]")
ENTRY_TYPES = (
    "condition", "action", "spell", "trait", "equipment", "creature", "feat", "rule", "class-feature",
    "ancestry", "heritage", "class", "archetype", "background", "hazard",
)


@dataclass(frozen=True, slots=True)
class SpanContext:
    """What the markdown scanner knows about where a span sits. All cheap for the scanner to give.

    ``sentence_start``: None lets the scorer work it out from the text before the span.
    ``segment_start``/``segment_end``: the bounds, in the ``text`` given to ``score``, of the prose
    segment (paragraph, list item, table cell, heading) the span belongs to; the scorer never reads
    past them (None: the whole text, clipped to ``WINDOW_CHARS`` around the span)."""

    in_heading: bool = False
    in_list_item: bool = False
    in_table_cell: bool = False
    bold: bool = False
    italic: bool = False
    in_link_text: bool = False
    in_blockquote: bool = False
    headings: tuple[str, ...] = ()  # enclosing headings, outermost first
    sentence_start: bool | None = None
    segment_start: int | None = None
    segment_end: int | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    """One entry a span could mean, as the scanner matched it."""

    node_id: str
    type: str  # entry type: condition, action, spell, trait, equipment, ...
    name: str  # the entry's name as the corpus spells it
    matched: str  # the span's text as written in the note
    exact_case: bool = False  # the span's case equals the name's (or an alias's)
    inflected: bool = False  # matched through an inflection ("trips", "stood up", "Hunted Prey")
    legacy: bool = False  # matched through a pre-Remaster name ("bag of holding")
    plural: bool = False  # matched through a plural/adjectival form ("goblins", "elven")
    alternatives: int = 1  # how many entries this span could mean


def logit(p: float) -> float:
    """log(p / (1 - p)), clipped so a confidence of 0 or 1 stays finite."""
    p = min(1.0 - 1e-6, max(1e-6, p))
    return math.log(p / (1.0 - p))


@dataclass(frozen=True, slots=True)
class NoteStage:
    """The second look, over the whole note: a candidate's confidence read against the other
    candidates of its section (the part of the note under the same headings). A statblock or a
    house rule puts many confident candidates side by side; narrative prose puts everyday senses of
    rule words there, whose scores sit low together, so the same word needs stronger signs of its
    own. ``conf' = sigmoid(self_weight * logit(conf) + section_weight * mean logit(section) + bias)``,
    plus, when the model learned them, weights on what the rest of the note says about the same entry
    (``evidence``: names from ``kg.note_evidence.EVIDENCE``); all fitted by ``gmprep hover calibrate
    --note-stage`` on the tuning notes."""

    self_weight: float
    section_weight: float
    bias: float
    evidence: tuple[str, ...] = ()
    evidence_weights: tuple[float, ...] = ()

    def adjust(self, conf: float, section_mean_logit: float, evidence: Sequence[float] = ()) -> float:
        return self.adjust_logit(logit(conf), section_mean_logit, evidence)

    def adjust_logit(self, z_own: float, section_mean_logit: float, evidence: Sequence[float] = ()) -> float:
        """``adjust`` of a candidate given by its logit."""
        z = self.self_weight * z_own + self.section_weight * section_mean_logit + self.bias
        for w, x in zip(self.evidence_weights, evidence, strict=False):
            z += w * x
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def to_json(self) -> dict:
        out: dict = {"self_weight": self.self_weight, "section_weight": self.section_weight, "bias": self.bias}
        if self.evidence:
            out["evidence"] = {"features": list(self.evidence), "weights": list(self.evidence_weights)}
        return out

    @classmethod
    def from_json(cls, stage: dict) -> NoteStage:
        from gmprep.kg.note_evidence import EVIDENCE

        ev = stage.get("evidence") or {}
        names = tuple(str(n) for n in ev.get("features", ()))
        weights = tuple(float(w) for w in ev.get("weights", ()))
        if len(names) != len(weights) or any(n not in EVIDENCE for n in names):
            raise ValueError("note stage evidence: unknown features or weights of another length")
        return cls(float(stage["self_weight"]), float(stage["section_weight"]), float(stage["bias"]), names, weights)


class MentionScorer:
    """A logistic model over context features; ``load()`` reads the shipped model."""

    def __init__(self, model: dict) -> None:
        self.features: list[str] = list(model["features"])
        self.weights: list[float] = [float(w) for w in model["weights"]]
        self.bias: float = float(model["bias"])
        self.means: list[float] = [float(x) for x in model.get("means", [0.0] * len(self.features))]
        self.scales: list[float] = [float(x) or 1.0 for x in model.get("scales", [1.0] * len(self.features))]
        self.zipf: dict[str, float] = {k: float(v) for k, v in model["zipf"].items()}
        self.rule_logodds: dict[str, float] = {k: float(v) for k, v in model["rule_logodds"].items()}
        self.link_rate: dict[str, float] = {k: float(v) for k, v in model.get("link_rate", {}).items()}
        self.frame_logodds: dict[str, float] = {k: float(v) for k, v in model.get("frame_logodds", {}).items()}
        self.creature_kind: dict[str, float] = {k: float(v) for k, v in model.get("creature_kind", {}).items()}
        self.kind_noun_slot: bool = bool(model.get("creature_kind_noun_slot"))
        self.thresholds: dict[str, float] = {k: float(v) for k, v in model["thresholds"].items()}
        stage = model.get("note_stage")
        self.note_stage: NoteStage | None = NoteStage.from_json(stage) if stage else None
        if len(self.weights) != len(self.features):
            raise GmprepError("mention scorer model: weights and features differ in length")
        self._index = {f: i for i, f in enumerate(self.features)}
        # w * (x - mean) / scale folded into one coefficient per feature and one intercept
        self._coef = {f: w / sc for f, w, sc in zip(self.features, self.weights, self.scales, strict=True)}
        self._intercept = self.bias - sum(
            w * m / sc for w, m, sc in zip(self.weights, self.means, self.scales, strict=True)
        )
        # the weights of the whole-note features, which ``score`` cannot read from a span's window
        self.note_weights: dict[str, float] = {f: self._coef[f] for f in NOTE_FEATURES if self._coef.get(f)}

    # ---- loading ---------------------------------------------------------------------------
    @classmethod
    def load(cls, path: Path | None = None) -> MentionScorer:
        """The shipped model (or the one at ``path``, a directory or the JSON file)."""
        return _load(str(path) if path is not None else str(MODEL_DIR / MODEL_FILE))

    @property
    def threshold(self) -> float:
        """The calibrated hover threshold (strictness "normal")."""
        return self.thresholds["normal"]

    def threshold_for(self, strictness: Strictness = "normal") -> float:
        """Confidence below which nothing is hovered, for a strictness setting."""
        return self.thresholds.get(strictness, self.thresholds["normal"])

    # ---- scoring ---------------------------------------------------------------------------
    def score(self, text: str, start: int, end: int, candidate: Candidate, ctx: SpanContext | None = None) -> float:
        """Confidence in 0..1 that ``text[start:end]`` is meant as ``candidate``'s rule."""
        feats = self.featurize(text, start, end, candidate, ctx or SpanContext())
        coef = self._coef
        z = self._intercept
        for name, value in feats.items():
            if value:
                z += coef.get(name, 0.0) * value
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def score_batch(
        self, text: str, items: Sequence[tuple[int, int, Candidate, SpanContext | None]]
    ) -> list[float]:
        """``score`` for many spans of one text (the scanner's per-segment call)."""
        return [self.score(text, s, e, c, x) for s, e, c, x in items]

    def featurize(self, text: str, start: int, end: int, cand: Candidate, ctx: SpanContext) -> dict[str, float]:
        """The named feature values of one candidate (also used by training)."""
        return featurize(text, start, end, cand, ctx, self.zipf, self.rule_logodds, self.link_rate,
                         self.frame_logodds, self.creature_kind, self.kind_noun_slot)


@lru_cache(maxsize=4)
def _load(path: str) -> MentionScorer:
    p = Path(path)
    if p.is_dir():
        p = p / MODEL_FILE
    try:
        model = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GmprepError(f"mention scorer model not found: {p} (run `gmprep hover train-scorer`)") from None
    except (OSError, ValueError) as exc:
        raise GmprepError(f"mention scorer model unreadable: {p}: {exc}") from None
    try:
        return MentionScorer(model)
    except (KeyError, TypeError, ValueError) as exc:
        raise GmprepError(f"mention scorer model malformed: {p}: {exc}") from None


# ---- features ----------------------------------------------------------------------------------
def words(text: str) -> list[str]:
    """Lowercased word tokens (apostrophes folded), the unit of the frequency tables."""
    return [w.replace("\u2019", "'").lower().strip("'-") for w in _WORD.findall(text)]


def _word_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _WORD.finditer(text)]


def at_sentence_start(text: str, start: int, lo: int = 0) -> bool:
    """Whether only sentence punctuation, a line start or a list marker precedes ``start``."""
    a = max(lo, start - 40)
    nl = text.rfind("\n", a, start)
    seg = text[nl + 1 if nl >= 0 else a:start]
    if nl < 0 and a > lo and not re.search(r"[.!?:;]\s*[*_\[\"(]*$", seg):
        # the window cut a line: only strong punctuation says "sentence start"
        return False
    return _SENTENCE_END.search(seg) is not None


def _norm(word: str) -> str:
    return word.replace("\u2019", "'").lower().strip("'-")


@lru_cache(maxsize=8192)
def _name_words(name: str) -> tuple[str, ...]:
    return tuple(words(name.split("(")[0]) or words(name))


@lru_cache(maxsize=1024)
def _heading_words(headings: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(words(" ".join(headings[-2:])))


def _pad(xs: list[float], n: int) -> list[float]:
    return (xs + [xs[-1]] * n)[:n] if xs else [0.0] * n


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _frame_token(token: str) -> str | None:
    if token.isdigit():
        return "<num>"
    if token in FRAME_SKIP:
        return None
    return token.replace("\u2019", "'").lower()


def frame_tokens(before: str, after: str) -> tuple[str, str]:
    """The token just before a span and the one just after it (see ``FRAME_SKIP``); ``before`` and
    ``after`` are the window's text on each side, so the cost is bounded by the window."""
    prev = "<start>"
    for tok in reversed(_FRAME_TOKEN.findall(before[-40:])):
        k = _frame_token(tok)
        if k is not None:
            prev = k
            break
    nxt = "<end>"
    for tok in _FRAME_TOKEN.findall(after[:40]):
        k = _frame_token(tok)
        if k is not None:
            nxt = k
            break
    return prev, nxt


@lru_cache(maxsize=4096)
def noun_word(word: str) -> bool:
    """A lowercase word lemminflect's lexicon reads as a countable noun ("figure", "tick", "monster"), not a
    function word ("that", "which": no noun inflections), an auxiliary ("will", "can", "is") nor a finite verb
    form, the verb a singular subject takes ("looks", "approaches", "rose": a past or third-person form)."""
    from lemminflect import getAllInflections, getAllLemmas

    if getAllLemmas(word, upos="AUX"):
        return False
    for verb in getAllLemmas(word, upos="VERB").get("VERB", ()):
        forms = getAllInflections(verb, upos="VERB")
        if word in forms.get("VBD", ()) or word in forms.get("VBZ", ()):
            return False
    return any(getAllInflections(lemma, upos="NOUN") for lemma in getAllLemmas(word, upos="NOUN").get("NOUN", ()))


def featurize(
    text: str, start: int, end: int, cand: Candidate, ctx: SpanContext,
    zipf: dict[str, float], rule_logodds: dict[str, float], link_rate: dict[str, float] | None = None,
    frame_logodds: dict[str, float] | None = None, creature_kind: dict[str, float] | None = None,
    kind_noun_slot: bool = False,
) -> dict[str, float]:
    lo = max(ctx.segment_start if ctx.segment_start is not None else 0, start - WINDOW_CHARS)
    hi = min(ctx.segment_end if ctx.segment_end is not None else len(text), end + WINDOW_CHARS)
    span = text[start:end]
    before, after = text[lo:start], text[end:hi]
    f: dict[str, float] = {}

    # the entry
    etype = cand.type if cand.type in ENTRY_TYPES else "other"
    f[f"type={etype}"] = 1.0
    name_words = _name_words(cand.name)
    n = len(name_words)
    f["multiword"] = 1.0 if n > 1 else 0.0
    zs = [zipf.get(w, 0.0) for w in name_words] or [0.0]
    f["zipf_min"] = min(zs) / 8.0
    f["zipf_max"] = max(zs) / 8.0
    f["zipf_single"] = zs[0] / 8.0 if n == 1 else 0.0
    f["english_word"] = 1.0 if n == 1 and zs[0] > 0 else 0.0
    span_words = words(span)
    # how common the words as written are: the rarest one carries the sense ("stood up" -> "stood")
    f["zipf_span_min"] = min(zipf.get(w, z) for w, z in zip(span_words, _pad(zs, len(span_words)), strict=True)) / 8.0 \
        if span_words else 0.0
    f["inflected"] = float(cand.inflected)
    f["legacy"] = float(cand.legacy)
    plural_form = cand.plural or (
        bool(span_words) and span_words[-1] != name_words[-1] and span_words[-1].endswith("s")
    )
    f["plural"] = float(plural_form)
    f["ambiguous"] = 1.0 if cand.alternatives > 1 else 0.0
    # how often the corpus's authors link this entry where its name occurs ("keyphraseness"):
    # "prone" mostly, "time" or "move" almost never
    rate = (link_rate or {}).get(cand.node_id)
    f["link_rate"] = rate if rate is not None else 0.0
    f["link_rate_unknown"] = 1.0 if rate is None else 0.0

    # the writing
    letters = [c for c in span if c.isalpha()]
    cap = bool(letters) and letters[0].isupper()
    sstart = ctx.sentence_start if ctx.sentence_start is not None else at_sentence_start(text, start, lo)
    wspans = [w for w in re.findall(r"[A-Za-z][A-Za-z'\u2019\-]*", span)]
    all_cap_words = bool(wspans) and all(w[0].isupper() for w in wspans if w.lower() not in NAME_CONNECTORS)
    f["cap_first"] = float(cap)
    f["cap_mid_sentence"] = float(cap and not sstart and not ctx.in_heading)
    f["cap_mid_single"] = f["cap_mid_sentence"] * (1.0 - f["multiword"])
    f["lowercase"] = float(bool(letters) and not any(c.isupper() for c in letters))
    f["all_upper"] = float(len(letters) > 1 and all(c.isupper() for c in letters))
    f["title_case_multi"] = float(all_cap_words and n > 1)
    f["exact_case"] = float(cand.exact_case or span == cand.name)
    f["sentence_start"] = float(sstart)
    f["bold"] = float(ctx.bold)
    f["italic"] = float(ctx.italic)
    f["italic_spell"] = float(ctx.italic and cand.type == "spell")
    f["link_text"] = float(ctx.in_link_text)
    f["heading"] = float(ctx.in_heading)
    f["list_item"] = float(ctx.in_list_item)
    f["table_cell"] = float(ctx.in_table_cell)
    f["emphasis_common"] = float((ctx.bold or ctx.italic) and f["english_word"] > 0)

    # the neighbours
    aw = _word_spans(after)
    bw = _word_spans(before)
    low_after = after.lower().replace("\u2019", "'")
    low_before = before.lower().replace("\u2019", "'")
    if len(low_after) != len(after) or len(low_before) != len(before):  # a letter whose lowercase is longer
        after_words = [_norm(after[a:b]) for a, b in aw]
        before_words = [_norm(before[a:b]) for a, b in bw]
    else:
        after_words = [low_after[a:b].strip("'-") for a, b in aw]
        before_words = [low_before[a:b].strip("'-") for a, b in bw]
    next_word = after[aw[0][0]:aw[0][1]].lower() if aw else ""
    next_gap = after[:aw[0][0]] if aw else ""
    prev_word = before[bw[-1][0]:bw[-1][1]].lower() if bw else ""
    prev_gap = before[bw[-1][1]:] if bw else ""
    f["value_after"] = float(_VALUE_AFTER.match(after) is not None)
    f["value_after_condition"] = f["value_after"] * float(cand.type == "condition")
    tw = TYPE_WORDS.get(next_word) if next_gap.strip(" *_") == "" else None
    f["type_word_after"] = float(tw is not None)
    f["type_word_match"] = float(tw is not None and tw == cand.type)
    f["determiner_before"] = float(prev_word in DETERMINERS and prev_gap.strip() == "")
    f["of_after"] = float(next_word == "of" and next_gap.strip() == "")
    f["possessive"] = float(after[:2] in ("'s", "\u2019s"))
    # a field label ("**Status:** Active", "Class: Bard") names the GM's own field, not a rule
    f["colon_after"] = float(re.match(r"^[*_]*[ \t]*:", after) is not None)
    # capitals explained by a title-case line ("### Investigate the Pyramid") are not evidence
    ls = before.rfind("\n") + 1
    le = after.find("\n")
    line_words = [w for w in re.findall(r"[A-Za-z][A-Za-z'\u2019\-]*", before[ls:] + " " + after[: le if le >= 0 else None])
                  if len(w) > 3]
    f["line_title_case"] = float(
        len(line_words) >= 2 and sum(w[0].isupper() for w in line_words) / len(line_words) >= 0.6
    ) * float(cap)
    # capitalised words glued to the span: part of a longer proper name
    next_cap = bool(aw) and next_gap in (" ", "-") and after[aw[0][0]].isupper() and next_word not in TYPE_WORDS
    prev_cap = (
        bool(bw) and prev_gap in (" ", "-") and before[bw[-1][0]].isupper()
        and not at_sentence_start(before, bw[-1][0]) and prev_word not in DETERMINERS
    )
    # "Hands of the Everlight": a capitalised word, then connectors, then the span
    bridged = False
    k = len(bw) - 1
    while k >= 0 and before[bw[k][0]:bw[k][1]].lower() in NAME_CONNECTORS and before[bw[k][0]].islower():
        k -= 1
    if k < len(bw) - 1 and k >= 0 and before[bw[k][0]].isupper() and cap:
        gap_ok = "\n" not in before[bw[k][0]:] and not re.search(r"[.,;:!?()]", before[bw[k][1]:])
        bridged = gap_ok
    k = 0
    while k < len(aw) and after[aw[k][0]:aw[k][1]].lower() in NAME_CONNECTORS and after[aw[k][0]].islower():
        k += 1
    if 0 < k < len(aw) and after[aw[k][0]].isupper() and cap:
        if "\n" not in after[:aw[k][1]] and not re.search(r"[.,;:!?()]", after[:aw[k][0]]):
            bridged = True
    f["next_cap_glued"] = float(next_cap and cap)
    f["prev_cap_glued"] = float(prev_cap and cap)
    f["cap_name_bridge"] = float(bridged)
    f["in_longer_name"] = float((next_cap or prev_cap or bridged) and cap)
    f["the_before_cap"] = float(prev_word == "the" and cap and not sstart and prev_gap == " ")
    f["the_cap_plural"] = f["the_before_cap"] * f["plural"] * (1.0 - f["multiword"])

    # rule vocabulary nearby (learned log-odds: rule prose vs ordinary English)
    ctx_words = before_words[-CONTEXT_TOKENS:] + after_words[:CONTEXT_TOKENS]
    lods = [rule_logodds.get(w, 0.0) for w in ctx_words if not w.isdigit()]
    f["ctx_rule_mean"] = _mean(lods) / 4.0
    f["ctx_rule_max"] = (max(lods) if lods else 0.0) / 8.0
    f["ctx_rule_count"] = min(4, sum(1 for x in lods if x > 2.0)) / 4.0
    f["ctx_numbers"] = min(3, len(re.findall(r"(?<![A-Za-z])[+-]?\d+", before[-60:] + after[:60]))) / 3.0
    f["ctx_words"] = min(len(ctx_words), 2 * CONTEXT_TOKENS) / (2.0 * CONTEXT_TOKENS)
    wide = [rule_logodds.get(w, 0.0) for w in before_words + after_words if not w.isdigit()]
    f["ctx_rule_wide"] = _mean(wide) / 4.0
    head_words = _heading_words(ctx.headings)
    hl = [rule_logodds.get(w, 0.0) for w in head_words]
    f["heading_rule_mean"] = _mean(hl) / 4.0
    if frame_logodds:
        # the local frame of a lowercase candidate: noun slot ("the familiar", "a ward") or not ("familiar
        # with", "ward off"), as the corpus's labelled mentions and everyday senses frame it
        if f["lowercase"]:
            prev, nxt = frame_tokens(before, after)
            f["frame_lower"] = (frame_logodds.get("p:" + prev, 0.0) + frame_logodds.get("n:" + nxt, 0.0)) / 4.0
        else:
            f["frame_lower"] = 0.0
    if creature_kind:
        # a trait that names a kind of creature, written in lowercase narration ("the zombies shambled")
        ck = creature_kind.get(cand.node_id, 0.0)
        f["creature_kind"] = ck
        f["creature_kind_lower"] = ck * f["lowercase"]
        if kind_noun_slot and ck and f["lowercase"] and not plural_form and next_gap == " " \
                and after[aw[0][0]].islower() and next_word not in TYPE_WORDS and noun_word(next_word):
            f["creature_kind_lower"] = 0.0  # an adjective before its noun: "humanoid figure", "giant tick"
    # interactions the linear model can't form on its own
    f["lower_common"] = f["lowercase"] * f["zipf_single"]
    f["cap_mid_common"] = f["cap_mid_sentence"] * f["zipf_single"]
    f["common_ctx_rule"] = f["zipf_single"] * f["ctx_rule_mean"]
    f["sentstart_common"] = f["sentence_start"] * f["zipf_single"]
    return f
