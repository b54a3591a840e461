"""Faithfulness of generated answers: the support check (``gmprep.core.agents.support``) on every
answered question, citation precision against gold, agreement with hand judgements, and the fit of
the support check's weights on the calibration part of those judgements.

Judgements (``bench/data/faithfulness/judgements-dev.jsonl``), one line per sentence:
``{"id", "index", "sentence", "cited", "label": "supported" | "unsupported" | "not_claim", "split"}``
where ``index`` is the sentence's place in ``split_sentences(answer text)`` and ``split`` is
``calibrate`` or ``test`` (by question: every sentence of one answer is in the same part).
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from gmprep.common.errors import GmprepError
from gmprep.core.agents.support import Passage, SupportChecker, SupportModel, SupportReport, split_sentences

LABELS = ("supported", "unsupported", "not_claim")


class Judgement(BaseModel):
    """A hand judgement of one sentence of one generated answer."""

    id: str
    index: int
    sentence: str
    cited: list[str] = []
    label: str
    split: str = "test"
    note: str = ""


def split_of(question_id: str) -> str:
    """``calibrate`` or ``test``, fixed by a hash of the question id (half each, independent of order)."""
    return "calibrate" if int(hashlib.sha1(question_id.encode()).hexdigest(), 16) % 2 == 0 else "test"


def passages_of(row: dict) -> list[Passage]:
    """The numbered passages of a saved answer (a list of passages, or an id -> {name, text} map)."""
    raw = row.get("passages") or []
    if isinstance(raw, dict):
        return [Passage(source_id=k, name=v.get("name", ""), text=v.get("text", "")) for k, v in raw.items()]
    return [Passage.model_validate(p) for p in raw]


def scored(row: dict) -> bool:
    """Whether an answer is checked: it answered (fully or in part) from passages."""
    return row.get("outcome") in ("answered", "partial") and bool(row.get("text"))


def citation_precision(cited: Sequence[str], gold: Sequence[str]) -> float | None:
    """Share of the cited ids that are gold (None when nothing was cited)."""
    return sum(c in set(gold) for c in cited) / len(cited) if cited else None


def support_summary(report: SupportReport) -> dict:
    """What the per-question results keep of a support report."""
    claims = report.claims
    return {
        "sentences": len(report.sentences),
        "claims": len(claims),
        "supported": sum(bool(s.supported) for s in claims),
        "supported_share": None if report.supported_share is None else round(report.supported_share, 4),
        "verdicts": [s.model_dump(include={"index", "text", "kind", "cited", "claim", "supported", "score", "reason"})
                     for s in report.sentences],
    }


def totals(rows: Sequence[dict]) -> dict:
    """Unsupported-sentence rate (over all claims), mean supported share per answer, uncited claims."""
    sums = [r["support"] for r in rows if r.get("support")]
    claims = sum(s["claims"] for s in sums)
    supported = sum(s["supported"] for s in sums)
    shares = [s["supported_share"] for s in sums if s["supported_share"] is not None]
    uncited = sum(1 for s in sums for v in s["verdicts"] if v["claim"] and v["reason"] == "no citation")
    return {
        "answers": len(sums),
        "claims": claims,
        "unsupported_rate": round(1 - supported / claims, 4) if claims else None,
        "uncited_claim_rate": round(uncited / claims, 4) if claims else None,
        "mean_supported_share": round(statistics.fmean(shares), 4) if shares else None,
    }


def load_judgements(path: Path) -> list[Judgement]:
    if not path.is_file():
        raise GmprepError(f"judgements file {path} not found")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                j = Judgement.model_validate_json(line)
            except ValueError as exc:
                raise GmprepError(f"{path}:{n}: not a judgement line ({exc})") from exc
            if j.label not in LABELS:
                raise GmprepError(f"{path}:{n}: label {j.label!r} is not one of {', '.join(LABELS)}")
            out.append(j)
    return out


def _verdict_label(v: dict) -> str:
    return "not_claim" if not v["claim"] else ("supported" if v["supported"] else "unsupported")


def agreement(rows: Sequence[dict], judgements: Sequence[Judgement]) -> dict:
    """Share of judged sentences where the check's label (supported / unsupported / not a claim) is the
    judge's, per split, plus the judged unsupported rate. A judged sentence whose answer was regenerated
    (its text differs) is skipped and counted."""
    verdicts: dict[tuple[str, int], dict] = {}
    for r in rows:
        for v in (r.get("support") or {}).get("verdicts", []):
            verdicts[(r["id"], v["index"])] = v
    out: dict = {}
    for part in ("calibrate", "test", "all"):
        js = [j for j in judgements if part == "all" or j.split == part]
        matched = [(j, verdicts.get((j.id, j.index))) for j in js]
        pairs = [(j, v) for j, v in matched if v is not None and v["text"] == j.sentence]
        agree = sum(_verdict_label(v) == j.label for j, v in pairs)
        claims = [j for j, _ in pairs if j.label != "not_claim"]
        judged_unsup = sum(j.label == "unsupported" for j in claims)
        confusion: dict[str, int] = {}
        for j, v in pairs:
            key = f"{j.label}->{_verdict_label(v)}"
            confusion[key] = confusion.get(key, 0) + 1
        # the hard part: claims that cite a passage (uncited ones are unsupported by rule on both sides)
        cited = [(j, v) for j, v in pairs if j.label != "not_claim" and j.cited]
        # of those, the sentences the model wrote (not the quoted passages of a fallback answer)
        written = [(j, v) for j, v in cited if v.get("kind", "text") == "text"]
        out[part] = {
            "sentences": len(pairs),
            "skipped": len(js) - len(pairs),
            "agreement": round(agree / len(pairs), 4) if pairs else None,
            "cited_claims": len(cited),
            "cited_claims_agreement": round(sum(_verdict_label(v) == j.label for j, v in cited) / len(cited), 4)
            if cited else None,
            "written_cited_claims": len(written),
            "written_cited_claims_agreement": round(
                sum(_verdict_label(v) == j.label for j, v in written) / len(written), 4) if written else None,
            "judged_unsupported_rate": round(judged_unsup / len(claims), 4) if claims else None,
            "confusion": dict(sorted(confusion.items())),
        }
    return out


def _fit_logistic(x: list[list[float]], y: list[int], l2: float = 1.0, steps: int = 4000) -> tuple[list[float], float]:
    """Plain L2-regularised logistic regression by gradient descent on standardised features (tens of
    rows: no solver needed); the weights returned apply to the raw features."""
    n, d = len(x), len(x[0])
    mean = [statistics.fmean(r[k] for r in x) for k in range(d)]
    std = [statistics.pstdev(r[k] for r in x) or 1.0 for k in range(d)]
    x = [[(r[k] - mean[k]) / std[k] for k in range(d)] for r in x]
    w, b = [0.0] * d, 0.0
    lr = 0.5
    for _ in range(steps):
        gw, gb = [l2 * wi / n for wi in w], 0.0
        for xi, yi in zip(x, y, strict=True):
            p = 1 / (1 + math.exp(-(b + sum(a * c for a, c in zip(w, xi, strict=True)))))
            for k in range(d):
                gw[k] += (p - yi) * xi[k] / n
            gb += (p - yi) / n
        w = [wi - lr * g for wi, g in zip(w, gw, strict=True)]
        b -= lr * gb
    raw = [w[k] / std[k] for k in range(d)]
    return raw, b - sum(raw[k] * mean[k] for k in range(d))


def fit(rows: Sequence[dict], judgements: Sequence[Judgement], checker: SupportChecker,
        feature_sets: Sequence[Sequence[str]]) -> tuple[SupportModel, list[dict]]:
    """Fit each feature set on the calibration judgements (claims that cite a passage and state no number
    the passage lacks: the rules decide the others) and pick the best by calibration accuracy (ties: fewer
    features). Returns the model and every candidate's calibration and test accuracy."""
    by_id = {r["id"]: r for r in rows}
    data: dict[str, list[tuple[dict[str, float], int]]] = {"calibrate": [], "test": []}
    for j in judgements:
        row = by_id.get(j.id)
        if row is None or j.label == "not_claim":
            continue
        sents = split_sentences(row["text"])
        if j.index >= len(sents) or sents[j.index].text != j.sentence:
            continue
        from gmprep.core.agents.support import named_elsewhere, resolve

        passages = passages_of(row)
        cited = resolve(sents[j.index].markers, passages)
        if not cited:
            continue
        if named_elsewhere(j.sentence, cited, passages):
            continue  # decided by rule, as the number rule below
        texts = [p.text for p in passages if p.source_id in cited]
        feats = checker.features(j.sentence, texts, names=None)
        if feats["numbers_any"] < 1.0:
            continue
        data[j.split].append((feats, int(j.label == "supported")))
    if not data["calibrate"]:
        raise GmprepError("no calibration judgements match these answers")
    candidates = []
    for names in feature_sets:
        x = [[f[n] for n in names] for f, _ in data["calibrate"]]
        y = [label for _, label in data["calibrate"]]
        w, b = _fit_logistic(x, y)
        model = SupportModel(features=list(names), weights=[round(v, 4) for v in w], bias=round(b, 4))
        scores = {"features": list(names), "calibrate_cv": _cv_accuracy(x, y),
                  "calibrate": _accuracy(model, data["calibrate"]), "test": _accuracy(model, data["test"])}
        candidates.append((model, scores))
    # chosen by 5-fold cross-validated accuracy within the calibration part (fitted accuracy saturates on a
    # few dozen pairs), fewer features on ties; the test part is only reported
    best, _ = max(candidates, key=lambda c: (c[1]["calibrate_cv"], -len(c[0].features)))
    table = [c[1] for c in candidates]
    best.manifest = {"calibration_pairs": len(data["calibrate"]), "test_pairs": len(data["test"]),
                     "candidates": table}
    return best, table


def _accuracy(model: SupportModel, rows: list[tuple[dict[str, float], int]]) -> float | None:
    if not rows:
        return None
    return round(sum((model.probability(f) >= model.threshold) == bool(lab) for f, lab in rows) / len(rows), 4)


def _cv_accuracy(x: list[list[float]], y: list[int], folds: int = 5) -> float:
    """Accuracy of fits on 4/5 of the rows, each predicting the held-out fifth (rows dealt round-robin)."""
    right = 0
    for k in range(folds):
        train = [i for i in range(len(x)) if i % folds != k]
        held = [i for i in range(len(x)) if i % folds == k]
        if not held or len({y[i] for i in train}) < 2:
            continue
        w, b = _fit_logistic([x[i] for i in train], [y[i] for i in train], steps=1500)
        for i in held:
            z = b + sum(a * c for a, c in zip(w, x[i], strict=True))
            right += (z >= 0) == bool(y[i])
    return round(right / len(x), 4)


def write_model(model: SupportModel, path: Path) -> None:
    path.write_text(json.dumps(model.model_dump(), indent=1) + "\n", encoding="utf-8")
