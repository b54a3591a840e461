"""Is the mention scorer limited by being linear, or by what it reads? (issue 11, docs/hover.md)

Every judged candidate of the real notes' TUNING split is featurized as the note scanner sees it, and
each GM's candidates are scored by models fitted on the other GMs' (leave one GM out): logistic
regression on the features plus the shipped scorer's logit, gradient-boosted trees on the features
(with and without that logit), beside the shipped scorer itself (in-sample for the GMs its layer
saw). Prints the out-of-GM AUC per GM, their mean and the mean weighted by candidates.

    python bench/mention_layer_trees.py [--labels bench/data/real-notes/labels/tune.jsonl] [--notes .cache/real-notes]

Needs the training extra (scikit-learn). Refuses a held-out split (``real_note_examples`` does).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main() -> None:
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    from gmprep.kg import mention_scorer_train as T
    from gmprep.kg.mention_scorer import MentionScorer
    from gmprep.server.state import RulesBook

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", type=Path, default=Path("bench/data/real-notes/labels/tune.jsonl"))
    ap.add_argument("--notes", type=Path, default=Path(".cache/real-notes"))
    args = ap.parse_args()

    sc = MentionScorer.load()
    book = RulesBook.from_corpus()
    nodes = list(book.nodes.values()) if isinstance(book.nodes, dict) else list(book.nodes)
    ex = T.real_note_examples(args.labels, args.notes, nodes,
                              {"zipf": sc.zipf, "rule_logodds": sc.rule_logodds, "link_rate": sc.link_rate,
                               "frame_logodds": sc.frame_logodds})
    names = sorted({k for f in ex.feats for k in f})
    X = np.array([[f.get(k, 0.0) for k in names] for f in ex.feats])
    y = np.array(ex.y)
    g = np.array(ex.groups)
    base = np.array([sc._intercept + sum(sc._coef.get(k, 0.0) * v for k, v in f.items() if v) for f in ex.feats])
    Xb = np.column_stack([X, base])
    print(f"{len(y)} judged candidates, {y.mean():.3f} rules, {len(set(g))} GMs")

    def trees():
        return HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15,
                                              min_samples_leaf=20, l2_regularization=1.0, random_state=0)

    rows: dict[str, dict[str, float]] = {}
    for gm in sorted(set(g)):
        te = g == gm
        tr = ~te
        if len(set(y[te].tolist())) < 2:
            continue
        r = {"n": float(te.sum()), "shipped": roc_auc_score(y[te], base[te])}
        m = LogisticRegression(C=1.0, max_iter=3000).fit(Xb[tr], y[tr])
        r["logistic+shipped"] = roc_auc_score(y[te], m.predict_proba(Xb[te])[:, 1])
        r["trees"] = roc_auc_score(y[te], trees().fit(X[tr], y[tr]).predict_proba(X[te])[:, 1])
        r["trees+shipped"] = roc_auc_score(y[te], trees().fit(Xb[tr], y[tr]).predict_proba(Xb[te])[:, 1])
        rows[gm] = r
    keys = ["shipped", "logistic+shipped", "trees", "trees+shipped"]
    for gm, r in rows.items():
        print(f"{gm[:40]:40s} n={int(r['n']):5d} " + " ".join(f"{k} {r[k]:.3f}" for k in keys))
    total = sum(r["n"] for r in rows.values())
    print("mean     " + " ".join(f"{k} {np.mean([r[k] for r in rows.values()]):.3f}" for k in keys))
    print("weighted " + " ".join(f"{k} {sum(r[k] * r['n'] for r in rows.values()) / total:.3f}" for k in keys))


if __name__ == "__main__":
    main()
