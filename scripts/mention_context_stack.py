"""Fit and measure the context model's correction of the hover confidence (issue 11; docs/mention-scorer.md).

    python scripts/mention_context_stack.py SCORES [RECIPE]     # SCORES: scores.jsonl.gz from the GPU run

Each tuning candidate has the shipped pipeline's logit ``lr`` and its out-of-GM context logit (``RECIPE``,
default both3: the model that scored it never saw its GM). The correction keeps ``lr`` as an offset,
``logit' = lr + a + b * clip(ctx)``, fitted by maximum likelihood on every GM (what ships) and, for the
figures, leaving one GM out; printed: a, b, pooled AUC and precision/recall at the shipped ``normal``.
"""

from __future__ import annotations

import gzip
import json
import sys

import numpy as np
from scipy.optimize import minimize
from sklearn.metrics import roc_auc_score

CLIP = 8.0


def main(path: str, recipe: str = "both3") -> None:
    spans = [json.loads(line) for line in gzip.open(path, "rt", encoding="utf-8")]
    lr = np.array([s["lr"] for s in spans])
    ctx = np.clip(np.array([s[recipe] for s in spans]), -CLIP, CLIP)
    y = np.array([s["label"] for s in spans])
    gms = np.array([s["gm"] for s in spans])

    def fit(mask: np.ndarray) -> np.ndarray:
        def nll(p: np.ndarray) -> float:
            z = lr[mask] + p[0] + p[1] * ctx[mask]
            return float(np.sum(np.logaddexp(0, z) - y[mask] * z))

        return minimize(nll, np.array([0.0, 0.2])).x

    a, b = fit(np.ones(len(y), bool))
    out = np.zeros(len(y))
    for gm in sorted(set(gms)):
        aa, bb = fit(gms != gm)
        out[gms == gm] = lr[gms == gm] + aa + bb * ctx[gms == gm]
    normal = json.load(open("kg/mention_scorer_model/mention_scorer.json", encoding="utf-8"))["thresholds"]["normal"]
    t = float(np.log(normal / (1 - normal)))
    rep = {"a": round(float(a), 3), "b": round(float(b), 3), "clip": CLIP, "spans": len(y), "gms": len(set(gms))}
    for name, z in (("lr", lr), ("corrected, out of GM", out)):
        sel = z >= t
        rep[name] = {"auc": round(float(roc_auc_score(y, z)), 4), "precision_at_normal": round(float(y[sel].mean()), 3),
                     "recall_at_normal": round(float(y[sel].sum() / y.sum()), 3)}
        rep[name]["auc_per_gm"] = {g: round(float(roc_auc_score(y[gms == g], z[gms == g])), 4) for g in sorted(set(gms))}
    print(json.dumps(rep, indent=1))


if __name__ == "__main__":
    main(*sys.argv[1:])
