"""Fitting ``kg/hint_share.json``: which entry named inside a question is the one it asks about (issue 12).

Rows come labelled for free. Each written situation question (``bench/data/question-gen/written-*``, one asked
entry each) is read as it is and told long (``long_questions.lengthen``) with another entry named in passing: one
of its first BM25 neighbours that is a fair negative, as the reranker's trainer picks it. Every entry
``kg.query.analyze`` finds named in the text as a hint or a verb gives one row of ``kg.hint_share.features``:
1 when it is the asked entry, 0 otherwise (the passing name, or a name of the story). Questions are split by
question (``--holdout``) to report held-out AUC; ``--check`` files (the eval's question format, ``gold`` ids)
report AUC on real questions the model never saw.

    python -m gmprep.training.hint_share --store S --out kg/hint_share.json [--check tune.jsonl]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from gmprep.kg.hint_share import FEATURES, HintModel, features
from gmprep.training.long_questions import lengthen, pick_mention

WRITTEN = ("written-entry-situations.jsonl.gz", "written-entry-situations-2.jsonl.gz",
           "written-situations.jsonl.gz", "written-prose-situations.jsonl.gz")


def _rows(searcher, text: str, gold: set[str]) -> list[tuple[np.ndarray, int]]:
    qa = searcher.analyze(text)
    named = {nid: how for nid, how in qa.named.items() if how in ("hint", "verb")}
    return [(row, int(nid in gold)) for nid, row in features(qa.text, qa.spans, named).items()]


def written_items(paths: list[Path]) -> list[tuple[str, set[str], str]]:
    """``(question, gold ids, asked entry's name)`` of the written situation questions (they seldom name it)."""
    items = []
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                items += [(q, {rec["node_id"]}, rec.get("name", "")) for q in rec["questions"]]
    return items


def generated_items(store, n: int, seed: int) -> list[tuple[str, set[str], str]]:
    """Generated questions that name their entry ("How does the Trip action work?", "What are the prerequisites
    for Power Attack?") or name one entry and ask for the condition it links ("If I critically succeed with Trip,
    what does the target end up with?": gold Prone, the named Trip a negative): ``training.queries``."""
    from gmprep.training.queries import generate_queries

    nodes = {nd.node_id: nd for nd in store.iter_nodes(kinds=("entry",), origin_prefix="corpus:")}
    qs = generate_queries(list(nodes.values()), n, seed=seed)
    return [(q.query, {q.positive, *q.also_relevant}, nodes[q.positive].name) for q in qs
            if q.generator in ("name", "field", "link") and len(q.query.split()) >= 4]


def told_rows(searcher, items: list[tuple[str, set[str], str]], seed: int) -> tuple[list[list[tuple[np.ndarray, int]]], dict]:
    """Two groups of rows per question: as written, and told long with another entry named in passing (one of
    its first BM25 neighbours that is a fair negative, as the reranker's trainer picks it)."""
    rng = random.Random(seed)
    store = searcher.store
    groups: list[list[tuple[np.ndarray, int]]] = []
    counts = {"questions": 0, "with_mention": 0}
    for q, gold, name in items:
        counts["questions"] += 1
        groups.append(_rows(searcher, q, gold))
        fair = [nid for nid, _ in store.bm25(q, 12) if nid not in gold]
        nodes = store.get_many(fair)
        base = name.split(" (")[0].lower()
        fair = [nid for nid in fair if nid in nodes and not nodes[nid].is_prose and len(nodes[nid].name) >= 4
                and nodes[nid].name.split(" (")[0].lower() != base]
        other = pick_mention(fair, rng)
        counts["with_mention"] += bool(other)
        groups.append(_rows(searcher, lengthen(q, rng, avoid_name=name, mention=nodes[other].name if other else None), gold))
    return groups, counts


def check_rows(searcher, path: Path) -> list[list[tuple[np.ndarray, int]]]:
    """One group of rows per question of an eval file (``gold`` ids; follow-ups with a history skipped)."""
    groups = []
    for line in path.read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        if q.get("gold") and not q.get("history"):
            groups.append(_rows(searcher, q["question"], set(q["gold"])))
    return groups


def _xy(groups) -> tuple[np.ndarray, np.ndarray]:
    rows = [r for g in groups for r in g]
    if not rows:
        return np.zeros((0, len(FEATURES))), np.zeros(0)
    return np.stack([r for r, _ in rows]), np.asarray([y for _, y in rows])


def fit(parts: list[tuple[np.ndarray, np.ndarray, float]], c: float = 1.0) -> HintModel:
    """A standardised logistic regression over ``(x, y, row weight)`` parts."""
    from sklearn.linear_model import LogisticRegression

    parts = [p for p in parts if len(p[1])]
    x = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    w = np.concatenate([np.full(len(p[1]), p[2]) for p in parts])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    clf = LogisticRegression(C=c, max_iter=3000).fit((x - mean) / scale, y, sample_weight=w)
    return HintModel(features=list(FEATURES), mean=mean.tolist(), scale=scale.tolist(),
                     coef=clf.coef_[0].tolist(), intercept=float(clf.intercept_[0]))


def auc(p: list[float], y: np.ndarray) -> float | None:
    from sklearn.metrics import roc_auc_score

    if len(set(y.tolist())) < 2:
        return None
    return round(float(roc_auc_score(y, p)), 4)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=Path("bench/data/question-gen"))
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--generated", type=int, default=12000, help="generated queries drawn (the named ones are kept)")
    ap.add_argument("--holdout", type=float, default=0.2)
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--real", type=Path, nargs="*", default=[],
                    help="tuning questions (eval format) whose named entries are rows too, weight 1; never held-out sets")
    ap.add_argument("--synthetic-weight", type=float, default=1.0, help="the generated rows' weight")
    ap.add_argument("--folds", type=int, default=5, help="cross-validation by question over the --real rows")
    ap.add_argument("--check", type=Path, nargs="*", default=[], help="questions only scored (AUC), never fitted")
    args = ap.parse_args(argv)
    from gmprep.kg.search import Searcher
    from gmprep.kg.store import Store

    searcher = Searcher(Store.open(args.store, create=False))
    paths = [args.data / f for f in WRITTEN]
    items = written_items(paths) + generated_items(searcher.store, args.generated, args.seed)
    groups, counts = told_rows(searcher, items, args.seed)
    real = [g for path in args.real for g in check_rows(searcher, path) if g]
    rng = random.Random(args.seed + 1)
    held = set(rng.sample(range(len(groups) // 2), round(len(groups) // 2 * args.holdout)))
    # a question's short and long telling stay on one side of the split
    xs, ys = _xy([g for i, g in enumerate(groups) if i // 2 not in held])
    xh, yh = _xy([g for i, g in enumerate(groups) if i // 2 in held])
    model = fit([(xs, ys, args.synthetic_weight), (*_xy(real), 1.0)], args.c)
    report: dict = {"synthetic_rows": int(len(ys) + len(yh)), "synthetic_positives": int(ys.sum() + yh.sum()),
                    "synthetic_holdout_auc": auc([model.probability(r) for r in xh], yh)}
    if real:
        # each real question scored by a model fitted without it (all synthetic rows + the other folds)
        xa, ya = _xy(groups)
        fold = [i % args.folds for i in random.Random(args.seed + 2).sample(range(len(real)), len(real))]
        ps: list[float] = []
        ys_: list[int] = []
        for k in range(args.folds):
            m = fit([(xa, ya, args.synthetic_weight), (*_xy([g for g, f in zip(real, fold, strict=True) if f != k]), 1.0)], args.c)
            xk, yk = _xy([g for g, f in zip(real, fold, strict=True) if f == k])
            ps += [m.probability(r) for r in xk]
            ys_ += yk.tolist()
        report["real_rows"] = len(ys_)
        report["real_positives"] = int(sum(ys_))
        report["real_cv_auc"] = auc(ps, np.asarray(ys_))
    x, y = _xy(groups)
    model = fit([(x, y, args.synthetic_weight), (*_xy(real), 1.0)], args.c)  # the shipped fit reads every row
    for path in args.check:
        xc, yc = _xy(check_rows(searcher, path))
        report[f"check:{path.name}"] = {"rows": int(len(yc)), "positives": int(yc.sum()),
                                        "auc": auc([model.probability(r) for r in xc], yc)}
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in [*paths, *args.real])).hexdigest()
    model.manifest = {
        "fitted": datetime.now(UTC).isoformat(timespec="seconds"), "store": str(args.store),
        "data": [str(p) for p in paths], "real": [str(p) for p in args.real], "data_sha256": digest,
        "seed": args.seed, "c": args.c, "generated": args.generated, "synthetic_weight": args.synthetic_weight,
        "rows": int(len(y)), "positives": int(y.sum()), **counts, "report": report,
    }
    args.out.write_text(json.dumps(model.model_dump(), indent=1) + "\n", encoding="utf-8")
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
