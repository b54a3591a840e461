"""Learning from judged real notes: a residual layer over the corpus-trained mention scorer.

The scorer (``kg.mention_scorer``) is trained on the corpus's own prose, labelled by its links; a GM's
notes are another genre (session logs, shorthand, narrative prep). With judged spans from several GMs'
notes (``bench/data/real-notes``, the tuning split), one more logistic regression reads the corpus
model's logit together with the same features and learns what the corpus could not teach:

    z' = a * z_corpus + sum_k w_k * x_k + b

Strongly regularised (``C``), so the corpus model stays the backbone and the notes only correct it. Since
``z_corpus`` is itself linear in the features, ``z'`` is too: the layer folds into the model file's weights
(``fold``) and scoring costs exactly what it cost before. The corpus model's own weights stay in the file
(``corpus_model``), so fitting again starts from them, never from an earlier fit.

Whether it generalises is measured leaving one GM out (``leave_one_gm_out``): for each GM, the layer,
the note stage and the thresholds are all fitted on the other GMs' notes only, then applied to this GM's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from gmprep.common.errors import GmprepError
from gmprep.kg.mention_scorer import NOTE_FEATURES, MentionScorer, SpanContext
from gmprep.kg.mention_scorer_train import (
    LabelledSpan,
    StageSpan,
    _group,
    _held_report,
    calibrate,
    fit_note_stage,
    judged_row,
    labelled_notes,
)
from gmprep.kg.names import NameIndex

# Inverse L2 strength of the layer (on standardised inputs), chosen leaving one GM out on the tuning
# notes (docs/mention-scorer.md).
DEFAULT_C = 0.01
_CORPUS_KEYS = ("features", "weights", "bias", "means", "scales")


@dataclass
class NoteCandidate:
    """One candidate the note scanner proposes in a labelled note (judged or not: the section means
    read every candidate), with the features the scorer reads there."""

    doc: str
    gm: str
    section: tuple[str, ...]
    start: int
    end: int
    features: dict[str, float]
    z: float  # the corpus model's logit
    label: int | None  # 1 the GM meant this entry, 0 noise or another entry, None not judged
    group: str  # how the scanner treats it below the threshold (``mention_scorer_train._group``)
    node_id: str = ""  # the entry it would hover (the note's other candidates for it are evidence)
    etype: str = ""  # that entry's type


def corpus_model(model: dict) -> dict:
    """The corpus-trained model inside ``model`` (the file itself when no layer was folded in)."""
    base = model.get("corpus_model")
    out = {k: v for k, v in model.items() if k not in ("note_stage", "corpus_model", "real_notes")}
    if base:
        out.update({k: base[k] for k in _CORPUS_KEYS})
    return out


def note_candidates(labels: Path, notes_dir: Path, nodes: list, model: dict, groups: dict[str, str],
                    note_features: bool = True) -> list[NoteCandidate]:
    """Every candidate of the labelled notes with its features and the corpus model's logit. Refuses a
    held-out split. ``note_features=False`` leaves the whole-note features (``NOTE_FEATURES``) out, so a
    layer fitted on them gives them no weight."""
    from gmprep.kg.note_scan import NoteScanner

    if "heldout" in labels.name:
        raise GmprepError("refusing to learn from a held-out split: pass the tuning labels")
    base = MentionScorer(corpus_model(model))
    recorded: list[dict[str, float]] = []

    class _Recorder(MentionScorer):
        """Keeps each candidate's features; its "confidence" is the candidate's number, so a mention
        finds its features even when the scanner reuses a repeated paragraph's decisions."""

        def score(self, text, start, end, candidate, ctx=None):
            recorded.append(self.featurize(text, start, end, candidate, ctx or SpanContext()))
            return len(recorded) * 1e-4

    rec = _Recorder(corpus_model(model))
    names = NameIndex.build([n for n in nodes if n.kind == "entry"])
    out: list[NoteCandidate] = []
    for doc, text, rows in labelled_notes(labels, notes_dir):
        recorded.clear()
        scanner = NoteScanner(names, scorer=rec)  # a fresh chunk cache: every candidate is scored here
        for sc in scanner.candidates(text):
            f = recorded[round(sc.mention.confidence * 1e4) - 1]
            if note_features:
                f = f | dict(zip(NOTE_FEATURES, sc.note_features, strict=True))
            hit = judged_row(rows, sc.start, sc.end, sc.mention.node_id)
            label = None if hit is None else int(hit["label"] == "rule" and sc.mention.node_id in (hit.get("ids") or []))
            z = base._intercept + sum(base._coef.get(k, 0.0) * v for k, v in f.items() if v)
            out.append(NoteCandidate(doc, groups.get(doc, doc.split("-")[0]), (doc, *sc.section), sc.start, sc.end,
                                     f, z, label, _group(sc), sc.mention.node_id, sc.etype))
    return out


@dataclass
class Residual:
    """The fitted layer in raw feature space: ``z' = alpha * z + sum(coef[k] * x[k]) + bias``."""

    alpha: float
    coef: dict[str, float]
    bias: float

    def logit(self, c: NoteCandidate) -> float:
        return self.alpha * c.z + self.bias + sum(self.coef.get(k, 0.0) * v for k, v in c.features.items() if v)


def fit_residual(cands: list[NoteCandidate], c: float = DEFAULT_C) -> Residual:
    """The layer, fitted on the judged candidates: a logistic regression with the corpus logit as an
    offset (``z' = z + beta * z + w . x + b``), L2 on ``beta`` and ``w`` (standardised, strength ``1 / c``),
    so where the notes say nothing (a feature they never show, such as an italic spell name) the corpus
    model's weights stand. Newton steps; a few hundred to a few thousand rows, ~60 columns."""
    import numpy as np

    judged = [x for x in cands if x.label is not None]
    if len({x.label for x in judged}) < 2:
        raise GmprepError("the labels give no rule and noise spans the scorer can read")
    names = sorted({k for x in judged for k in x.features})
    raw = np.array([[x.z] + [x.features.get(k, 0.0) for k in names] for x in judged], dtype=float)
    mu, sd = raw.mean(0), raw.std(0)
    sd[sd == 0] = 1.0
    X = np.hstack([(raw - mu) / sd, np.ones((len(judged), 1))])
    offset = np.array([x.z for x in judged])
    y = np.array([x.label for x in judged], dtype=float)
    reg = np.eye(X.shape[1]) / c
    reg[-1, -1] = 0.0  # the intercept is not shrunk
    theta = np.zeros(X.shape[1])

    def loss(t):  # the penalised negative log-likelihood: convex, so damped Newton steps reach its minimum
        z = offset + X @ t
        return float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * t @ reg @ t)

    current = loss(theta)
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(offset + X @ theta, -30, 30)))
        grad = X.T @ (p - y) + reg @ theta
        hess = (X * (p * (1 - p))[:, None]).T @ X + reg + 1e-9 * np.eye(X.shape[1])
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]  # lstsq: a column the notes never vary stays 0
        if not np.isfinite(step).all():
            raise GmprepError("the note layer did not converge: try a smaller --residual-c")
        # halve a step that would raise the loss (a full Newton step can overshoot and diverge)
        for _ in range(30):
            trial = loss(theta - step)
            if trial <= current + 1e-12:
                break
            step = step / 2.0
        theta -= step
        current = min(current, trial)
        if float(np.abs(step).max()) < 1e-9:
            break
    w = theta[:-1] / sd
    bias = float(theta[-1] - float(np.dot(theta[:-1], mu / sd)))
    return Residual(1.0 + float(w[0]), {k: float(v) for k, v in zip(names, w[1:], strict=True)}, bias)


def fold(model: dict, layer: Residual) -> dict:
    """``model`` with the layer folded into its weights (raw space: means 0, scales 1); the corpus
    model's own weights kept under ``corpus_model``."""
    base = MentionScorer(corpus_model(model))
    names = sorted(set(base.features) | set(layer.coef))
    coef = {k: layer.alpha * base._coef.get(k, 0.0) + layer.coef.get(k, 0.0) for k in names}
    out = dict(model)
    out["corpus_model"] = model.get("corpus_model") or {k: model[k] for k in _CORPUS_KEYS if k in model}
    out["features"] = names
    out["weights"] = [round(coef[k], 8) for k in names]
    out["bias"] = round(layer.alpha * base._intercept + layer.bias, 8)
    out["means"] = [0.0] * len(names)
    out["scales"] = [1.0] * len(names)
    return out


def section_means(cands: list[NoteCandidate], zs: list[float]) -> list[float]:
    """``kg.note_scan.section_means`` for every note of ``cands`` (all candidates of a note), over ``zs``."""
    from gmprep.kg.note_scan import section_mean_logits

    by_doc: dict[str, list[int]] = {}
    for i, x in enumerate(cands):
        by_doc.setdefault(x.doc, []).append(i)
    out = [0.0] * len(cands)
    for idx in by_doc.values():
        for i, m in zip(idx, section_mean_logits([cands[i].section for i in idx], [zs[i] for i in idx]), strict=True):
            out[i] = m
    return out


def evidence_of(cands: list[NoteCandidate], zs: list[float], names: tuple[str, ...]) -> list[tuple[float, ...]]:
    """``kg.note_evidence.note_evidence`` for every note of ``cands`` (all candidates of a note), over ``zs``."""
    from gmprep.kg.note_evidence import note_evidence

    if not names:
        return [()] * len(cands)
    by_doc: dict[str, list[int]] = {}
    for i, x in enumerate(cands):
        by_doc.setdefault(x.doc, []).append(i)
    out: list[tuple[float, ...]] = [()] * len(cands)
    for idx in by_doc.values():
        ev = note_evidence(names, [cands[i].node_id for i in idx], [cands[i].etype for i in idx], [zs[i] for i in idx])
        for i, e in zip(idx, ev, strict=True):
            out[i] = e
    return out


def _scored(cands: list[NoteCandidate], layer: Residual | None, train: set[str], evidence: tuple[str, ...] = ()):
    """Logits, section means, the note's evidence, and the note stage fitted on the judged candidates of
    the GMs in ``train``."""
    zs = [layer.logit(x) if layer else x.z for x in cands]
    means = section_means(cands, zs)
    ev = evidence_of(cands, zs, evidence)
    stage = fit_note_stage([StageSpan(x.doc, x.start, x.end, x.label, zs[i], means[i], x.group, ev[i])
                            for i, x in enumerate(cands) if x.label is not None and x.gm in train], evidence=evidence)
    return zs, means, ev, stage


def _spans(cands, idx, zs, means, ev, stage) -> list[LabelledSpan]:
    return [LabelledSpan(cands[i].doc, cands[i].start, cands[i].end, int(cands[i].label or 0), "",
                         round(stage.adjust(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, zs[i])))), means[i], ev[i]), 4),
                         cands[i].group) for i in idx]


def out_of_gm(cands: list[NoteCandidate], c: float | None, gms: set[str],
              evidence: tuple[str, ...] = ()) -> list[LabelledSpan]:
    """Every judged candidate of the GMs in ``gms``, scored by a layer (``c`` None: none) and a note stage
    fitted on the other GMs of ``gms`` only: the scores a GM the model never saw gets."""
    out: list[LabelledSpan] = []
    for gm in sorted(gms):
        train = gms - {gm}
        if len({x.label for x in cands if x.label is not None and x.gm in train}) < 2:
            continue
        rest = [x for x in cands if x.gm in train]
        layer = fit_residual(rest, c) if c is not None else None
        zs, means, ev, stage = _scored(cands, layer, train, evidence)
        out += _spans(cands, [i for i, x in enumerate(cands) if x.label is not None and x.gm == gm], zs, means, ev, stage)
    return out


def leave_one_gm_out(cands: list[NoteCandidate], c: float | None = DEFAULT_C, normal_cap: float = 1.0,
                     rescue_cap: float = 1.0, precision_target: float | None = None,
                     evidence: tuple[str, ...] = (), balance: bool = False) -> tuple[dict[str, dict], list[LabelledSpan]]:
    """The whole procedure, measured on a GM it never saw. For each GM: thresholds chosen on the other
    GMs' out-of-GM scores (``out_of_gm`` among them: as the shipped thresholds are chosen), the layer
    (``c`` None: none, the corpus model alone) and the note stage fitted on the other GMs, applied to
    this GM's notes. Returns the per-GM report and every GM's out-of-GM scores (where the shipped
    thresholds are chosen). ``balance``: the thresholds weigh each GM's spans alike (``balance_by_gm``)."""
    from gmprep.kg.mention_scorer_train import balance_by_gm

    gms = {x.gm for x in cands if x.label is not None}
    gm_of = {x.doc: x.gm for x in cands}
    report: dict[str, dict] = {}
    for gm in sorted(gms):
        inner = out_of_gm(cands, c, gms - {gm}, evidence)
        train = gms - {gm}
        if not inner or len({x.label for x in inner}) < 2:
            continue
        rest = [x for x in cands if x.gm in train]
        layer = fit_residual(rest, c) if c is not None else None
        zs, means, ev, stage = _scored(cands, layer, train, evidence)
        mine = _spans(cands, [i for i, x in enumerate(cands) if x.label is not None and x.gm == gm], zs, means, ev,
                      stage)
        chosen_on = balance_by_gm(inner, gm_of) if balance else inner
        report[gm] = _held_report(mine, calibrate(chosen_on, normal_cap, rescue_cap, precision_target))
    return report, out_of_gm(cands, c, gms, evidence)


def ranking(spans: list[LabelledSpan], recalls: tuple[float, ...] = (0.6, 0.7, 0.8)) -> dict:
    """How well out-of-GM scores rank rules above noise, with no threshold: AUC and the precision of the
    smallest top slice holding each share of the rules (pooled over GMs)."""
    from gmprep.kg.mention_scorer_train import auc

    ranked = sorted(spans, key=lambda x: -x.score)
    rules = sum(x.label for x in ranked)
    at: dict[str, float] = {}
    for r in recalls:
        seen = 0
        for n, x in enumerate(ranked, 1):
            seen += x.label
            if rules and seen >= r * rules:
                at[f"{r:.1f}"] = round(seen / n, 4)
                break
    a = auc(spans)
    return {"auc": None if a is None else round(a, 4), "precision_at_recall": at}
