"""Fine-tune and measure the contextual mention scorer (``kg/mention_context.py``) against the logistic one.

Same automatic corpus labels as ``kg/mention_scorer_train.py`` (links and self names positive; everyday
senses, parts of longer names and transplanted proper names negative), each label kind sampled equally.
Then, on the judged TUNING notes, every span the note scanner proposes is scored by the shipped logistic
scorer, by the contextual model and by a stack of both logits; each GM is scored by thresholds (and stack
weights) chosen on the other GMs only (leave one GM out). Refuses a held-out labels file.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections import Counter, defaultdict
from pathlib import Path

from gmprep.common.errors import GmprepError
from gmprep.kg.mention_context import MAX_TOKENS, pair
from gmprep.kg.mention_scorer_train import (
    CorpusText,
    Example,
    _fbeta,
    _note_groups,
    collect_examples,
    judged_row,
    labelled_notes,
)

POSITIVE_KINDS = ("link", "self", "italic-spell")


def sample_examples(examples: list[Example], per_kind: int, seed: int, max_per_name: int = 5) -> list[Example]:
    """At most ``max_per_name`` examples per (entry, kind), then at most ``per_kind`` per kind."""
    rng = random.Random(seed)
    rng.shuffle(examples)
    seen: Counter[tuple[str, str]] = Counter()
    by_kind: dict[str, list[Example]] = defaultdict(list)
    for ex in examples:
        k = (ex.cand.node_id, ex.kind)
        if seen[k] < max_per_name:
            seen[k] += 1
            by_kind[ex.kind].append(ex)
    out: list[Example] = []
    neg_kinds = [k for k in by_kind if k not in POSITIVE_KINDS]
    pos_kinds = [k for k in by_kind if k in POSITIVE_KINDS]
    # positives and negatives the same in total; within each, kinds share equally
    for kinds in (neg_kinds, pos_kinds):
        share = per_kind * max(1, len(neg_kinds)) // max(1, len(kinds))
        for kind in kinds:
            out.extend(by_kind[kind][:share])
    rng.shuffle(out)
    return out


def fine_tune(pairs: list[tuple[str, str]], y: list[int], base: Path, layers: int, epochs: int, seed: int,
              lr: float = 3e-4, batch: int = 16, threads: int = 2):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    tok = AutoTokenizer.from_pretrained(str(base))
    model = AutoModelForSequenceClassification.from_pretrained(
        str(base), num_labels=1, num_hidden_layers=layers, ignore_mismatched_sizes=True)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    steps = epochs * math.ceil(len(pairs) / batch)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, steps // 10)) * max(0.0, 1 - s / steps))
    loss_fn = torch.nn.BCEWithLogitsLoss()
    order = list(range(len(pairs)))
    rng = random.Random(seed)
    for _ in range(epochs):
        rng.shuffle(order)
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            enc = tok([pairs[j][0] for j in idx], [pairs[j][1] for j in idx], truncation="only_first",
                      max_length=MAX_TOKENS, padding=True, return_tensors="pt")
            out = model(**enc).logits[:, 0]
            loss = loss_fn(out, torch.tensor([float(y[j]) for j in idx]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
    model.eval()
    return model, tok


def _auc(scores: list[float], labels: list[int]) -> float:
    from sklearn.metrics import roc_auc_score

    return round(float(roc_auc_score(labels, scores)), 4) if len(set(labels)) == 2 else float("nan")


def _best_threshold(scores: list[float], labels: list[int], beta: float = 0.5) -> float:
    best = (-1.0, 0.0)
    for t in sorted(set(scores)):
        tp = sum(1 for s, y in zip(scores, labels, strict=True) if y and s >= t)
        fp = sum(1 for s, y in zip(scores, labels, strict=True) if not y and s >= t)
        fn = sum(1 for s, y in zip(scores, labels, strict=True) if y and s < t)
        p = tp / (tp + fp) if tp + fp else 1.0
        r = tp / (tp + fn) if tp + fn else 0.0
        best = max(best, (_fbeta(p, r, beta), t))
    return best[1]


def _pr(scores, labels, t) -> tuple[int, int, int]:
    tp = sum(1 for s, y in zip(scores, labels, strict=True) if y and s >= t)
    fp = sum(1 for s, y in zip(scores, labels, strict=True) if not y and s >= t)
    fn = sum(1 for s, y in zip(scores, labels, strict=True) if y and s < t)
    return tp, fp, fn


def tune_spans(labels: Path, notes_dir: Path, nodes: list) -> list[dict]:
    """Every span the hover path proposes in the judged tuning notes: LR score, window pair, label, GM."""
    from gmprep.kg.mention_scorer import MentionScorer
    from gmprep.kg.names import NameIndex
    from gmprep.kg.note_scan import NoteScanner

    if "heldout" in labels.name:
        raise GmprepError("refusing to measure on a held-out split: pass the tuning labels")
    entries = [n for n in nodes if n.kind == "entry"]
    by_id = {n.node_id: n for n in entries}
    scanner = NoteScanner(NameIndex.build(entries), scorer=MentionScorer.load())
    scanner.threshold = 0.0
    groups = _note_groups(labels)
    out = []
    for doc, text, rows in labelled_notes(labels, notes_dir):
        for m in scanner.scan(text).mentions:
            hit = judged_row(rows, m.start, m.end, m.node_id)
            if hit is None:
                continue
            node = by_id.get(m.node_id)
            etype = str(getattr(node, "type", "") or "")
            right = int(hit["label"] == "rule" and m.node_id in (hit.get("ids") or []))
            c = min(max(m.confidence, 1e-6), 1 - 1e-6)
            out.append({"doc": doc, "gm": groups.get(doc, doc.split("-")[0]), "label": right,
                        "lr": math.log(c / (1 - c)), "pair": pair(text, m.start, m.end, etype, m.name)})
    return out


def leave_one_gm_out(spans: list[dict], key: str) -> dict:
    """Per GM: AUC of ``key`` and P/R at the F0.5 threshold chosen on the other GMs; pooled P/R."""
    gms = sorted({s["gm"] for s in spans})
    rep: dict = {}
    tot = [0, 0, 0]
    for gm in gms:
        test = [s for s in spans if s["gm"] == gm]
        train = [s for s in spans if s["gm"] != gm]
        t = _best_threshold([s[key] for s in train], [s["label"] for s in train])
        tp, fp, fn = _pr([s[key] for s in test], [s["label"] for s in test], t)
        tot = [tot[0] + tp, tot[1] + fp, tot[2] + fn]
        rep[gm] = {"auc": _auc([s[key] for s in test], [s["label"] for s in test]),
                   "precision": round(tp / (tp + fp), 3) if tp + fp else 1.0,
                   "recall": round(tp / (tp + fn), 3) if tp + fn else 1.0, "spans": len(test)}
    tp, fp, fn = tot
    rep["pooled"] = {"precision": round(tp / (tp + fp), 3) if tp + fp else 1.0,
                     "recall": round(tp / (tp + fn), 3) if tp + fn else 1.0,
                     "auc": _auc([s[key] for s in spans], [s["label"] for s in spans])}
    return rep


def stack_out_of_gm(spans: list[dict]) -> None:
    """``stack``: a 2-weight logistic fit of (LR logit, context logit) on the other GMs' spans."""
    from sklearn.linear_model import LogisticRegression

    for gm in sorted({s["gm"] for s in spans}):
        train = [s for s in spans if s["gm"] != gm]
        clf = LogisticRegression(C=1.0).fit([[s["lr"], s["ctx"]] for s in train], [s["label"] for s in train])
        for s in spans:
            if s["gm"] == gm:
                s["stack"] = float(clf.decision_function([[s["lr"], s["ctx"]]])[0])


def train_contextual(
    corpus: CorpusText, out_dir: Path, labels: Path | None, notes_dir: Path | None, seed: int = 7,
    per_kind: int = 300, layers: int = 2, epochs: int = 2, limit_entries: int | None = 2000, command: str = "",
) -> dict:
    from gmprep.kg.embedder import minilm_path
    from gmprep.kg.mention_context import ContextScorer

    t0 = time.time()
    examples, _records, _idx = collect_examples(corpus, seed, limit_entries)
    kept = sample_examples(examples, per_kind, seed)
    # validation: 20% of the real entries; transplanted names ("synthetic") always train
    entries = sorted({ex.entry for ex in kept if ex.entry != "synthetic"})
    random.Random(seed).shuffle(entries)
    val_entries = set(entries[: max(1, len(entries) // 5)])
    train = [ex for ex in kept if ex.entry not in val_entries]
    val = [ex for ex in kept if ex.entry in val_entries]

    def to_pairs(xs):
        return [pair(ex.text, ex.start, ex.end, ex.cand.type, ex.cand.name) for ex in xs]

    t1 = time.time()
    model, tok = fine_tune(to_pairs(train), [ex.label for ex in train], minilm_path(), layers, epochs, seed)
    t2 = time.time()
    out_dir.mkdir(parents=True, exist_ok=True)
    model.half().save_pretrained(str(out_dir), safe_serialization=True)
    tok.save_pretrained(str(out_dir))
    scorer = ContextScorer(out_dir, threads=2)
    manifest: dict = {
        "command": command, "seed": seed, "layers": layers, "lr": 3e-4, "batch": 16, "epochs": epochs, "per_kind": per_kind,
        "limit_entries": limit_entries, "train_examples": len(train), "val_examples": len(val),
        "by_kind": dict(Counter(f"{ex.kind}:{ex.label}" for ex in kept)),
        "seconds": {"label": round(t1 - t0, 1), "train": round(t2 - t1, 1)},
        "val_auc_corpus": _auc(scorer.logits(to_pairs(val)), [ex.label for ex in val]),
    }
    if labels is not None and notes_dir is not None:
        spans = tune_spans(labels, notes_dir, corpus.nodes)
        t3 = time.time()
        logits = scorer.logits([s["pair"] for s in spans])
        manifest["seconds"]["score_tune_spans"] = round(time.time() - t3, 2)
        manifest["tune_spans"] = len(spans)
        for s, z in zip(spans, logits, strict=True):
            s["ctx"] = z
        stack_out_of_gm(spans)
        manifest["leave_one_gm_out"] = {k: leave_one_gm_out(spans, k) for k in ("lr", "ctx", "stack")}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest
