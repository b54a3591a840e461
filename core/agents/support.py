"""Is each sentence of an answer supported by the passage(s) it cites? The one owner of that check.

An answer is split into sentences (``split_sentences``); each keeps the citation markers it carries,
``[1]`` (the n-th passage the answer was given) or ``[pf2e:condition:frightened]`` (a source id).
A sentence is a *claim* unless it is structurally not one: a question, a lead-in ending in ":", or
an uncited sentence of fewer than ``MIN_CLAIM_WORDS`` content words ("I hope this helps."); a sentence
that cites a passage asserts something by citing it. A claim is judged against the text of the
passages it cites:

- no citation, or a citation to no passage the answer was given -> unsupported (nothing to check);
- a number the sentence states that no cited passage states -> unsupported ("frightened 2" against a
  passage that only says "frightened 1"): numbers decide outcomes in these rules, and a wrong number
  is the failure a GM cannot see;
- in a sentence the model wrote, a number the cited passages state only beside other words -> unsupported ("52 gp
  per month" where the table's 52 gp is the Year column; a table's number is beside its column's header only,
  a prose number within four words); a number the question gave is the asker's and anchored anywhere;
- a claim that names another of the answer's passages by its entry name (two words or more: "Gale Blast"),
  where none of its cited passages names or writes it, -> unsupported ("The Gale Blast spell can knock creatures
  prone [1]" citing Gust of Wind): a small model moves one entry's rule onto its neighbour in the same words, and
  word overlap cannot see it (``named_elsewhere``);
- otherwise a logistic score over agreement features decides (``support.json`` beside this file
  holds the weights, fitted on hand judgements; see docs/faithfulness.md): the share of the
  sentence's content stems the passage holds, the share of its numbers that sit next to the same
  words in the passage, and the project's cross-encoder (kg reranker) read on (sentence, passage
  window). Which features are used is chosen by measurement (``gmprep eval answers --faithfulness``).

- with a reader (``SupportChecker(reader=...)``: the answering model's yes/no on the claim and its cited passages'
  sentences around it (``reader_excerpt``),
  ``llm.support_reader``), a claim the model wrote that the score keeps is struck when a second logistic over the
  score and the model's reading (``support_reader.json``, fitted on the hand judgements' calibration halves) says
  unsupported: the model sees a rule moved to the wrong subject or contradicted where word overlap cannot.

The eval scores generated answers with it; the runtime can mark unsupported sentences with it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, Field

from gmprep.common.text import clean_markdown, content_stems, content_words, stem, table_cells, words

MIN_CLAIM_WORDS = 3  # fewer content words than this: not a statement about the rules
WINDOW_CHARS = 400  # a passage is read by the cross-encoder in windows of about this many characters
# An answer's "Yes," is its verdict, not a word the passage must hold (as "No" is, a stop word): "Yes, a flanked
# creature becomes off-guard [3]" covered 0.6 of its words by Flanking, below the score's 0.62, and was struck
ANSWER_WORDS = frozenset({"yes"})
LOCAL_SENTENCES = 2  # local_coverage reads this many consecutive sentences of a passage at a time

# [1], [1, 2], [pf2e:condition:frightened], [notes:x.md#y]; a markdown link [text](url) is not a marker
_MARKER = re.compile(r"\[([^\[\]]{1,120})\](?!\()")
_ID = re.compile(r"^[a-z0-9]+:\S+$")
# a sentence ends at . ! ? (with any markers after it) before whitespace and a capital, a digit, a
# bullet or markdown emphasis; "p. 83" and "e.g. a" do not end one (lowercase / digit after "p.")
_END = re.compile(r"(?<![A-Z.][a-z])(?<!\b[a-zA-Z])[.!?](?:\s*\[[^\[\]]{1,120}\](?!\())*(?=\s+[A-Z*\"'(\[]|\s*$)")
_ACRONYM = re.compile(r"\b[A-Z]{2}\b")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_NUMBER = re.compile(r"(?<![\w.])[+\u2212\u2013-]?(\d+(?:\.\d+)?)(?:st|nd|rd|th)?\b")
# number words a sentence may use where the rules text writes a digit ("one extra action" / "1 additional")
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_NUMBER_WORDS.update({"once": "1", "twice": "2", "half": "half", "double": "2"})


class Passage(BaseModel):
    """One passage an answer was given, in the order it was numbered."""

    source_id: str
    name: str = ""
    text: str


class SentenceSupport(BaseModel):
    """The verdict on one sentence."""

    index: int
    text: str
    kind: str = "text"  # text / heading / quote (see Sentence)
    cited: list[str] = Field(default_factory=list)  # source ids the sentence cites (resolved)
    claim: bool
    supported: bool | None  # None: not a claim
    score: float | None = None  # the calibrated probability of support (None when a rule decided)
    reason: str = ""  # "no citation", "number not in passage", "names another passage's entry", "score", "not a claim"
    features: dict[str, float] = Field(default_factory=dict)


class SupportReport(BaseModel):
    """All sentences of one answer and the share of its claims that are supported."""

    sentences: list[SentenceSupport]

    @property
    def claims(self) -> list[SentenceSupport]:
        return [s for s in self.sentences if s.claim]

    @property
    def supported_share(self) -> float | None:
        """Supported claims / claims (None for an answer with no claim)."""
        claims = self.claims
        return sum(bool(s.supported) for s in claims) / len(claims) if claims else None


class Sentence(BaseModel):
    """A sentence of an answer and the raw markers it carries. ``kind``: ``text``; ``heading``, a line
    that starts with a marker ("[1] **Frightened** (condition; Player Core)": it names a source); or
    ``quote``, a blockquote line under such a heading (it quotes that source: the heading's markers)."""

    text: str
    markers: list[str]
    kind: str = "text"


_QUOTE = re.compile(r"^\s*>\s?")
_LEADING_MARKER = re.compile(r"^\[([^\[\]]{1,120})\]")


def split_sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` in order: each line (a bullet is its own sentence) cut after . ! ?
    (citation markers that follow the stop stay with the sentence before it). A quoted passage (a
    heading line starting with ``[n]``, then ``>`` lines) is attributed to the heading's source."""
    out: list[Sentence] = []
    quoting: list[str] = []  # the markers of the last source heading, while its quote lasts
    for line in text.splitlines():
        quoted = bool(_QUOTE.match(line))
        line = _BULLET.sub("", _QUOTE.sub("", line)).strip()
        if not quoted:
            quoting = []
        if not line:
            continue
        lead = _LEADING_MARKER.match(line)
        if not quoted and lead and _is_marker(lead.group(1)):
            quoting = [lead.group(1).strip()]
            out.append(Sentence(text=line, markers=list(quoting), kind="heading"))
            continue
        start = 0
        pieces = []
        for m in _END.finditer(line):
            pieces.append(line[start : m.end()])
            start = m.end()
        pieces.append(line[start:])
        for piece in pieces:
            piece = piece.strip()
            if not piece:
                continue
            markers = [m.group(1).strip() for m in _MARKER.finditer(piece)]
            markers = [x for x in markers if _is_marker(x)]
            if not content_words(_strip_markers(piece)):
                if markers and out and not quoted:
                    out[-1].markers.extend(markers)  # a lone "[2]" after a sentence belongs to it
                continue  # "...", a lone marker: nothing to judge
            if quoted and quoting:
                out.append(Sentence(text=piece, markers=markers or list(quoting), kind="quote"))
            else:
                out.append(Sentence(text=piece, markers=markers))
    return out


def _is_marker(inner: str) -> bool:
    parts = [p.strip() for p in inner.split(",")]
    return all(p.isdigit() or _ID.match(p) for p in parts if p)


def _strip_markers(text: str) -> str:
    return _MARKER.sub(lambda m: "" if _is_marker(m.group(1)) else m.group(0), text)


_SPACE_PUNCT = re.compile(r"\s+([.!?,;:])")


def unmarked(sentence: str) -> str:
    """``sentence`` as read without its markers: single-spaced, no space left before punctuation where a marker stood
    ("grabbed [1], immobilized" -> "grabbed, immobilized")."""
    return " ".join(_SPACE_PUNCT.sub(r"\1", _strip_markers(sentence)).split())


def resolve(markers: Sequence[str], passages: Sequence[Passage]) -> list[str]:
    """The source ids the markers point at: ``[n]`` -> the n-th passage, an id -> itself when the
    answer was given that passage. Markers that point nowhere are dropped."""
    ids = {p.source_id for p in passages}
    out: list[str] = []
    for marker in markers:
        for part in (p.strip() for p in marker.split(",")):
            if part.isdigit():
                n = int(part)
                if 1 <= n <= len(passages):
                    out.append(passages[n - 1].source_id)
            elif part in ids:
                out.append(part)
    return list(dict.fromkeys(out))


def is_claim(sentence: str, cites: bool = False) -> bool:
    """Structurally a statement about the rules: not a question, not a lead-in ending in ":", and either
    citing a passage (citing is asserting: "Quickened [1]." answers a question) or at least
    ``MIN_CLAIM_WORDS`` content words."""
    raw = _strip_markers(sentence).strip()
    if raw.startswith("~~") and raw.endswith("~~"):
        return False  # struck through: retracted, not asserted
    plain = clean_markdown(raw).strip().rstrip("*_ ")
    if not plain or plain.endswith("?") or plain.endswith(":"):
        return False
    n = len(content_words(plain))
    return n >= 1 if cites else n >= MIN_CLAIM_WORDS


# ----- features ----------------------------------------------------------------------------------
def numbers(text: str) -> list[tuple[str, int]]:
    """The numbers ``text`` states, as (value, word position), number words read as digits."""
    toks = _tokens(text)
    return [(t, i) for i, t in enumerate(toks) if t[0].isdigit()]


def _tokens(text: str) -> list[str]:
    """Words with numbers normalised: "+2", "2nd", "two" -> "2"; "1/2" stays two numbers."""
    text = clean_markdown(_strip_markers(text))
    out = []
    for w in words(text):
        m = _NUMBER.fullmatch(w)
        if m:
            out.append(m.group(1))
        elif w in _NUMBER_WORDS and _NUMBER_WORDS[w] != "half":
            out.append(_NUMBER_WORDS[w])
        else:
            out.append(w)
    return out


def number_features(sentence: str, passage: str, given: frozenset[str] = frozenset()) -> tuple[float, float]:
    """(share of the sentence's numbers that the passage states anywhere, share that the passage states
    next to one of the same words: "frightened 2" needs a 2 near "frightened"). (1, 1) with no numbers.
    In the passage's prose "next to" is within four words; a number in one of its tables is next to its column's
    header only ("Year 52 gp" is no month's cost, though the Month column sits beside it).
    ``given``: numbers the question states, anchored wherever the sentence repeats them (the asker's value)."""
    said = numbers(sentence)
    if not said:
        return 1.0, 1.0
    s_toks = _tokens(sentence)
    stated = {t for t in _tokens(passage) if t[0].isdigit()}
    prose, cells = table_cells(passage)
    p_toks = _tokens(prose)
    # a two-letter word in capitals is the rules' abbreviation ("-1 to AC", "DC 15"), as telling as a longer word
    acronyms = {a.lower() for a in _ACRONYM.findall(sentence)}
    anchors: dict[str, list[set[str]]] = {}
    p_stems = [stem(t) for t in p_toks]
    for j, t in enumerate(p_toks):
        if t[0].isdigit():
            anchors.setdefault(t, []).append(set(p_stems[max(0, j - 4) : j + 5]))
    for label, head, cell in cells:
        column = {stem(t) for t in _tokens(head or label) if not t[0].isdigit()}
        for value, _ in numbers(cell):
            anchors.setdefault(value, []).append(column)
    anywhere = anchored = 0
    for value, i in said:
        if value not in stated:
            continue
        anywhere += 1
        if value in given:
            anchored += 1
            continue
        near = {stem(t) for t in s_toks[max(0, i - 3) : i + 4]
                if not t[0].isdigit() and (len(t) >= 3 or t in acronyms)}
        if any(near & words for words in anchors.get(value, [])):
            anchored += 1
    return anywhere / len(said), anchored / len(said)


def coverage(sentence: str, passage: str) -> float:
    """Share of the sentence's content stems (numbers apart) that the passage holds."""
    s = {x for x in content_stems(_strip_markers(sentence), ANSWER_WORDS) if not x[0].isdigit()}
    if not s:
        return 1.0
    return len(s & content_stems(passage)) / len(s)


# a one-word entry name ("Knock", "Goblin") is also an ordinary word ("knock creatures prone", "the goblin"); it names
# the entry when written with its capital inside the sentence ("is Fireball", "try to Escape"); two words or more always
NAME_MIN_WORDS = 2
_WORD = re.compile(r"[\w'’-]+")


def _written_as_name(name: str, sentence: str) -> bool:
    """``sentence`` writes the one-word ``name`` capitalised past its first word (not just at the sentence's start)."""
    found = _WORD.findall(clean_markdown(_strip_markers(sentence)))
    return name[:1].isupper() and name in found[1:]
_PAREN = re.compile(r"\s*\([^()]*\)")
_NON_WORD = re.compile(r"[^a-z0-9']+")


def _spaced(text: str) -> str:
    """``text`` lowercased to its words, space-separated and space-padded, for whole-phrase lookups."""
    return f" {_NON_WORD.sub(' ', clean_markdown(_strip_markers(text)).lower()).strip()} "


def named_elsewhere(sentence: str, cited: Sequence[str], passages: Sequence[Passage]) -> list[str]:
    """The names of the answer's other passages (``NAME_MIN_WORDS`` words or more, a parenthesis aside) that
    ``sentence`` writes while none of the passages it cites (``cited``: source ids) names or writes them: the
    claim speaks of another entry than the one it cites."""
    said = _spaced(sentence)
    held = _spaced("\n".join(f"{p.name}\n{p.text}" for p in passages if p.source_id in cited))
    out = []
    for p in passages:
        if p.source_id in cited:
            continue
        name = _PAREN.sub("", p.name).strip()
        key = _spaced(name)
        if key not in said or key in held or name in out:
            continue
        if len(key.split()) >= NAME_MIN_WORDS or _written_as_name(name, sentence):
            out.append(name)
    return out


def local_coverage(sentence: str, passages: Sequence[str], span: int = LOCAL_SENTENCES) -> float:
    """The best ``coverage`` of ``sentence`` by ``span`` consecutive sentences of one passage: a claim is stated in
    one place; one whose words are gathered from across an entry (the save from one line, the condition from
    another, the subject from the name) is a claim the entry does not make."""
    s = {x for x in content_stems(_strip_markers(sentence), ANSWER_WORDS) if not x[0].isdigit()}
    if not s:
        return 1.0
    best = 0.0
    for passage in passages:
        parts = _sentences_of(passage)
        for i in range(max(1, len(parts) - span + 1)):
            best = max(best, len(s & content_stems(" ".join(parts[i:i + span]))) / len(s))
    return best


def _sentences_of(text: str, stops: str = ".!?;") -> list[str]:
    """The passage's sentences (split after any of ``stops`` and at line breaks), markdown read as plain text."""
    out: list[str] = []
    split = re.compile(rf"(?<=[{re.escape(stops)}])\s+")
    for para in clean_markdown(text).split("\n"):
        out.extend(x.strip() for x in split.split(para.strip()) if x.strip())
    return out


def windows(text: str, size: int = WINDOW_CHARS) -> list[str]:
    """The passage in consecutive windows of whole paragraphs/sentences of about ``size`` characters."""
    parts = _sentences_of(text, ".!?")
    out: list[str] = []
    cur = ""
    for part in parts:
        if cur and len(cur) + len(part) > size:
            out.append(cur)
            cur = ""
        cur = f"{cur} {part}".strip()
    if cur:
        out.append(cur)
    return out or [text[:size]]


class SupportModel(BaseModel):
    """Logistic regression over named features, as shipped in ``support.json``."""

    features: list[str]
    weights: list[float]
    bias: float
    threshold: float = 0.5
    manifest: dict = Field(default_factory=dict)

    def probability(self, feats: dict[str, float]) -> float:
        z = self.bias + sum(w * feats[f] for f, w in zip(self.features, self.weights, strict=True))
        return 1.0 / (1.0 + math.exp(-z))


@lru_cache(maxsize=1)
def shipped_model() -> SupportModel:
    """The weights fitted on the calibration half of the hand judgements (``support.json``)."""
    ref = resources.files("gmprep.core.agents") / "support.json"
    return SupportModel.model_validate(json.loads(ref.read_text(encoding="utf-8")))


class ReaderWeights(BaseModel):
    """The second logistic (``support_reader.json``): the check's score as a logit and the model's reading."""

    check: float
    model: float
    bias: float
    threshold: float = 0.5
    manifest: dict = Field(default_factory=dict)

    def probability(self, score: float, reading: float) -> float:
        p = min(max(score, 1e-4), 1 - 1e-4)
        z = self.check * math.log(p / (1 - p)) + self.model * reading + self.bias
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))


@lru_cache(maxsize=1)
def reader_weights() -> ReaderWeights:
    """The reader's weights, fitted by ``bench/llm_support_judge.py report`` (docs/faithfulness.md)."""
    ref = resources.files("gmprep.core.agents") / "support_reader.json"
    return ReaderWeights.model_validate(json.loads(ref.read_text(encoding="utf-8")))


# What the model is asked about one claim (the bench measured this wording; bench/llm_support_judge.py uses it too)
READER_SYSTEM = "You check a claim against rules passages. Answer only yes or no."
READER_ASK = "Do the passages state this claim, with the same subject and the same numbers? Answer yes or no."
# each cited passage: the whole sentences around the claim within this many characters (``reader_excerpt``; the first
# 1,400 characters read as well for a quarter more time: docs/faithfulness.md)
READER_CHARS = 600


def reader_excerpt(sentence: str, text: str, chars: int) -> str:
    """At most ``chars`` characters of ``text`` for the reader: the whole text when it fits, else whole sentences
    around the one that shares most of the claim's content words (the place a claim is stated, ``local_coverage``),
    taken alternately after and before it. Linear in the passage."""
    if len(text) <= chars:
        return text
    claim = {x for x in content_stems(_strip_markers(sentence), ANSWER_WORDS) if not x[0].isdigit()}
    parts = _sentences_of(text)
    if not parts:
        return text[:chars]
    best = max(range(len(parts)), key=lambda i: (len(claim & content_stems(parts[i])), -i))
    lo, hi, size = best, best + 1, len(parts[best])
    while True:
        grown = False
        for side in ("after", "before"):
            k = hi if side == "after" else lo - 1
            if 0 <= k < len(parts) and size + 1 + len(parts[k]) <= chars:
                size += 1 + len(parts[k])
                lo, hi = (lo, hi + 1) if side == "after" else (lo - 1, hi)
                grown = True
        if not grown:
            break
    return " ".join(parts[lo:hi])[:chars]


def reader_prompt(sentence: str, passages: Sequence[tuple[str, str]], chars: int = READER_CHARS,
                  head: bool = False) -> list[dict[str, str]]:
    """The chat messages asking whether ``passages`` ((name, text), at most three) state ``sentence``, each cut to
    ``chars`` characters around the claim (``reader_excerpt``), or to its first ``chars`` with ``head`` (the
    first prompt measured)."""
    cut = (lambda t: t[:chars]) if head else (lambda t: reader_excerpt(sentence, t, chars))
    body = "\n\n".join(f"Passage {i + 1}: {name}\n{cut(text)}" for i, (name, text) in enumerate(passages[:3]))
    claim = " ".join(clean_markdown(_strip_markers(sentence)).split())
    return [{"role": "system", "content": READER_SYSTEM},
            {"role": "user", "content": f"{body}\n\nClaim: {claim}\n\n{READER_ASK}"}]


Reader = Callable[[list[dict[str, str]]], "float | None"]


class SupportChecker:
    """Scores sentences against their cited passages. ``reranker``: a ``kg.reranker.Reranker`` (or
    anything with ``score(query, passages)``), loaded on first use when the model needs it."""

    anchored_numbers = True  # the rule "a number beside other words is unsupported" (off only to measure without it)
    recite_new_words = True  # re-cite only to a passage holding a word the claim's own passages lack (off to measure)

    def __init__(self, model: SupportModel | None = None, reranker=None, embedder=None, device: str | None = None,
                 reader: Reader | None = None):
        self.model = model or shipped_model()
        # the answering model's yes/no on a prompt (``reader_prompt``): log P(yes) - log P(no), or None
        self.reader = reader
        self._reranker = reranker
        self._embedder = embedder
        self._device = device

    @property
    def embedder(self):
        if self._embedder is None:
            from gmprep.kg.embedder import shared_embedder

            self._embedder = shared_embedder(self._device)
        return self._embedder

    @property
    def reranker(self):
        if self._reranker is None:
            from gmprep.kg.reranker import shared_reranker

            self._reranker = shared_reranker(device=self._device)
        return self._reranker

    def features(self, sentence: str, texts: Sequence[str], names: Sequence[str] | None = None,
                 given: str = "") -> dict[str, float]:
        """The agreement features of ``sentence`` against the union of the cited passages ``texts``: the
        lexical ones always, the model ones (``cross_encoder``, ``cosine``) when in ``names`` (None: all).
        A model feature is the best over the passage windows: a sentence restates one part of an entry.
        ``given``: the question; a number it states ("frightened 2") is the asker's, not a claim the
        passages must print (they state the rule for any value)."""
        joined = "\n".join(texts)
        asked = frozenset(v for v, _ in numbers(given)) if given else frozenset()
        num_any, num_anchored = number_features(sentence, f"{joined}\n{given}" if given else joined, asked)
        feats = {"coverage": coverage(sentence, joined), "numbers_any": num_any, "numbers_anchored": num_anchored}
        if names is None or "local_coverage" in names:
            feats["local_coverage"] = local_coverage(sentence, texts)
        plain = clean_markdown(_strip_markers(sentence))
        wins = [w for t in texts for w in windows(t)] or [""]
        if names is None or "cross_encoder" in names:
            feats["cross_encoder"] = max(self.reranker.score(plain, wins))
        if names is None or "cosine" in names:
            vecs = self.embedder.encode([plain, *wins])
            feats["cosine"] = float((vecs[1:] @ vecs[0]).max())
        return feats

    def recite(self, sentence: str, passages: Sequence[Passage], given: str = "") -> str | None:
        """``sentence`` citing the one passage that states it, when its own citations do not: the same
        claim with its markers replaced by ``[m]`` for the first passage ``m`` the check finds it supported
        by (a small model often states a passage's fact and cites its neighbour). None when no passage does."""
        plain = _strip_markers(sentence).rstrip()
        stop = len(plain) - len(plain.rstrip(".!?"))
        body, end = (plain[:-stop], plain[-stop:]) if stop else (plain, "")
        body = unmarked(body)
        # the passage is found by the score alone, and the model (``reader``) reads only that one: a struck claim
        # costs one more reading, not one per passage (each a new prompt, nothing to reuse from the cache)
        sents = split_sentences(sentence)
        own = resolve(sents[0].markers, passages) if sents else []
        # the claim's words its own passages do not hold are why it was struck: another passage states it only if it
        # holds one of them ("No, they cannot cast spells while grabbed [1] ... or restrained [2]" struck, then
        # Escape, which says "grabbed, immobilized, or restrained" but nothing of spells, kept it; a claim that cites
        # nothing has every word missing)
        by_id = {p.source_id: p for p in passages}
        claim = {x for x in content_stems(body, ANSWER_WORDS) if not x[0].isdigit()}
        missing = claim - content_stems(" ".join(by_id[i].text for i in own if i in by_id)) if own else claim
        for m in range(1, len(passages) + 1):
            if own == [passages[m - 1].source_id]:
                continue  # the passage it cited already: the check has struck it there
            if self.recite_new_words and missing and \
                    len(missing & content_stems(passages[m - 1].text)) * 2 < len(missing):
                continue
            candidate = f"{body} [{m}]{end}"
            if self._kept_alone(candidate, passages, given, read=False):
                return candidate if self.reader is None or self._kept_alone(candidate, passages, given) else None
        return None

    def _kept_alone(self, sentence: str, passages: Sequence[Passage], given: str, read: bool = True) -> bool:
        verdicts = [v for v in self.check(sentence, passages, given, read=read).sentences if v.claim]
        return len(verdicts) == 1 and bool(verdicts[0].supported)

    def check(self, text: str, passages: Sequence[Passage], given: str = "", read: bool = True) -> SupportReport:
        """The verdict on every sentence of ``text`` given the numbered ``passages`` (and the question,
        ``given``, whose own numbers a sentence may repeat). ``read=False``: the score's verdict, without the
        reader."""
        by_id = {p.source_id: p for p in passages}
        out: list[SentenceSupport] = []
        for i, sent in enumerate(split_sentences(text)):
            cited = resolve(sent.markers, passages)
            if sent.kind == "heading" or not is_claim(sent.text, bool(sent.markers)):
                out.append(SentenceSupport(index=i, text=sent.text, kind=sent.kind, cited=cited, claim=False,
                                           supported=None, reason="not a claim"))
                continue
            if not cited:
                out.append(SentenceSupport(index=i, text=sent.text, kind=sent.kind, claim=True, supported=False,
                                           reason="no citation"))
                continue
            elsewhere = named_elsewhere(sent.text, cited, passages)
            if elsewhere:
                out.append(SentenceSupport(index=i, text=sent.text, kind=sent.kind, cited=cited, claim=True,
                                           supported=False, reason="names another passage's entry"))
                continue
            feats = self.features(sent.text, [by_id[c].text for c in cited], self.model.features, given)
            if feats["numbers_any"] < 1.0:
                out.append(SentenceSupport(index=i, text=sent.text, kind=sent.kind, cited=cited, claim=True,
                                           supported=False, reason="number not in passage", features=feats))
                continue
            if sent.kind == "text" and feats["numbers_anchored"] < 1.0 and self.anchored_numbers:
                # a number the passage states, but beside other words: another row, degree or entry's number
                # ("52 gp per month" from the Year column); the quoted passages' own table rows are exempt
                out.append(SentenceSupport(index=i, text=sent.text, kind=sent.kind, cited=cited, claim=True,
                                           supported=False, reason="number beside other words", features=feats))
                continue
            p = self.model.probability(feats)
            supported, reason = p >= self.model.threshold, "score"
            if supported and read and self.reader is not None and sent.kind == "text":
                # what the model wrote, read again by the model: kept only if the second logistic agrees. Quoted
                # passage lines are the passages' own words and never read
                reading = self.reader(reader_prompt(sent.text, [(by_id[c].name, by_id[c].text) for c in cited]))
                if reading is not None:
                    feats["model_reading"] = round(reading, 4)
                    weights = reader_weights()
                    if weights.probability(p, reading) < weights.threshold:
                        supported, reason = False, "the model reads it as unsupported"
            out.append(SentenceSupport(index=i, text=sent.text, kind=sent.kind, cited=cited, claim=True,
                                       supported=supported, score=round(p, 4), reason=reason, features=feats))
        return SupportReport(sentences=out)
