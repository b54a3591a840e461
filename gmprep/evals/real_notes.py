"""Hover precision and recall on real campaign notes written by other GMs (bench/data/real-notes).

The notes' text is not in the repository: ``bench/data/real-notes/fetch.py`` rebuilds it in a cache
folder from the recorded repository commits. Labels are character offsets into that text, with the
surface text to detect drift:

- ``label: "rule"``: a rule reference a GM would want hovered, with the acceptable entry ids
  (``ids``; empty with ``absent: true`` when the rules store has no such entry);
- ``label: "noise"``: a span some matcher could hover that a GM would not want hovered, with a
  reason class (markup, link target, proper-name part, everyday sense, ...).

Predictions come from the same scan as hover (``kg.note_scan.NoteScanner``, see ``note_scanner``).
Gold is exhaustive over the labelled notes, so every predicted mention that matches no gold span is
a false positive, judged or not. Matching rule: a predicted mention matches a gold span when their
character spans overlap and the predicted entry id is one of the gold span's acceptable ids, or when the prediction
is a name-only entry of a book gmprep does not hold (``other:`` ids: the hover says which book prints it) and the gold
span is a rule reference whose entry the store lacks (``absent``). ``recall_in_store`` counts the store's entries only.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from gmprep.common.errors import GmprepError
from gmprep.kg.names import OTHER_ID_PREFIX

# A split is "tune" or a held-out split "heldout", "heldout2", "heldout3", ... (each a set of GMs labelled
# before any scorer was run on it; held out from tuning). "both" asks for tune and heldout together.
SPLIT_PATTERN = r"^(tune|heldout[0-9]*)$"
Split = str


def check_split(name: str) -> str:
    """``name`` if it names a split (or ``both``), else a GmprepError: the one rule for split names."""
    if name == "both" or re.fullmatch(SPLIT_PATTERN, name):
        return name
    raise GmprepError(f"unknown split {name!r}: use tune, heldout, heldout2, heldout3, ... or both")


class RealSource(BaseModel):
    """One fetched note: where it comes from and which split it belongs to."""

    id: str
    gm: str
    repo: str
    commit: str
    path: str
    licence: str = ""
    split: str = Field(pattern=SPLIT_PATTERN)  # heldout2, heldout3, ...: GMs labelled after heldout had been used
    kind: str = ""
    sha256: str | None = None


class Judgement(BaseModel):
    """One labelled span of a note."""

    doc: str
    start: int
    end: int
    text: str
    label: Literal["rule", "noise"]
    ids: list[str] = Field(default_factory=list)
    absent: bool = False  # a rule reference whose entry the store lacks
    reason: str | None = None  # noise class
    note: str | None = None


class Predicted(BaseModel):
    """A mention the matcher reported."""

    doc: str
    start: int
    end: int
    text: str
    id: str


class RealReport(BaseModel):
    """Precision, recall and F1 of one split, with false positives by reason."""

    split: str
    docs: int
    judged: int
    gold: int
    gold_in_store: int
    predicted: int
    true_positives: int
    precision: float
    recall: float
    recall_in_store: float
    f1: float
    f1_in_store: float
    false_positives_by_reason: dict[str, int]
    false_positives: list[dict] = Field(default_factory=list)
    missed: list[dict] = Field(default_factory=list)


def default_cache() -> Path:
    """The folder fetch.py writes the notes' text to."""
    env = os.environ.get("GMPREP_REAL_NOTES")
    return Path(env) if env else Path(".cache") / "real-notes"


def load_sources(folder: Path) -> list[RealSource]:
    """The sources listed in ``folder/sources.json``."""
    path = folder / "sources.json"
    if not path.exists():
        raise GmprepError(f"no sources.json in {folder}")
    return [RealSource(**s) for s in json.loads(path.read_text(encoding="utf-8"))["sources"]]


def load_text(src: RealSource, cache: Path | None = None) -> str:
    """The fetched text of one note (fetch.py must have run)."""
    path = (cache or default_cache()) / f"{src.id}.md"
    if not path.exists():
        raise GmprepError(f"{path} is missing: run `python bench/data/real-notes/fetch.py` first")
    return path.read_bytes().decode("utf-8")


def load_judgements(folder: Path) -> list[Judgement]:
    """Every label of ``folder/labels/*.jsonl``."""
    out: list[Judgement] = []
    for f in sorted((folder / "labels").glob("*.jsonl")):
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    out.append(Judgement(**json.loads(line)))
                except (ValueError, TypeError) as exc:
                    raise GmprepError(f"{f}:{n}: bad label ({exc})") from exc
    return out


def check_offsets(judgements: list[Judgement], texts: dict[str, str]) -> None:
    """Every label's surface text must still be at its offsets (else the note drifted)."""
    for j in judgements:
        if j.doc not in texts:
            continue
        got = texts[j.doc][j.start:j.end]
        if got != j.text:
            raise GmprepError(f"{j.doc}:{j.start}: label {j.text!r} but the note has {got!r} (text drifted)")


def note_scanner(names, settings=None):
    """The scanner hover uses (``kg.note_scan.NoteScanner``: the server's ``DocumentCache`` and
    ``gmprep mentions`` both scan through it), with default hover settings (or ``settings``) and the
    shipped scorer."""
    from gmprep.common.settings import HoverSettings
    from gmprep.kg.note_scan import NoteScanner, load_scorer

    return NoteScanner(names, settings or HoverSettings(), load_scorer())


def predict_all(text: str, scanner) -> list:
    """The mentions hover would show for a whole note, through the one shared scan."""
    return scanner.scan(text).mentions


def overlaps(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    """Whether two half-open character spans share at least one character."""
    return a_start < b_end and b_start < a_end


def score(split: str, judgements: list[Judgement], predicted: list[Predicted], docs: int = 0) -> RealReport:
    """Score predictions against exhaustive gold spans (see the module docstring for the rule)."""
    gold = [j for j in judgements if j.label == "rule"]
    noise = [j for j in judgements if j.label == "noise"]
    gold_by_doc: dict[str, list[Judgement]] = {}
    for g in gold:
        gold_by_doc.setdefault(g.doc, []).append(g)
    noise_by_doc: dict[str, list[Judgement]] = {}
    for z in noise:
        noise_by_doc.setdefault(z.doc, []).append(z)
    found: set[int] = set()
    tp = 0
    reasons: Counter[str] = Counter()
    fps: list[dict] = []
    for p in predicted:
        hit = False
        other = p.id.startswith(OTHER_ID_PREFIX)
        for g in gold_by_doc.get(p.doc, []):
            if overlaps(p.start, p.end, g.start, g.end) and (p.id in g.ids or (other and (g.absent or not g.ids))):
                found.add(id(g))
                hit = True
        if hit:
            tp += 1
            continue
        reason = _fp_reason(p, gold_by_doc.get(p.doc, []), noise_by_doc.get(p.doc, []))
        reasons[reason] += 1
        fps.append({"doc": p.doc, "start": p.start, "text": p.text, "id": p.id, "reason": reason})
    in_store = [g for g in gold if g.ids and not g.absent]
    found_in_store = sum(id(g) in found for g in in_store)
    precision = tp / len(predicted) if predicted else 1.0
    recall = len(found) / len(gold) if gold else 1.0
    recall_in_store = found_in_store / len(in_store) if in_store else 1.0
    return RealReport(
        split=split, docs=docs, judged=len(judgements), gold=len(gold), gold_in_store=len(in_store),
        predicted=len(predicted), true_positives=tp,
        precision=round(precision, 4), recall=round(recall, 4), recall_in_store=round(recall_in_store, 4),
        f1=round(_f1(precision, recall), 4), f1_in_store=round(_f1(precision, recall_in_store), 4),
        false_positives_by_reason=dict(reasons.most_common()),
        false_positives=fps,
        missed=[{"doc": g.doc, "start": g.start, "text": g.text, "ids": g.ids, "absent": g.absent}
                for g in gold if id(g) not in found],
    )


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def _fp_reason(p: Predicted, gold: list[Judgement], noise: list[Judgement]) -> str:
    """Why a false positive is wrong: the judged noise span it overlaps most, else 'wrong entry'
    when it overlaps a rule reference with another id, else 'unjudged'."""
    best, best_len = None, 0
    for z in noise:
        if overlaps(p.start, p.end, z.start, z.end):
            length = min(p.end, z.end) - max(p.start, z.start)
            if length > best_len:
                best, best_len = z, length
    if best is not None:
        return best.reason or "noise"
    if any(overlaps(p.start, p.end, g.start, g.end) for g in gold):
        return "wrong entry"
    return "unjudged"


def evaluate(folder: Path, split: Split, cache: Path | None = None, names=None, settings=None) -> list[RealReport]:
    """Reports for the requested split(s): one per split, plus 'all' for ``both``; ``settings``: the hover
    settings to scan with (default: the defaults)."""
    check_split(split)
    sources = load_sources(folder)
    judgements = load_judgements(folder)
    if names is None:
        from gmprep.common.settings import HoverSettings
        from gmprep.server.state import RulesBook

        names = RulesBook.from_corpus((settings or HoverSettings()).other_books).names
    wanted = ["tune", "heldout"] if split == "both" else [split]
    texts = {s.id: load_text(s, cache) for s in sources if s.split in wanted}
    check_offsets(judgements, texts)
    scanner = note_scanner(names, settings)
    preds: dict[str, list[Predicted]] = {}
    for s in sources:
        if s.id in texts:
            preds[s.id] = [
                Predicted(doc=s.id, start=m.start, end=m.end, text=m.text, id=m.node_id)
                for m in predict_all(texts[s.id], scanner)
            ]
    reports = []
    groups = [(w, [s.id for s in sources if s.split == w]) for w in wanted]
    if split == "both":
        groups.append(("all", [s.id for s in sources if s.split in wanted]))  # not the other held-out splits
    for name, ids in groups:
        keep = set(ids)
        reports.append(score(
            name, [j for j in judgements if j.doc in keep],
            [p for d in ids for p in preds.get(d, [])], docs=len(keep),
        ))
    return reports
