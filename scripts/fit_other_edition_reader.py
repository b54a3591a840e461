#!/usr/bin/env python3
"""Fit the other-edition reader: per word n-gram weights contrasting other games' rules text (Pathfinder 1e, D&D 5e
SRD, Starfinder 1e) with Pathfinder 2e's (the bundled store's entries and the pre-Remaster Pf2eTools data), written to
``core/agents/data/other-edition-ngrams.json.gz`` with each source's repository, commit and licence.

The weights come from the books' text only, never from questions: for each word unigram and bigram,

    w = log((f_other + c) / (f_pf2 + c))

where ``f`` is the n-gram's rate per million n-grams of that side and ``c`` (``--smooth``, per million) shrinks an
n-gram rare on both sides to 0: words neither side uses (an asker's casual prose) weigh nothing. Kept: n-grams seen
at least ``--min-count`` times in all, with ``|w| >= --min-weight`` (clipped to ``--clip``). A question's score is the
sum of the weights of the distinct n-grams it contains (``core/agents/edition.py``); ``calibration`` maps it to a
probability with a logistic fit on windows of held-aside documents of both sides (every tenth document, not used for
the weights), so the probability is the books' own, and only the threshold that uses it is chosen on questions.

    M=/work/.mirror; .venv/bin/python scripts/fit_other_edition_reader.py \
        --pf1 $M/jasontankapps+pathfinder-data-1-e/repo --dnd5e $M/5e-bits+5e-database/repo \
        --sf1 $M/Obsidian-TTRPG-Community+Starfinder-SRD-Markdown/repo --pf2tools $M/Git-GoR+Pf2eTools/repo \
        --store /work/scratch/store29
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import re
import sys
import zlib
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from derive_other_systems_terms import git_files, git_head, git_show, strings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "core" / "agents" / "data" / "other-edition-ngrams.json.gz"
sys.path.insert(0, str(ROOT))
from core.agents.edition import STOP, ngrams, tokens  # noqa: E402  (the runtime's own reading of text)

_PF1_LINK = re.compile(r"‹(?:SOURCE[^›]*|[^›/]*/([^›]*))›")
_TOOLS_TAG = re.compile(r"\{@\w+ ([^}|]*)(?:\|[^}]*)?\}")
_PF1_MARKUP = re.compile(r"\{[^{}]*\}|@HL|@[A-Z]{1,3}\b")
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
_SF1_SOURCE = re.compile(r"^\*\*Source\*\*.*$", re.MULTILINE)


def kept(gram: tuple[str, ...]) -> bool:
    return not all(w in STOP for w in gram)


def prose(values: list[str]) -> list[str]:
    """A JSON source's prose: strings with a space, at least 20 characters (keys, ids and source codes dropped)."""
    return [s for s in values if len(s) >= 20 and " " in s and not s.startswith(("/api/", "http"))]


def pf1_docs(repo: str) -> list[str]:
    docs = []
    for path in git_files(repo, "json"):
        if not path.endswith(".json"):
            continue
        data = json.loads(git_show(repo, path))
        items = data.values() if isinstance(data, dict) else data
        for item in items:
            if not isinstance(item, dict):
                continue
            text = "\n".join(prose(strings(item.get("description", []))))
            if text:
                text = _PF1_LINK.sub(lambda m: m.group(1) or "", text)
                docs.append(_PF1_MARKUP.sub(" ", text))
    return docs


def dnd5e_docs(repo: str) -> list[str]:
    docs = []
    for path in git_files(repo, "src"):
        if path.endswith(".json") and "/en/" in path:
            for item in json.loads(git_show(repo, path)):
                text = "\n".join(prose(strings(item)))
                if text:
                    docs.append(text)
    return docs


def sf1_docs(repo: str) -> list[str]:
    return [_SF1_SOURCE.sub("", _FRONT_MATTER.sub("", git_show(repo, p)))
            for p in git_files(repo, "Rules/SF1E") + git_files(repo, "Compendium/SF1E") if p.endswith(".md")]


def pf2tools_docs(repo: str) -> list[str]:
    docs = []
    for path in git_files(repo, "data"):
        if not path.endswith(".json") or "/generated/" in path:
            continue
        data = json.loads(git_show(repo, path))
        groups = data.values() if isinstance(data, dict) else [data]
        for group in groups:
            for item in (group if isinstance(group, list) else [group]):
                text = "\n".join(prose(strings(item)))
                if text:
                    docs.append(_TOOLS_TAG.sub(r"\1", text))
    return docs


def store_docs(store_dir: str) -> list[str]:
    from gmprep.kg.store import Store
    store = Store.open(Path(store_dir), create=False)
    return [f"{n.name}\n{n.text}" for n in store.iter_nodes(("entry",))]


def held_aside(doc: str) -> bool:
    return zlib.crc32(doc.encode()) % 10 == 0


def count(docs: list[str]) -> Counter:
    c: Counter = Counter()
    for d in docs:
        if not held_aside(d):
            c.update(ngrams(tokens(d), distinct=False))
    return c


def windows(docs: list[str], size: int = 60) -> list[list[str]]:
    out = []
    for d in docs:
        if held_aside(d):
            t = tokens(d)
            out += [t[i:i + size] for i in range(0, max(len(t) - size // 2, 1), size)]
    return out


def logistic(xs: list[float], ys: list[int]) -> tuple[float, float]:
    """A 1-D logistic fit (Newton's method), classes weighted equally."""
    n1 = sum(ys)
    n0 = len(ys) - n1
    wt = [0.5 / n1 if y else 0.5 / n0 for y in ys]
    a, b = 0.1, 0.0
    for _ in range(50):
        ga = gb = haa = hab = hbb = 0.0
        for x, y, w in zip(xs, ys, wt, strict=True):
            p = 1 / (1 + math.exp(-max(min(a * x + b, 30), -30)))
            r = (p - y) * w
            ga += r * x
            gb += r
            h = p * (1 - p) * w
            haa += h * x * x
            hab += h * x
            hbb += h
        det = haa * hbb - hab * hab
        if det <= 0:
            break
        a -= (hbb * ga - hab * gb) / det
        b -= (haa * gb - hab * ga) / det
    return a, b


def fit_logistic(other: list[str], pf2: list[str], min_count: int, c: float, keep: float) -> dict[str, float]:
    """Per n-gram weights of an L2 logistic regression (classes balanced) on the training windows' distinct n-grams
    (those seen in at least ``min_count`` windows): a discriminative fit, where log-odds count correlated n-grams
    ("standard action", "a standard", "standard") once each. Measured against the log-odds on the tuning questions,
    not shipped (docs/answerability.md, "A discriminative other-edition reader")."""
    import numpy as np
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression

    grams: list[list[str]] = []
    ys: list[int] = []
    seen: Counter = Counter()
    for label, docs in ((1, other), (0, pf2)):
        for d in docs:
            if held_aside(d):
                continue
            t = tokens(d)
            for i in range(0, max(len(t) - 30, 1), 60):
                g = [" ".join(x) for x in ngrams(t[i:i + 60]) if kept(x)]
                grams.append(g)
                ys.append(label)
                seen.update(g)
    vocab = {g: i for i, g in enumerate(k for k, v in seen.items() if v >= min_count)}
    rows, cols = [], []
    for r, g in enumerate(grams):
        ids = [vocab[x] for x in g if x in vocab]
        rows += [r] * len(ids)
        cols += ids
    x = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(grams), len(vocab)))
    model = LogisticRegression(C=c, class_weight="balanced", solver="liblinear", max_iter=200).fit(x, np.array(ys))
    names = {i: g for g, i in vocab.items()}
    return {names[i]: round(float(w), 3) for i, w in enumerate(model.coef_[0]) if abs(w) >= keep}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pf1", required=True)
    ap.add_argument("--dnd5e")
    ap.add_argument("--sf1")
    ap.add_argument("--pf2tools", required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("--smooth", type=float, default=2.0, help="per million n-grams, added to both rates")
    ap.add_argument("--min-count", type=int, default=10)
    ap.add_argument("--min-weight", type=float, default=0.7)
    ap.add_argument("--clip", type=float, default=4.0)
    ap.add_argument("--logistic", type=float, metavar="C",
                    help="measured, not shipped: weights from an L2 logistic regression (inverse strength C) over the "
                         "distinct n-grams of 60-token windows of the documents not held aside, instead of log-odds")
    ap.add_argument("--keep", type=float, default=0.05, help="with --logistic: keep weights of at least this size")
    ap.add_argument("--pf2-questions", action="store_true",
                    help="measured, not shipped: the question index's written GM questions (kg/data/questions.jsonl.gz, "
                         "five to a document) join the Pathfinder 2e side, so that casual question prose weighs as PF2e's")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)

    sources, other, pf2 = [], [], []
    per_system: dict[str, list[str]] = {}
    for name, repo, reader, licence, side in (
            ("Pathfinder 1e", args.pf1, pf1_docs, "OGL 1.0a", other),
            ("D&D 5e SRD", args.dnd5e, dnd5e_docs, "CC-BY-4.0", other),
            ("Starfinder 1e", args.sf1, sf1_docs, "OGL 1.0a", other),
            ("Pathfinder 2e (pre-Remaster, Pf2eTools)", args.pf2tools, pf2tools_docs, "OGL 1.0a", pf2)):
        if not repo:
            continue
        docs = reader(repo)
        side += docs
        if side is other:
            per_system[name] = docs
        sources.append({"system": name, "repository": Path(repo).parent.name.replace("+", "/"),
                        "commit": git_head(repo), "licence": licence, "documents": len(docs),
                        "side": "other" if side is other else "pf2e"})
        print(f"{name}: {len(docs)} documents", file=sys.stderr)
    held = store_docs(args.store)
    if args.pf2_questions:
        with gzip.open(ROOT / "kg" / "data" / "questions.jsonl.gz", "rt", encoding="utf-8") as fh:
            written = [q for row in map(json.loads, fh) for q in row["questions"]]
        held += ["\n".join(written[i:i + 5]) for i in range(0, len(written), 5)]
    pf2 += held
    sources.append({"system": "Pathfinder 2e Remaster (the bundled store's entries)", "documents": len(held),
                    "side": "pf2e", "licence": "ORC / OGL (the held books)"})

    c_other, c_pf2 = count(other), count(pf2)
    n_other, n_pf2 = sum(c_other.values()) / 1e6, sum(c_pf2.values()) / 1e6
    weights: dict[str, float] = {}
    for g in set(c_other) | set(c_pf2):
        y1, y0 = c_other.get(g, 0), c_pf2.get(g, 0)
        if y1 + y0 < args.min_count or not kept(g):
            continue
        w = math.log((y1 / n_other + args.smooth) / (y0 / n_pf2 + args.smooth))
        if abs(w) >= args.min_weight:
            weights[" ".join(g)] = round(max(min(w, args.clip), -args.clip), 2)
    if args.logistic:
        weights = fit_logistic(other, pf2, args.min_count, args.logistic, args.keep)
    print(f"{len(weights)} n-grams kept", file=sys.stderr)
    # which game an n-gram that weighs for the other side is from: the system whose text uses it at the highest rate,
    # when that rate is at least twice the next one's ("spell-like ability": Pathfinder 1e; "starship": Starfinder 1e)
    systems = list(per_system)
    rates = []
    for name in systems:
        c = count(per_system[name])
        rates.append((c, sum(c.values()) / 1e6))
    games: dict[str, int] = {}
    for key, w in weights.items():
        if w < args.min_weight:
            continue
        g = tuple(key.split(" "))
        r = sorted(((c.get(g, 0) / n, i) for i, (c, n) in enumerate(rates)), reverse=True)
        if r[0][0] > 0 and (len(r) == 1 or r[0][0] >= 2 * r[1][0]):
            games[key] = r[0][1]

    from core.agents.edition import raw_score
    xs, ys = [], []
    for label, docs in ((1, other), (0, pf2)):
        for win in windows(docs):
            xs.append(raw_score(win, weights))
            ys.append(label)
    a, b = logistic(xs, ys)
    acc = sum((a * x + b > 0) == bool(y) for x, y in zip(xs, ys, strict=True)) / len(xs)
    print(f"calibration on {len(xs)} held-aside windows: a={a:.4f} b={b:.4f} accuracy={acc:.3f}", file=sys.stderr)

    data = {"about": "Word n-gram weights: log-odds of other games' rules text (Pathfinder 1e, D&D 5e SRD, Starfinder "
                     "1e) against Pathfinder 2e's; derived statistics, no text. scripts/fit_other_edition_reader.py",
            "sources": sources, "smooth": args.smooth, "min_count": args.min_count, "min_weight": args.min_weight,
            "calibration": {"a": round(a, 5), "b": round(b, 5), "window": 60, "accuracy": round(acc, 4)},
            "systems": systems, "games": dict(sorted(games.items())), "weights": dict(sorted(weights.items()))}
    with open(args.out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as fh:
        fh.write(json.dumps(data, separators=(",", ":")).encode())  # mtime 0: the same sources give the same bytes
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
