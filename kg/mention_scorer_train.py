"""Training the mention scorer (``kg.mention_scorer``) on automatically labelled corpus text.

No hand labels and no word lists: every example is a candidate span that a raw name matcher (every
entry name and variant of ``NameIndex``, leftmost-longest, no guards) finds in the corpus's own entry
texts, labelled by the structure of the corpus:

- **positive**: the entry's text links the candidate's entry (the corpus keeps each entry's outgoing
  links and unresolved link names: the book's authors marked these words as the rule); an italic spell
  name (*fireball*, the books' convention); the entry's own name written as a name (capitalised or in
  italics) in its own text;
- **negative, everyday sense**: an all-lowercase candidate whose entry the text never links anywhere
  (the author did not mean the rule: "powerful wards *hide* a creature", "the city *gates*");
- **negative, part of a proper name**: a candidate inside a longer capitalised run of words (bridged
  by "of"/"the"...) that is not itself an entry name ("Hands of the Everlight"-like organisation,
  deity and place names in lore text), unlinked;
- everything else (an unlinked capitalised word on its own, an unlinked candidate followed by a
  value) is ambiguous and left out.

"How common a word is in ordinary English" is the zipf frequency from the ``wordfreq`` package
(code Apache-2.0, data CC-BY-SA 4.0; only the frequencies of the words of entry names are stored in the
model file). "Rule vocabulary" is each word's log-odds of appearing in the corpus's rule prose rather
than in ordinary English (corpus counts against ``wordfreq`` frequencies), smoothed, kept for the
words the corpus uses often enough.

The model is a class-balanced L2 logistic regression (scikit-learn) over ``kg.mention_scorer.featurize``;
the saved file holds feature names, standardisation, weights, the two tables and the thresholds.
"""

from __future__ import annotations

import json
import logging
import math
import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from gmprep.common.errors import GmprepError
from gmprep.kg.mention_scorer import (
    DETERMINERS,
    MODEL_DIR,
    MODEL_FILE,
    NAME_CONNECTORS,
    Candidate,
    SpanContext,
    at_sentence_start,
    featurize,
    words,
)
from gmprep.kg.names import NameIndex, _plural, _tokens, name_key  # raw matching shares the index's tokens

log = logging.getLogger(__name__)

_JOIN = re.compile(r"[ \t]*(?:[(),][ \t]*)*(?:\n[ \t]*)?(?:[(),][ \t]*)*")
_CAP_RUN = re.compile(
    r"[A-Z][\w'\u2019\-]*(?:(?:[ ](?:of|the|de|du|von|van|la|le|del))*[ ][A-Z][\w'\u2019\-]*)+"
)
_THE_NAME = re.compile(r"(?<![.!?:]\s)\b[Tt]he ([A-Z][a-z]{3,})\b(?! [A-Z])")
# The F-beta for which "normal" and "rescue" are chosen together (``calibrate``). Measured on the tuning
# notes, leaving one GM out (docs/mention-scorer.md): beta 0.5 / 0.75 / 1.0 give out-of-GM precision
# 0.769 / 0.769 / 0.767 at recall 0.764 / 0.764 / 0.778; on all the tuning notes 0.75 keeps the recall
# that 0.5 gives up (0.628 against 0.560 end to end). Between normal's F0.5 and the old floor's F1.
RESCUE_BETA = 0.75
DEFAULT_THRESHOLDS = {"loose": 0.35, "normal": 0.5, "strict": 0.7}


@dataclass
class Example:
    text: str
    start: int
    end: int
    cand: Candidate
    ctx: SpanContext
    label: int
    kind: str  # why: link, italic-spell, self, lower-unlinked, proper-name
    entry: str


# ---- reading markdown context (the training-time stand-in for the scanner's SpanContext) ----------
def markdown_context(text: str, start: int, end: int) -> SpanContext:
    """A ``SpanContext`` read from the line around a span: heading, list, table, bold, italic, link
    text, and the headings above it. Line-local and approximate (the server's scanner gives the
    exact one from markdown-it tokens); linear in the text before the span is fine for training."""
    ls = text.rfind("\n", 0, start) + 1
    le = text.find("\n", end)
    le = len(text) if le < 0 else le
    line = text[ls:le]
    stripped = line.lstrip()
    pre = text[ls:start]
    in_heading = stripped.startswith("#")
    in_list = bool(re.match(r"\s*(?:[-+*]|\d+[.)])\s", line))
    in_table = stripped.startswith("|")
    bold = pre.count("**") % 2 == 1 and "**" in text[end:le]
    singles = re.sub(r"\*\*", "", pre)
    italic = (singles.count("*") % 2 == 1 and "*" in re.sub(r"\*\*", "", text[end:le])) or (
        re.search(r"(?:^|\W)_[^_]*$", pre) is not None and text[end:end + 1] == "_"
    )
    link = pre.rfind("[") > pre.rfind("]") and "]" in text[end:le]
    headings: list[str] = []
    for m in re.finditer(r"(?m)^(#{1,6})\s+(.+)$", text[:ls]):
        level = len(m.group(1))
        headings = [h for h in headings if int(h[0]) < level] + [f"{level}{m.group(2)}"]
    return SpanContext(
        in_heading=in_heading, in_list_item=in_list, in_table_cell=in_table, bold=bold, italic=bool(italic),
        in_link_text=link, headings=tuple(h[1:].strip("*# ") for h in headings),
        segment_start=ls if in_table else None, segment_end=le if in_table else None,
    )


# ---- raw candidates ------------------------------------------------------------------------
def raw_candidates(idx: NameIndex, text: str) -> Iterator[tuple[int, int, list]]:
    """Every leftmost-longest name match the note scanner would consider (names, aliases, plurals,
    verb forms, legacy names), accepted by the rules of thumb or not, with its candidate entries;
    the span is the name alone (a value after it, "frightened 2", stays outside)."""
    for m in idx.matches(text, note_forms=True, skip=True):
        end = getattr(m, "name_end", 0) or m.end
        if m.value is not None and end == m.end:
            cut = max(text.rfind(" ", m.start, m.end), text.rfind("\n", m.start, m.end))
            end = cut if cut > m.start else m.end
        yield m.start, end, m.candidates


def candidate_view(text: str, start: int, end: int, c, alternatives: int) -> Candidate:
    span = text[start:end]
    key = name_key(span)
    name_k = name_key(c.name)
    form = getattr(c, "form", "name")
    return Candidate(
        node_id=c.node_id, type=c.type, name=c.name, matched=span,
        exact_case=span == c.name, inflected=form == "inflected", legacy=c.legacy_name is not None,
        plural=form in ("plural", "adjective") or (form == "name" and key != name_k and c.legacy_name is None),
        alternatives=alternatives,
    )


# ---- labelling -----------------------------------------------------------------------------
EVERYDAY_ZIPF = 4.0  # ~10 uses per million words of ordinary English: a word with an everyday sense


def label_entry(idx: NameIndex, rec: dict, entry_names: set[tuple[str, ...]], zipf=None) -> list[Example]:
    text = rec.get("text") or ""
    links = set(rec.get("links") or [])
    unresolved = {name_key(u) for u in rec.get("unresolved_links") or []}
    own = rec["id"]
    cap_runs = [(m.start(), m.end(), m.group()) for m in _CAP_RUN.finditer(text)]
    out: list[Example] = []
    r = 0
    for start, end, cands in raw_candidates(idx, text):
        span = text[start:end]
        ids = [c.node_id for c in cands]
        ctx = markdown_context(text, start, end)
        if ctx.in_heading:
            continue  # a rules page's section titles say nothing about a note's headings
        linked = [c for c in cands if c.node_id in links]
        chosen = linked[0] if linked else cands[0]
        cand = candidate_view(text, start, end, chosen, len(cands))
        is_lower = not any(ch.isupper() for ch in span)
        while r < len(cap_runs) and cap_runs[r][1] <= start:
            r += 1
        run = cap_runs[r] if r < len(cap_runs) and cap_runs[r][0] <= start and end <= cap_runs[r][1] else None
        in_name = run is not None and _proper_name_run(text, run, start, end, entry_names)
        in_name = in_name and not ctx.in_heading and not ctx.bold and not ctx.in_table_cell
        if own in ids:
            if (not is_lower or ctx.italic) and not in_name:
                out.append(Example(text, start, end, cand, ctx, 1, "self", own))
            continue
        if linked or name_key(span) in unresolved:
            if in_name:
                continue  # a link inside a longer name: the structure disagrees, leave it out
            out.append(Example(text, start, end, cand, ctx, 1, "link", own))
        elif chosen.type == "spell" and _wrapped(text, start, end, "*"):
            out.append(Example(text, start, end, cand, ctx, 1, "italic-spell", own))
        elif in_name:
            out.append(Example(text, start, end, cand, ctx, 0, "proper-name", own))
        elif not is_lower and len(name_key(span)) == 1 and not any(i in links for i in ids) and (
            _wrapped(text, start, end, "**") or (at_sentence_start(text, start) and not ctx.in_heading
                                                and not ctx.bold and not ctx.italic)
        ) and not re.match(r"\s*\+?\d", text[end:end + 4]):
            # a capital the position explains (sentence start, a bold field label) on a word the
            # author never links in this entry: the word's plain sense ("Gates close", "**Effect**")
            out.append(Example(text, start, end, cand, ctx, 0, "start-unlinked", own))
        elif is_lower and not ctx.italic and not ctx.bold and not ctx.in_link_text \
                and not re.match(r"\s*\+?\d", text[end:end + 4]) and not any(i in links for i in ids) \
                and len(name_key(span)) == 1 and (zipf is None or zipf(name_key(span)[0]) >= EVERYDAY_ZIPF):
            # only a word ordinary English uses often has a plain sense to mean instead: an unlinked
            # "longbow" or "rapier" is the item all the same, so rare words are left out
            out.append(Example(text, start, end, cand, ctx, 0, "lower-unlinked", own))
        if len(name_key(span)) > 1 and _title_case(span) and not ctx.in_heading:
            out.extend(_inside_name(idx, text, start, end, links, own))
    return out


def _wrapped(text: str, start: int, end: int, mark: str) -> bool:
    n = len(mark)
    return text[max(0, start - n):start] == mark and text[end:end + n] == mark \
        and text[max(0, start - n - 1):start - n] != mark and text[end + n:end + n + 1] != mark


def _title_case(span: str) -> bool:
    ws = re.findall(r"[A-Za-z][\w'\u2019]*", span)
    return bool(ws) and all(w[0].isupper() for w in ws if w.lower() not in NAME_CONNECTORS) and ws[0][0].isupper()


def _proper_name_run(text: str, run: tuple[int, int, str], start: int, end: int, entry_names: set) -> bool:
    """Whether the capitalised run around a span is a longer name that is not an entry's: its first
    word is dropped when it is only capitalised by the sentence start ("A Strike", "The Nightmares"
    keeps "Nightmares" alone), abbreviations ("DC", "AC") don't join a name, nor do hyphen spellings
    of an entry name ("Off Guard" for off-guard)."""
    a, b, s = run
    ws = list(re.finditer(r"\S+", s))
    if ws and (at_sentence_start(text, a) or ws[0].group().lower() in DETERMINERS):
        ws = ws[1:]
    ws = [w for w in ws if not (w.group().isupper() and len(w.group()) > 1)]
    caps = [w for w in ws if w.group()[0].isupper()]
    inner = [w for w in caps if a + w.start() >= start and a + w.end() <= end]
    if len(caps) - len(inner) < 1 or not inner:
        return False
    lo_, hi_ = a + ws[0].start(), a + ws[-1].end()
    whole = text[lo_:hi_]
    if name_key(whole) in entry_names or (name_key(whole.replace(" ", "-")) in entry_names):
        return False
    return (lo_, hi_) != (start, end) and lo_ <= start and end <= hi_


def _inside_name(idx: NameIndex, text: str, start: int, end: int, links: set[str], own: str) -> list[Example]:
    """Entry names inside a longer, title-case entry name as written ("Sure Strike" holds "Strike"):
    as a part of the longer name they do not mean their own entry. The longer name is hidden from
    the features' point of view by nothing: its other capitalised words are right there, as a note's
    unknown proper names would be."""
    out: list[Example] = []
    toks = _tokens(text[start:end])
    for a in range(len(toks)):
        for b in range(a, len(toks)):
            if (a, b) == (0, len(toks) - 1):
                continue
            key = tuple(t.norm for t in toks[a:b + 1])
            cands = idx._keys.get(key)
            if not cands or any(c.node_id in links or c.node_id == own for c in cands):
                continue
            s, e = start + toks[a].start, start + toks[b].end
            if not text[s].isupper():
                continue
            cand = candidate_view(text, s, e, cands[0], len(cands))
            out.append(Example(text, s, e, cand, markdown_context(text, s, e), 0, "inside-name", own))
    return out


def transplant_names(
    records: list[dict], idx: NameIndex, entry_names: set, seed: int, count: int
) -> list[Example]:
    """Proper-name negatives made from the corpus's own proper names: a capitalised run of two or
    more words that is no entry's name ("Knights of Lastwall", "Walk the Ethereal Line") has one of
    its capitalised words swapped for a one-word entry name, in its own line: the entry's word is
    then part of a longer name, as "Everlight" is in "Hands of the Everlight". Structure only: which
    entries and which runs are drawn at random (seeded)."""
    rng = random.Random(seed)
    singles = sorted(
        (c for key, cands in idx._keys.items() if len(key) == 1 and key[0].isalpha() for c in cands[:1]),
        key=lambda c: c.node_id,
    )
    runs: list[tuple[str, int, int]] = []
    for rec in records:
        text = rec.get("text") or ""
        for m in _CAP_RUN.finditer(text):
            ws = m.group().split(" ")
            if len(ws) < 2 or name_key(m.group()) in entry_names or "\n" in m.group():
                continue
            ls = text.rfind("\n", 0, m.start()) + 1
            le = text.find("\n", m.end())
            line = text[ls:le if le >= 0 else len(text)]
            if line.lstrip().startswith(("#", "|", "**")) or len(line) > 400:
                continue
            runs.append((line, m.start() - ls, m.end() - ls))
    rng.shuffle(runs)
    out: list[Example] = []
    for line, a, b in runs[:count]:
        run = line[a:b]
        words_ = [(m.start(), m.end()) for m in re.finditer(r"[A-Z][\w'\u2019\-]*", run)]
        if at_sentence_start(line, a) or run.split(" ")[0].lower() in DETERMINERS:
            words_ = words_[1:]  # a capital the sentence start (or "The") explains is not a name's
        if len(words_) < 2:
            continue
        w0, w1 = words_[rng.randrange(len(words_))]
        c = singles[rng.randrange(len(singles))]
        new = c.name.split(" (")[0]
        if len(name_key(new)) != 1:
            continue
        text = line[: a + w0] + new + line[a + w1:]
        s, e = a + w0, a + w0 + len(new)
        cand = candidate_view(text, s, e, c, len(idx._keys.get(name_key(new), [])) or 1)
        out.append(Example(text, s, e, cand, markdown_context(text, s, e), 0, "transplant", "synthetic"))
    # groups named "the <Name>s" ("the Hellknights"): a capitalised word after "the" that is no
    # entry's name and not at a sentence start, swapped for the plural of a one-word entry name
    groups: list[tuple[str, int, int]] = []
    for rec in records:
        text = rec.get("text") or ""
        for m in _THE_NAME.finditer(text):
            word = m.group(1)
            if name_key(word) in entry_names:
                continue
            ls = text.rfind("\n", 0, m.start()) + 1
            le = text.find("\n", m.end())
            line = text[ls:le if le >= 0 else len(text)]
            if line.lstrip().startswith(("#", "|")) or len(line) > 400:
                continue
            groups.append((line, m.start(1) - ls, m.end(1) - ls))
    rng.shuffle(groups)
    for line, a, b in groups[: count // 2]:
        c = singles[rng.randrange(len(singles))]
        base = c.name.split(" (")[0]
        plurals = sorted(_plural(base.lower()))
        if len(name_key(base)) != 1 or not plurals:
            continue
        new = base[0].upper() + plurals[0][1:]
        text = line[:a] + new + line[b:]
        cand = candidate_view(text, a, a + len(new), c, len(idx._keys.get(name_key(base), [])) or 1)
        out.append(Example(text, a, a + len(new), cand, markdown_context(text, a, a + len(new)), 0,
                           "transplant-group", "synthetic"))
    return out


def _inputs_digest(corpus: CorpusText) -> dict[str, str]:
    """SHA-256 (first 16 hex) of the sources the training examples depend on, and the corpus digest."""
    import hashlib

    here = Path(__file__).resolve().parent
    out = {name: hashlib.sha256((here / name).read_bytes()).hexdigest()[:16]
           for name in ("names.py", "legacy.py", "mention_scorer.py", "mention_scorer_train.py")}
    out["corpus"] = corpus.digest[:16]
    return out


def _half(entry_id: str) -> int:
    import hashlib

    return hashlib.sha256(entry_id.encode()).digest()[0] & 1


def link_rates(records: list[dict], idx: NameIndex, use, min_seen: int = 3, prior: float = 0.3) -> dict[str, float]:
    """Per entry id: how often a raw occurrence of its name in other entries' prose is a link
    (smoothed towards ``prior`` with weight 2; ids seen fewer than ``min_seen`` times are left out)."""
    seen: Counter[str] = Counter()
    linked: Counter[str] = Counter()
    for rec in records:
        if not use(rec):
            continue
        text = rec.get("text") or ""
        links = set(rec.get("links") or [])
        for start, _end, cands in raw_candidates(idx, text):
            if any(c.node_id == rec["id"] for c in cands):
                continue
            ls = text.rfind("\n", 0, start) + 1
            if text[ls:start].lstrip().startswith("#"):
                continue
            hit = next((c.node_id for c in cands if c.node_id in links), None)
            nid = hit or cands[0].node_id
            seen[nid] += 1
            linked[nid] += hit is not None
    return {nid: round((linked[nid] + 2 * prior) / (n + 2), 3) for nid, n in seen.items() if n >= min_seen}


# ---- tables ---------------------------------------------------------------------------------
def build_tables(records: list[dict], idx: NameIndex) -> tuple[dict[str, float], dict[str, float]]:
    """(zipf of every word of an entry name, rule-vocabulary log-odds of frequent corpus words)."""
    from wordfreq import word_frequency, zipf_frequency

    name_words: set[str] = set()
    for key in idx._keys:
        name_words.update(w for w in key if not w.isdigit())
    zipf = {w: round(zipf_frequency(w, "en"), 2) for w in sorted(name_words)}
    zipf = {w: z for w, z in zipf.items() if z > 0}
    counts: Counter[str] = Counter()
    for rec in records:
        counts.update(w for w in words(rec.get("text") or "") if not w.isdigit())
    total = sum(counts.values())
    floor = 1e-7  # wordfreq's smallest reported frequencies are ~1e-8; treat rarer as this
    logodds: dict[str, float] = {}
    for w, c in counts.items():
        if c < 20:
            continue
        p_rule = (c + 1) / (total + len(counts))
        p_en = max(word_frequency(w, "en"), floor)
        lo = math.log(p_rule / p_en)
        if abs(lo) >= 0.5:
            logodds[w] = round(max(-8.0, min(8.0, lo)), 2)
    return zipf, logodds


# The label kinds the frame table contrasts: a rule mention (linked, the entry's own name, an italic spell)
# against an everyday sense (an unlinked common word); only lowercase spans, where the sense is open.
FRAME_POSITIVE = frozenset({"link", "self", "italic-spell"})
FRAME_NEGATIVE = frozenset({"lower-unlinked", "start-unlinked"})
FRAME_PRIOR = 5.0  # pseudo-examples at the base rate: a token seen a few times says little
FRAME_MIN_SEEN = 3


def example_frame(ex: Example) -> tuple[str, str]:
    """The frame tokens of a training example, read from the window ``featurize`` reads."""
    from gmprep.kg.mention_scorer import WINDOW_CHARS, frame_tokens

    lo = max(ex.ctx.segment_start if ex.ctx.segment_start is not None else 0, ex.start - WINDOW_CHARS)
    hi = min(ex.ctx.segment_end if ex.ctx.segment_end is not None else len(ex.text), ex.end + WINDOW_CHARS)
    return frame_tokens(ex.text[lo:ex.start], ex.text[ex.end:hi])


def frame_table(examples: list[Example]) -> dict[str, float]:
    """Per frame token ("p:<tok>" before a span, "n:<tok>" after it): the log-odds, against the base rate,
    that a lowercase candidate it frames is a rule mention rather than an everyday sense, counted on the
    corpus's own labels (``FRAME_POSITIVE`` against ``FRAME_NEGATIVE``), smoothed by ``FRAME_PRIOR``
    pseudo-examples at the base rate; tokens seen fewer than ``FRAME_MIN_SEEN`` times are left out."""
    counts: dict[str, list[int]] = {}
    total = [0, 0]
    for ex in examples:
        if ex.kind not in FRAME_POSITIVE | FRAME_NEGATIVE or any(ch.isupper() for ch in ex.text[ex.start:ex.end]):
            continue
        y = int(ex.kind in FRAME_POSITIVE)
        total[y] += 1
        prev, nxt = example_frame(ex)
        for key in ("p:" + prev, "n:" + nxt):
            counts.setdefault(key, [0, 0])[y] += 1
    if not total[0] or not total[1]:
        return {}
    r = total[1] / (total[0] + total[1])
    base = math.log(r / (1.0 - r))
    out: dict[str, float] = {}
    for key, (n0, n1) in sorted(counts.items()):
        if n0 + n1 >= FRAME_MIN_SEEN:
            lo = math.log((n1 + FRAME_PRIOR * r) / (n0 + FRAME_PRIOR * (1.0 - r))) - base
            out[key] = round(max(-4.0, min(4.0, lo)), 3)
    return out


def capped_examples(examples: list[Example], seed: int, max_per_kind_name: int) -> list[Example]:
    """``examples`` shuffled by the seed, each (entry, label kind) pair kept at most ``max_per_kind_name``
    times, so "Strike" and "creature" don't dominate."""
    rng = random.Random(seed)
    rng.shuffle(examples)
    seen: Counter[tuple[str, str]] = Counter()
    kept: list[Example] = []
    for ex in examples:
        k = (ex.cand.node_id, ex.kind)
        if seen[k] < max_per_kind_name:
            seen[k] += 1
            kept.append(ex)
    return kept


def corpus_frame_table(corpus: CorpusText, seed: int = 7, max_per_kind_name: int = 30) -> dict[str, float]:
    """The frame table of the corpus's training examples, as ``train_scorer`` builds it (for a model that
    was trained without one: ``gmprep hover calibrate --frame-table``)."""
    examples, _records, _idx = collect_examples(corpus, seed)
    return frame_table(capped_examples(examples, seed, max_per_kind_name))


CREATURE_KIND_MIN_CARRIERS = 3  # a trait carried by fewer entries says nothing about what it names


def creature_kinds(nodes: list, min_carriers: int = CREATURE_KIND_MIN_CARRIERS) -> dict[str, float]:
    """Per trait entry (its id): the share of the corpus entries carrying the trait that are creatures, for
    the traits at least ``min_carriers`` entries carry and some creature does. Near 1 the trait names a kind
    of creature ("zombie", "gremlin", "ooze": written in lowercase narration, "the zombies shambled", it means
    the creatures); near 0 it is a word of the rules ("attack", "water", "fire": spells and actions carry it).
    Read from the corpus's own trait lists, no word list (``gmprep hover calibrate --creature-kinds``)."""
    carriers: dict[str, Counter[str]] = {}
    for n in nodes:
        if n.kind != "entry":
            continue
        for t in {t.lower() for t in (n.traits or [])}:
            carriers.setdefault(t, Counter())[n.type] += 1
    out: dict[str, float] = {}
    for n in nodes:
        if n.kind != "entry" or n.type != "trait":
            continue
        c = carriers.get(n.name.lower())
        total = sum(c.values()) if c else 0
        if c and total >= min_carriers and c["creature"]:
            out[n.node_id] = round(c["creature"] / total, 3)
    return dict(sorted(out.items()))


# ---- training -------------------------------------------------------------------------------
@dataclass
class CorpusText:
    """What training reads of the corpus, handed in by the caller (kg does not import ingest):
    the graph's nodes (for the name index), the raw records (text, links) and the corpus digest."""

    nodes: list
    records: list[dict]
    digest: str


def collect_examples(
    corpus: CorpusText, seed: int, limit_entries: int | None = None
) -> tuple[list[Example], list[dict], NameIndex]:
    idx = NameIndex.build(corpus.nodes)
    records = list(corpus.records)
    if limit_entries is not None:
        random.Random(seed).shuffle(records)
        records = records[:limit_entries]
    entry_names = set(idx._keys)
    examples: list[Example] = []
    from functools import lru_cache

    from wordfreq import zipf_frequency

    zipf = lru_cache(maxsize=None)(lambda w: zipf_frequency(w, "en"))
    for rec in records:
        examples.extend(label_entry(idx, rec, entry_names, zipf))
    n_names = sum(1 for ex in examples if ex.kind in ("proper-name", "inside-name"))
    examples.extend(transplant_names(records, idx, entry_names, seed, count=max(20, n_names)))
    return examples, records, idx


@dataclass
class RealExamples:
    """Judged spans of real GM notes (a TUNING split), featurized as the note scanner sees them."""

    labels: str  # the labels file, as given
    feats: list[dict[str, float]]
    y: list[int]
    groups: list[str]  # the GM who wrote each note: validation leaves one GM out at a time


def _note_groups(labels: Path) -> dict[str, str]:
    """doc -> GM, from the ``sources.json`` beside the labels' folder (else the doc id's prefix)."""
    for path in (labels.parent / "sources.json", labels.parent.parent / "sources.json"):
        if path.exists():
            try:
                return {s["id"]: s.get("repo") or s.get("gm") or s["id"] for s in json.loads(path.read_text())["sources"]}
            except (ValueError, KeyError, TypeError):
                break
    return {}



def judged_row(rows: list[dict], start: int, end: int, node_id: str) -> dict | None:
    """The label row that judges a candidate: one that overlaps it and names its entry as the rule (as
    ``gmprep eval hover --real`` counts a hit), else the first that overlaps it, else None (not judged).
    A candidate longer than the word first judged ("zombie rot" over the noise "zombie") is judged by
    the rule span it covers."""
    over = [r for r in rows if r["start"] < end and start < r["end"]]
    right = next((r for r in over if r["label"] == "rule" and node_id in (r.get("ids") or [])), None)
    return right or (over[0] if over else None)


def labelled_notes(labels: Path, notes_dir: Path) -> list[tuple[str, str, list[dict]]]:
    """``(doc, note text, label rows)`` per labelled note, by doc name; a missing note or a label whose text
    drifted from the note is a one-line error."""
    gold: dict[str, list[dict]] = {}
    for line in labels.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            gold.setdefault(row["doc"], []).append(row)
    out = []
    for doc, rows in sorted(gold.items()):
        path = notes_dir / f"{doc}.md"
        if not path.exists():
            raise GmprepError(f"note text missing: {path} (run the labels' fetch script)")
        text = path.read_text(encoding="utf-8")
        for row in rows:
            if text[row["start"]:row["end"]] != row.get("text", text[row["start"]:row["end"]]):
                raise GmprepError(f"{doc}:{row['start']}: labelled text drifted from the note")
        out.append((doc, text, rows))
    return out

def real_note_examples(labels: Path, notes_dir: Path, nodes: list, tables: dict) -> RealExamples:
    """Every span the note scanner (the hover path) proposes in the labelled notes and a label
    covers, with the features the scorer reads there (``tables``: zipf, rule_logodds, link_rate of
    the model being trained). A rule span citing the mention's entry is positive; a noise span, or a
    rule span of another entry, negative. Refuses a held-out split."""
    from gmprep.kg.mention_scorer import MentionScorer
    from gmprep.kg.note_scan import NoteScanner

    if "heldout" in labels.name:
        raise GmprepError("refusing to train on a held-out split: pass the tuning labels")
    recorded: list[dict[str, float]] = []

    class _Recorder(MentionScorer):
        """Keeps each candidate's features; its "confidence" is the candidate's number (the scanner
        rounds confidences to 4 places), so a mention finds its features even when the scanner
        reuses a repeated paragraph's decisions."""

        def score(self, text, start, end, candidate, ctx=None):
            recorded.append(self.featurize(text, start, end, candidate, ctx or SpanContext()))
            if len(recorded) >= 10_000:
                raise GmprepError("a labelled note with 10,000 candidates or more: split it")
            return len(recorded) * 1e-4

    rec = _Recorder({"features": [], "weights": [], "bias": 0.0, "thresholds": {"normal": 0.0}} | tables)
    names = NameIndex.build([n for n in nodes if n.kind == "entry"])
    groups = _note_groups(labels)
    out = RealExamples(str(labels), [], [], [])
    for doc, text, rows in labelled_notes(labels, notes_dir):
        recorded.clear()
        scanner = NoteScanner(names, scorer=rec)  # a fresh chunk cache: every candidate is scored here
        scanner.threshold = 0.0
        for m in scanner.scan(text).mentions:
            f = recorded[round(m.confidence * 1e4) - 1]
            hit = judged_row(rows, m.start, m.end, m.node_id)
            if hit is None:
                continue
            out.feats.append(f)
            out.y.append(int(hit["label"] == "rule" and m.node_id in (hit.get("ids") or [])))
            out.groups.append(groups.get(doc, doc.split("-")[0]))
    return out


def train_scorer(
    corpus: CorpusText, out_dir: Path | None = None, seed: int = 7, limit_entries: int | None = None,
    max_per_kind_name: int = 30, command: str = "", real: tuple[Path, Path] | None = None, real_weight: float = 0.5,
    dev_notes: Path | None = None, dev_recall: float = 0.98, frame_features: bool = False,
) -> dict:
    """Label, featurize, fit, save; returns the manifest (counts, validation metrics, seed).

    ``real``: (labels, notes folder) of judged real GM notes (a tuning split) to learn from too; they
    weigh ``real_weight`` times the corpus examples in total. Then each GM's notes are also scored by
    a model fitted without them (leave one GM out), and the hover thresholds are chosen on those
    out-of-GM scores, so they are not set on scores the model was fitted to.

    ``frame_features``: learn the frame table (``frame_table``) and weigh the ``frame_lower`` feature.

    ``dev_notes``: a folder of labelled notes (``X.md`` + ``X.md.json``, the hover eval's format) whose
    rule mentions must keep hovering: the "normal" threshold is lowered, if need be, until at least
    ``dev_recall`` of them reach it (a value after the name shows a mention at any score)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    out_dir = out_dir or MODEL_DIR
    examples, records, idx = collect_examples(corpus, seed, limit_entries)
    if not examples:
        raise GmprepError("no training examples: is the corpus empty?")
    # cap how often one (entry, label kind) pair repeats, so "Strike" and "creature" don't dominate
    kept = capped_examples(examples, seed, max_per_kind_name)
    zipf, logodds = build_tables(records, idx)
    # the link rate of an example's entry is counted on the other half of the corpus (cross-fitting),
    # so an example's own link does not leak into its feature; the shipped table counts everything
    halves = [link_rates(records, idx, lambda r, h=h: _half(r["id"]) != h) for h in (0, 1)]
    shipped_rates = link_rates(records, idx, lambda r: True)
    # the frame table likewise: an example's frame is read against the other half's counts
    frame_halves = [frame_table([ex for ex in kept if ex.entry == "synthetic" or _half(ex.entry) != h])
                    for h in (0, 1)] if frame_features else [{}, {}]
    frames = frame_table(kept) if frame_features else {}
    feats = [
        featurize(ex.text, ex.start, ex.end, ex.cand, ex.ctx, zipf, logodds,
                  halves[_half(ex.entry)] if ex.entry != "synthetic" else shipped_rates,
                  (frame_halves[_half(ex.entry)] if ex.entry != "synthetic" else frames) if frame_features else None)
        for ex in kept
    ]
    notes = (real_note_examples(real[0], real[1], corpus.nodes,
                                {"zipf": zipf, "rule_logodds": logodds, "link_rate": shipped_rates,
                                 "frame_logodds": frames})
             if real is not None else None)
    names = sorted({k for f in feats for k in f})
    X = np.array([[f.get(k, 0.0) for k in names] for f in feats], dtype=float)
    y = np.array([ex.label for ex in kept])
    if len(set(y.tolist())) < 2:
        raise GmprepError("training examples have only one label: the sample is too small")
    means = X.mean(axis=0)
    scales = X.std(axis=0)
    scales[scales == 0] = 1.0
    Xs = (X - means) / scales
    # validation: hold out 20% of the entries (all their examples), report AUC and accuracy
    entries = sorted({ex.entry for ex in kept})
    random.Random(seed).shuffle(entries)
    val_entries = set(entries[: max(1, len(entries) // 5)])
    val = np.array([ex.entry in val_entries for ex in kept])
    # Each way of being negative (everyday sense, part of a proper name, part of a longer entry name)
    # and of being positive weighs the same in total, up to 10x per example: lowercase unlinked words
    # outnumber proper-name contexts ten to one in rule prose, but not in a GM's notes.
    kinds = Counter((ex.label, ex.kind) for ex in kept)
    per_label = Counter(ex.label for ex in kept)
    n_kinds = Counter(label for label, _ in kinds)
    w = np.array([
        min(10.0, per_label[ex.label] / (n_kinds[ex.label] * kinds[(ex.label, ex.kind)])) for ex in kept
    ])
    for label in (0, 1):  # then the two labels weigh the same
        w[y == label] *= len(y) / (2 * w[y == label].sum())
    clf = LogisticRegression(C=1.0, max_iter=3000, random_state=seed)
    metrics: dict = {}
    if val.any() and (~val).any() and len(set(y[~val].tolist())) == 2 and len(set(y[val].tolist())) == 2:
        clf.fit(Xs[~val], y[~val], sample_weight=w[~val])
        p = clf.predict_proba(Xs[val])[:, 1]
        metrics = {"val_auc": round(float(roc_auc_score(y[val], p)), 4),
                   "val_accuracy_at_0.5": round(float(((p >= 0.5) == y[val]).mean()), 4),
                   "val_examples": int(val.sum())}
    real_report: dict = {}
    thresholds = None
    oof_spans: list[LabelledSpan] = []
    if notes is not None and notes.y:
        Xr = (np.array([[f.get(k, 0.0) for k in names] for f in notes.feats], dtype=float) - means) / scales
        yr = np.array(notes.y)
        gr = np.array(notes.groups)

        def with_real(mask):
            n = int(mask.sum())
            wr = np.full(n, real_weight * w.sum() / max(1, n))
            return np.vstack([Xs, Xr[mask]]), np.concatenate([y, yr[mask]]), np.concatenate([w, wr])

        # leave one GM out: each GM's notes scored by a model that never saw that GM
        oof = np.zeros(len(yr))
        by_gm: dict[str, dict] = {}
        base = LogisticRegression(C=1.0, max_iter=3000, random_state=seed).fit(Xs, y, sample_weight=w)
        for g in sorted(set(notes.groups)):
            te = gr == g
            Xa, ya, wa = with_real(~te)
            m = LogisticRegression(C=1.0, max_iter=3000, random_state=seed).fit(Xa, ya, sample_weight=wa)
            oof[te] = m.predict_proba(Xr[te])[:, 1]
            p0 = base.predict_proba(Xr[te])[:, 1]
            if len(set(yr[te].tolist())) == 2:
                by_gm[g] = {"spans": int(te.sum()), "rule_spans": int(yr[te].sum()),
                            "auc_corpus_only": round(float(roc_auc_score(yr[te], p0)), 4),
                            "auc_with_other_gms": round(float(roc_auc_score(yr[te], oof[te])), 4)}
        spans = oof_spans = [LabelledSpan(g, 0, 0, int(lab), "", float(p)) for g, lab, p in zip(gr, yr, oof, strict=True)]
        thresholds = calibrate(spans)
        real_report = {
            "labels": notes.labels, "spans": len(yr), "rule_spans": int(yr.sum()), "weight": real_weight,
            "leave_one_gm_out": by_gm, "thresholds": thresholds,
            "at": {k: dict(zip(("precision", "recall", "tp", "fp", "fn"), pr_at(spans, t), strict=True))
                   for k, t in thresholds.items()},
        }
        Xs, y, w = with_real(np.ones(len(yr), dtype=bool))
    clf.fit(Xs, y, sample_weight=w)
    manifest = {
        "model": MODEL_FILE,
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command or f"gmprep hover train-scorer --seed {seed}",
        "seed": seed,
        "corpus_entries": len(records),
        "examples_found": len(examples),
        "examples_used": len(kept),
        "positives": int(y.sum()),
        "negatives": int(len(y) - y.sum()),
        "by_kind": {f"{k}:{label}": c for (label, k), c in sorted(kinds.items())},
        "max_per_kind_name": max_per_kind_name,
        "zipf_words": len(zipf),
        "rule_vocabulary_words": len(logodds),
        "frame_tokens": len(frames),
        "validation": metrics,
        "real_notes": real_report,
        # the model depends on what the note matcher proposes: retrain when these change
        "inputs_sha256": _inputs_digest(corpus),
        "sources": {
            "labels": "corpus entry texts (ingest/data/pf2e, ORC): links, unresolved links, italics, capitalised runs",
            "zipf": "wordfreq 3.1.1 (data CC-BY-SA 4.0, Robyn Speer et al.): zipf_frequency(word, 'en')",
        },
    }
    model = {
        "features": names,
        "weights": [round(float(w), 5) for w in clf.coef_[0]],
        "bias": round(float(clf.intercept_[0]), 5),
        "means": [round(float(x), 6) for x in means],
        "scales": [round(float(x), 6) for x in scales],
        "thresholds": dict(DEFAULT_THRESHOLDS),
        "zipf": zipf,
        "rule_logodds": logodds,
        "link_rate": shipped_rates,
    }
    if frames:
        model["frame_logodds"] = frames
    existing = out_dir / MODEL_FILE
    if thresholds is not None:  # chosen on the out-of-GM scores of the real notes
        if dev_notes is not None:
            ceiling = dev_ceiling(dev_notes, corpus.nodes, model, dev_recall)
            real_report["dev_notes"] = {"folder": str(dev_notes), "recall": dev_recall, "ceiling": ceiling}
            thresholds["normal"] = min(thresholds["normal"], ceiling)
            rescue_cap = dev_ceiling(dev_notes, corpus.nodes, model, 1.0, rescued_only=True)
            thresholds["loose"] = min(thresholds["loose"], thresholds["normal"], rescue_cap)
            if "rescue" in thresholds:
                thresholds["rescue"] = min(thresholds["rescue"], thresholds["normal"], rescue_cap)
            real_report["at"] = {
                k: dict(zip(("precision", "recall", "tp", "fp", "fn"), pr_at(oof_spans, t), strict=True))
                for k, t in thresholds.items()
            }
        model["thresholds"] = thresholds
    elif existing.exists():  # keep thresholds (and the note stage) calibrated on the tuning notes across
        try:                   # retraining; `gmprep hover calibrate ... --note-stage` refits both
            old = json.loads(existing.read_text(encoding="utf-8"))
            model["thresholds"] = old["thresholds"]
            if old.get("note_stage"):
                model["note_stage"] = old["note_stage"]
        except (ValueError, KeyError):
            pass
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MODEL_FILE).write_text(json.dumps(model, sort_keys=True), encoding="utf-8")
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    from gmprep.kg.mention_scorer import _load

    _load.cache_clear()
    return manifest


def dev_ceiling(folder: Path, nodes: list, model: dict, recall: float, rescued_only: bool = False) -> float:
    """The highest threshold at which ``recall`` of the labelled mentions of the notes in ``folder``
    (``X.md.json``: line, character, gold id) still hover with ``model`` (its note stage included).
    ``rescued_only``: count only the mentions the rules of thumb accept, which the "loose" threshold
    still shows below "normal" (so ``recall=1.0`` gives the highest "loose" that keeps them all)."""
    from gmprep.kg.mention_scorer import MentionScorer
    from gmprep.kg.note_scan import NoteScanner, staged
    from gmprep.kg.prose import line_starts

    scorer = MentionScorer(model)
    scanner = NoteScanner(NameIndex.build([n for n in nodes if n.kind == "entry"]), scorer=scorer)
    scores: list[float] = []
    for note in sorted(folder.glob("*.md")):
        labels = note.with_name(note.name + ".json")
        if not labels.exists():
            continue
        text = note.read_text(encoding="utf-8")
        starts = line_starts(text)
        cands = scanner.candidates(text)
        confs = (staged(scorer.note_stage, cands, scorer.note_weights)
                 if scorer.note_stage is not None or scorer.note_weights else [])
        for g in json.loads(labels.read_text(encoding="utf-8")).get("mentions", []):
            if not g.get("gold"):
                continue
            off = starts[g["line"]] + g["character"]
            i = next((i for i, sc in enumerate(cands)
                      if sc.start <= off < sc.end and sc.mention.node_id == g["gold"]), None)
            if i is None:
                if not rescued_only:
                    scores.append(0.0)  # not found at all: no threshold brings it back
                continue
            m = cands[i].mention
            if m.value is not None or (rescued_only and not cands[i].heuristic):
                continue  # a value shows it at any score; the rescue only reads accepted matches
            scores.append(confs[i] if confs else m.confidence)
    if not scores:
        if rescued_only:
            return 1.0
        raise GmprepError(f"no labelled mentions in {folder}")
    scores.sort()
    k = int(len(scores) * (1.0 - recall))  # this many may fall below
    return round(max(0.0, scores[k] - 1e-4), 4)


# ---- calibration on labelled notes (the TUNING split only) ------------------------------------------
@dataclass
class LabelledSpan:
    doc: str
    start: int
    end: int
    label: int
    reason: str
    score: float
    # how the scanner treats it below the threshold: "value" (the rules of thumb accept it and it carries a
    # value or is a legacy name: shown at any score), "rescue" (the rules of thumb accept it: shown from
    # the "rescue" threshold on), "plain" (the scorer alone decides)
    group: str = "plain"
    # how much the span counts when thresholds are chosen (``balance_by_gm``: each GM's notes count alike)
    weight: float = 1.0


def balance_by_gm(spans: list[LabelledSpan], gm_of: dict[str, str]) -> list[LabelledSpan]:
    """The spans weighted so that every GM's judged spans weigh the same in all (their mean weight stays 1):
    thresholds then serve the GM a new note comes from, not the GM who wrote the most spans (one rule-dense
    house-rules page outweighed two GMs' narration)."""
    from collections import Counter
    from dataclasses import replace

    n = Counter(gm_of.get(x.doc, x.doc) for x in spans)
    if not n:
        return spans
    per_gm = len(spans) / len(n)
    return [replace(x, weight=per_gm / n[gm_of.get(x.doc, x.doc)]) for x in spans]


def _group(sc) -> str:
    m = sc.mention
    if not sc.heuristic:
        return "plain"
    return "value" if m.value is not None or m.form == "legacy" else "rescue"


def score_labelled_spans(labels: Path, notes_dir: Path, nodes: list, scorer=None) -> list[LabelledSpan]:
    """Every mention the note scanner (the hover path, ``kg.note_scan``) proposes in the labelled
    notes, scored with no threshold, and judged by the labels (JSON lines: doc, start, end, text,
    label rule/noise, ids): a rule span whose accepted ids hold the mention's entry is right; a noise
    span, or a rule span of another entry, is wrong; a mention no label covers is left out."""
    from gmprep.kg.mention_scorer import MentionScorer
    from gmprep.kg.note_scan import NoteScanner, staged

    if "heldout" in labels.name:
        raise GmprepError("refusing to calibrate on a held-out split: pass the tuning labels")
    scorer = scorer or MentionScorer.load()
    stage = scorer.note_stage
    names = NameIndex.build([n for n in nodes if n.kind == "entry"])
    scanner = NoteScanner(names, scorer=scorer)
    out: list[LabelledSpan] = []
    for doc, text, rows in labelled_notes(labels, notes_dir):
        cands = scanner.candidates(text)  # what scan reads before its thresholds
        confs = (staged(stage, cands, scorer.note_weights) if stage is not None or scorer.note_weights
                 else [sc.mention.confidence for sc in cands])
        for sc, score in zip(cands, confs, strict=True):
            m = sc.mention
            hit = judged_row(rows, sc.start, sc.end, sc.mention.node_id)
            if hit is None:
                continue
            right = hit["label"] == "rule" and m.node_id in (hit.get("ids") or [])
            out.append(LabelledSpan(doc, sc.start, sc.end, int(right), hit.get("reason") or "", score, _group(sc)))
    return out


@dataclass
class StageSpan:
    """A judged candidate as the note stage reads it: the scorer's own logit and its section's mean."""

    doc: str
    start: int
    end: int
    label: int
    z: float
    section_mean: float
    group: str = "plain"
    evidence: tuple[float, ...] = ()  # the note's evidence about its entry (``kg.note_evidence``), if used


def stage_spans(labels: Path, notes_dir: Path, nodes: list, scorer, evidence: tuple[str, ...] = ()) -> list[StageSpan]:
    """Every candidate of the labelled notes that a label covers, with the scorer's logit and the mean
    logit of all candidates (judged or not) under the same headings, as ``NoteScanner._shown`` reads
    them (and the note's ``evidence`` about its entry). ``scorer`` must be the model without its note
    stage. Refuses a held-out split."""
    from gmprep.kg.note_evidence import note_evidence
    from gmprep.kg.note_scan import NoteScanner, note_logits, section_mean_logits

    if "heldout" in labels.name:
        raise GmprepError("refusing to fit on a held-out split: pass the tuning labels")
    scanner = NoteScanner(NameIndex.build([n for n in nodes if n.kind == "entry"]), scorer=scorer)
    out: list[StageSpan] = []
    for doc, text, rows in labelled_notes(labels, notes_dir):
        cands = scanner.candidates(text)
        zs = note_logits(cands, scorer.note_weights)  # with the whole-note features, as the scan reads them
        ev = note_evidence(evidence, [sc.mention.node_id for sc in cands], [sc.etype for sc in cands], zs)
        means = section_mean_logits([sc.section for sc in cands], zs)
        for sc, z, mean, e in zip(cands, zs, means, ev, strict=True):
            m = sc.mention
            hit = judged_row(rows, sc.start, sc.end, sc.mention.node_id)
            if hit is None:
                continue
            right = hit["label"] == "rule" and m.node_id in (hit.get("ids") or [])
            out.append(StageSpan(doc, sc.start, sc.end, int(right), z, mean, _group(sc), e))
    return out


def fit_note_stage(spans: list[StageSpan], ridge: float = 1e-2, evidence: tuple[str, ...] = ()):
    """The note stage's numbers: a logistic regression of the label on (own logit, section mean logit,
    and the spans' ``evidence`` values, named by ``evidence``), fitted by Newton steps with a small ridge
    (a handful of numbers need no library)."""
    import numpy as np

    from gmprep.kg.mention_scorer import NoteStage

    k = len(evidence)
    X = np.array([[x.z, x.section_mean, *(x.evidence[:k] if k else ()), 1.0] for x in spans], dtype=float)
    y = np.array([x.label for x in spans], dtype=float)
    d = X.shape[1]
    w = np.zeros(d)
    reg = np.eye(d) * ridge
    reg[-1, -1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(X @ w, -30, 30)))
        g = X.T @ (p - y) + reg @ w
        h = (X * (p * (1 - p))[:, None]).T @ X + reg + 1e-9 * np.eye(d)
        step = np.linalg.lstsq(h, g, rcond=None)[0]  # a singular fold (logits far apart) is no crash
        w -= step
        if not np.isfinite(step).all():
            raise GmprepError("the note stage did not converge: try a smaller --residual-c")
        if float(np.abs(step).max()) < 1e-8:
            break
    return NoteStage(round(float(w[0]), 5), round(float(w[1]), 5), round(float(w[-1]), 5), tuple(evidence),
                     tuple(round(float(v), 5) for v in w[2:-1]))


def note_stage_out_of_gm(spans: list[StageSpan], groups: dict[str, str],
                         evidence: tuple[str, ...] = ()) -> list[LabelledSpan]:
    """Each GM's spans scored by a note stage fitted without that GM (leave one GM out)."""
    gm_of = {x.doc: groups.get(x.doc, x.doc.split("-")[0]) for x in spans}
    out: list[LabelledSpan] = []
    for gm in sorted(set(gm_of.values())):
        rest = [x for x in spans if gm_of[x.doc] != gm]
        if len({x.label for x in rest}) < 2:
            continue
        stage = fit_note_stage(rest, evidence=evidence)
        for x in spans:
            if gm_of[x.doc] == gm:
                score = stage.adjust(1.0 / (1.0 + math.exp(-x.z)), x.section_mean, x.evidence)
                out.append(LabelledSpan(x.doc, x.start, x.end, x.label, "", round(score, 4), x.group))
    return out


def note_stage_leave_one_gm_out(spans: list[StageSpan], groups: dict[str, str], normal_cap: float = 1.0,
                                rescue_cap: float = 1.0, evidence: tuple[str, ...] = ()) -> dict[str, dict]:
    """``leave_one_gm_out`` for the note stage, strictly: for each GM, the stage is fitted and the
    thresholds chosen on the other GMs' spans alone, then both are applied to this GM's."""
    gm_of = {x.doc: groups.get(x.doc, x.doc.split("-")[0]) for x in spans}
    out: dict[str, dict] = {}
    for gm in sorted(set(gm_of.values())):
        rest = [x for x in spans if gm_of[x.doc] != gm]
        if len({x.label for x in rest}) < 2:
            continue
        stage = fit_note_stage(rest, evidence=evidence)

        def scored(xs: list[StageSpan], stage=stage) -> list[LabelledSpan]:
            return [LabelledSpan(x.doc, x.start, x.end, x.label, "",
                                 round(stage.adjust(1.0 / (1.0 + math.exp(-x.z)), x.section_mean, x.evidence), 4),
                                 x.group)
                    for x in xs]

        held = scored([x for x in spans if gm_of[x.doc] == gm])
        t = calibrate(scored(rest), normal_cap, rescue_cap)
        out[gm] = _held_report(held, t) | {"stage": [stage.self_weight, stage.section_weight, stage.bias]}
    return out


def pr_at(spans: list[LabelledSpan], threshold: float) -> tuple[float, float, int, int, int]:
    """(precision, recall, true positives, false positives, false negatives) of ``score >= threshold``."""
    tp = sum(1 for x in spans if x.label and x.score >= threshold)
    fp = sum(1 for x in spans if not x.label and x.score >= threshold)
    fn = sum(1 for x in spans if x.label and x.score < threshold)
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, tp, fp, fn


def calibrate(spans: list[LabelledSpan], normal_cap: float = 1.0, rescue_cap: float = 1.0,
              precision_target: float | None = None) -> dict[str, float]:
    """Thresholds per strictness, each the best F-beta on the labelled spans: loose F1, normal F0.5
    (precision weighs double), strict F0.25. Precision comes first because the targets ask more of it
    (0.90 against recall's 0.80) and because in narrative prep the everyday senses of rule words
    outnumber the rules several times over: a threshold balanced on tidier notes hovers noise there.

    With the spans' groups (``LabelledSpan.group``), "normal" and "rescue" are chosen together for the
    best F-``RESCUE_BETA`` of what the hover path shows (``pr_shown``): a match the rules of thumb accept is a
    different population from one they turn down, so it gets its own, lower, bar. ``normal_cap`` and
    ``rescue_cap`` bound them (the dev notes' ceilings). ``precision_target``: instead of the F-beta, the pair
    that shows the most rules at that precision or more (a precision chosen on one GM's notes carries to
    another's better than an F-beta point does: the share of rules in a note varies from GM to GM)."""
    grid = sorted({round(x.score, 4) for x in spans} | {0.5})
    out: dict[str, float] = {}
    for name, beta in (("loose", 1.0), ("normal", 0.5), ("strict", 0.25)):
        best = max((_fbeta(*_weighted_pr(spans, t), beta), -t) for t in grid)
        out[name] = round(-best[1], 4)
    out["normal"] = min(out["normal"], normal_cap)
    if any(x.group != "plain" for x in spans):
        out["normal"], out["rescue"] = _normal_and_rescue(spans, grid, normal_cap, rescue_cap, precision_target)
    out["loose"] = min(out["loose"], out["normal"])
    out["strict"] = max(out["strict"], out["normal"])
    return out


def _normal_and_rescue(spans: list[LabelledSpan], grid: list[float], normal_cap: float,
                       rescue_cap: float, precision_target: float | None = None) -> tuple[float, float]:
    """The (normal, rescue <= normal) pair with the best F-``RESCUE_BETA`` of ``pr_shown`` (with ``precision_target``:
    the most recall at that precision or more, else the best precision); counts by bisection, so the grid's pairs
    cost a logarithm each."""
    import bisect

    def sorted_scores(group: str, label: int) -> tuple[list[float], list[float]]:
        # scores ascending and the weight at or above each (a suffix sum), so a count is one bisection
        xs = sorted((x.score, x.weight) for x in spans if x.group == group and x.label == label)
        tail = [0.0] * (len(xs) + 1)
        for i in range(len(xs) - 1, -1, -1):
            tail[i] = tail[i + 1] + xs[i][1]
        return [v for v, _ in xs], tail

    plain = (sorted_scores("plain", 1), sorted_scores("plain", 0))
    rescue = (sorted_scores("rescue", 1), sorted_scores("rescue", 0))
    always_tp = sum(x.weight for x in spans if x.group == "value" and x.label)
    always_fp = sum(x.weight for x in spans if x.group == "value" and not x.label)
    positives = sum(x.weight for x in spans if x.label)

    def above(xs: tuple[list[float], list[float]], t: float) -> float:
        return xs[1][bisect.bisect_left(xs[0], t)]

    best = (-1.0, 0.0, 0.0)
    for n in (t for t in grid if t <= normal_cap):
        ptp, pfp = above(plain[0], n), above(plain[1], n)
        for r in (t for t in grid if t <= min(n, rescue_cap)):
            tp = ptp + above(rescue[0], r) + always_tp
            fp = pfp + above(rescue[1], r) + always_fp
            p = tp / (tp + fp) if tp + fp else 1.0
            rec = tp / positives if positives else 1.0
            if precision_target is None:
                f = _fbeta(p, rec, RESCUE_BETA)
            else:  # any pair reaching the target beats every pair that does not; then recall, then precision
                f = (2.0 + rec + p * 1e-3) if p >= precision_target else p
            if f > best[0] + 1e-12:
                best = (f, n, r)
    if best[0] < 0:  # every score above the caps: the caps themselves
        return round(normal_cap, 4), round(min(normal_cap, rescue_cap), 4)
    return round(best[1], 4), round(best[2], 4)


def _weighted_pr(spans: list[LabelledSpan], threshold: float) -> tuple[float, float]:
    """``pr_at``'s precision and recall with each span counted at its weight (what thresholds are chosen on)."""
    tp = sum(x.weight for x in spans if x.label and x.score >= threshold)
    fp = sum(x.weight for x in spans if not x.label and x.score >= threshold)
    pos = sum(x.weight for x in spans if x.label)
    return (tp / (tp + fp) if tp + fp else 1.0), (tp / pos if pos else 1.0)


def pr_shown(spans: list[LabelledSpan], normal: float, rescue: float) -> tuple[float, float, int, int, int]:
    """``pr_at`` of what the hover path shows: a score at ``normal`` or above, a "rescue" span at
    ``rescue`` or above, a "value" span at any score."""
    def shown(x: LabelledSpan) -> bool:
        return x.score >= normal or x.group == "value" or (x.group == "rescue" and x.score >= rescue)

    tp = sum(1 for x in spans if x.label and shown(x))
    fp = sum(1 for x in spans if not x.label and shown(x))
    fn = sum(1 for x in spans if x.label and not shown(x))
    return (tp / (tp + fp) if tp + fp else 1.0), (tp / (tp + fn) if tp + fn else 1.0), tp, fp, fn


def auc(spans: list[LabelledSpan]) -> float | None:
    """Area under the ROC curve of the spans' scores (ties count half); None without both labels."""
    pos = sorted(x.score for x in spans if x.label)
    neg = sorted(x.score for x in spans if not x.label)
    if not pos or not neg:
        return None
    import bisect

    wins = sum(bisect.bisect_left(neg, p) + 0.5 * (bisect.bisect_right(neg, p) - bisect.bisect_left(neg, p)) for p in pos)
    return wins / (len(pos) * len(neg))


def leave_one_gm_out(spans: list[LabelledSpan], groups: dict[str, str], normal_cap: float = 1.0,
                     rescue_cap: float = 1.0) -> dict[str, dict]:
    """How the calibration carries to a GM it never saw: for each GM (``groups``: doc -> GM), the
    thresholds are chosen on the other GMs' spans and applied to this GM's; with the AUC of the
    scores on this GM's spans. The question the next GM's notes ask, answered on the tuning split."""
    gm_of = {x.doc: groups.get(x.doc, x.doc.split("-")[0]) for x in spans}
    out: dict[str, dict] = {}
    for gm in sorted(set(gm_of.values())):
        held = [x for x in spans if gm_of[x.doc] == gm]
        rest = [x for x in spans if gm_of[x.doc] != gm]
        if not rest or len({x.label for x in rest}) < 2:
            continue
        t = calibrate(rest, normal_cap, rescue_cap)
        out[gm] = _held_report(held, t)
    return out


def _held_report(held: list[LabelledSpan], t: dict[str, float]) -> dict:
    a = auc(held)
    return {"spans": len(held), "rule_spans": sum(x.label for x in held),
            "auc": None if a is None else round(a, 4), "thresholds": t} | {
        k: dict(zip(("precision", "recall", "tp", "fp", "fn"), pr_at(held, v), strict=True))
        for k, v in t.items() if k != "rescue"} | {
        "shown": dict(zip(("precision", "recall", "tp", "fp", "fn"),
                          pr_shown(held, t["normal"], t.get("rescue", t["loose"])), strict=True))}


def pooled(report: dict[str, dict], strictness: str = "shown") -> tuple[float, float]:
    """Precision and recall over all GMs of a ``leave_one_gm_out`` report, each at its out-of-GM threshold."""
    tp = sum(r[strictness]["tp"] for r in report.values())
    fp = sum(r[strictness]["fp"] for r in report.values())
    fn = sum(r[strictness]["fn"] for r in report.values())
    return (tp / (tp + fp) if tp + fp else 1.0), (tp / (tp + fn) if tp + fn else 1.0)


def _fbeta(p: float, r: float, beta: float) -> float:
    b2 = beta * beta
    return (1 + b2) * p * r / (b2 * p + r) if p + r else 0.0
