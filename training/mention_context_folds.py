"""Train the contextual mention scorer on a GPU, leaving one GM out (issue 11).

Standalone on purpose (torch and transformers only): a lent GPU machine has neither the store nor
gmprep's dependencies. The pairs were exported here by ``scripts/mention_context_export.py``
(``kg/mention_context.pair``: the span marked in its window, and "<type>: <entry name>"):

- ``corpus.jsonl.gz``: the corpus's automatic labels (links and self names positive; everyday senses,
  parts of longer names, transplanted proper names negative), as the logistic scorer learns them;
- ``tune_spans.jsonl.gz``: every candidate the note scanner proposes in the judged TUNING notes, with
  its GM, its label and the shipped pipeline's confidence as a logit (``lr``).

For each recipe and each GM, a model is fine-tuned from the bundled reranker (a 4-layer MiniLM
cross-encoder: the same vocabulary and a pair-reading head) without that GM's spans and scores them;
so every tuning span gets an out-of-GM score. The recipe with the best mean out-of-GM AUC is then
trained on every GM and saved (fp16), split into parts small enough to travel back.

    python3 training/mention_context_folds.py --data .devcarry --init kg/reranker_model --out $OUT

``--extra FILE`` (``scripts/ctx_reach.py export``): spans never trained on, each scored by the fold model that left
its GM out (``extra_scores.jsonl.gz``); ``--no-final`` runs the folds only; ``--folds GM,GM`` only those folds.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import sys
import time
from pathlib import Path


def read(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def auc(scores: list[float], labels: list[int]) -> float:
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    ranks = [0.0] * len(scores)
    i = 0
    while i < len(order):  # average ranks over ties
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    rpos = sum(r for r, y in zip(ranks, labels, strict=True) if y)
    return (rpos - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


class Trainer:
    def __init__(self, init: Path, max_tokens: int, device: str, freeze_words: bool = False) -> None:
        import torch
        from transformers import AutoTokenizer

        self.torch = torch
        self.init = init
        self.max_tokens = max_tokens
        self.device = device
        # frozen, the word embeddings stay the bundled reranker's, so the saved model needs only the rest
        self.freeze_words = freeze_words
        self.tok = AutoTokenizer.from_pretrained(str(init))

    def encode(self, rows: list[dict]):
        enc = self.tok([r["a"] for r in rows], [r["b"] for r in rows], truncation="only_first",
                       max_length=self.max_tokens, padding="max_length", return_tensors="pt")
        return {k: v.to(self.device) for k, v in enc.items()}

    def fit(self, enc, idx: list[int], y: list[float], epochs: int, lr: float, batch: int, seed: int):
        torch = self.torch
        from transformers import AutoModelForSequenceClassification

        torch.manual_seed(seed)
        model = AutoModelForSequenceClassification.from_pretrained(str(self.init), num_labels=1, dtype=torch.float32)
        model.to(self.device).train()
        if self.freeze_words:
            model.get_input_embeddings().weight.requires_grad_(False)
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.01)
        steps = epochs * math.ceil(len(idx) / batch)
        warm = max(1, steps // 10)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, 1 - s / steps))
        loss_fn = torch.nn.BCEWithLogitsLoss()
        yt = torch.tensor(y, device=self.device)
        rng = random.Random(seed)
        order = list(range(len(idx)))
        it = torch.tensor(idx, device=self.device)
        for _ in range(epochs):
            rng.shuffle(order)
            for i in range(0, len(order), batch):
                sel = torch.tensor(order[i:i + batch], device=self.device)
                rows = it[sel]
                with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=self.device == "cuda"):
                    out = model(**{k: v[rows] for k, v in enc.items()}).logits[:, 0]
                loss = loss_fn(out.float(), yt[sel])
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                sched.step()
                opt.zero_grad(set_to_none=True)
        model.eval()
        return model

    def score(self, model, enc, idx: list[int], batch: int = 512) -> list[float]:
        torch = self.torch
        out: list[float] = []
        it = torch.tensor(idx, device=self.device)
        with torch.inference_mode():
            for i in range(0, len(idx), batch):
                rows = it[i:i + batch]
                out.extend(model(**{k: v[rows] for k, v in enc.items()}).logits[:, 0].float().tolist())
        return out


RECIPES = {
    # name: (use corpus rows, times each real span is repeated, epochs, lr)
    "both": (True, 2, 2, 4e-5),
    "real": (False, 1, 4, 4e-5),
    "both3": (True, 3, 3, 5e-5),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--init", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--recipes", default="both,real,both3")
    ap.add_argument("--budget-s", type=float, default=330.0, help="start no further recipe after this many seconds")
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--limit", type=int, default=0, help="smoke test: this many rows of each file")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--freeze-words", action="store_true", help="keep the init's word embeddings as they are")
    ap.add_argument("--part", type=int, default=15 * 2**20)
    ap.add_argument("--extra", type=Path, default=None,
                    help="score-only tuning spans (scripts/ctx_reach.py export): each GM's fold model scores its own, "
                         "never trained on them; written to extra_scores.jsonl.gz")
    ap.add_argument("--folds", default="", help="comma-separated GMs to leave out (default: every GM)")
    ap.add_argument("--no-final", action="store_true", help="the folds only: train and pack no final model")
    args = ap.parse_args(argv)
    t0 = time.time()
    corpus = read(args.data / "corpus.jsonl.gz")
    spans = read(args.data / "tune_spans.jsonl.gz")
    if args.limit:
        random.Random(0).shuffle(corpus)
        corpus, spans = corpus[: args.limit], spans[: args.limit]
    extra = read(args.extra) if args.extra else []
    if args.limit:
        extra = extra[: args.limit]
    if any("heldout" in str(s.get("doc", "")) for s in spans + extra):
        sys.exit("refusing a held-out split")
    args.out.mkdir(parents=True, exist_ok=True)
    tr = Trainer(args.init, args.max_tokens, args.device, args.freeze_words)
    rows = corpus + spans
    enc = tr.encode(rows)
    nc = len(corpus)
    enc_extra = tr.encode(extra) if extra else None
    extra_scores: dict[str, list[float]] = {}
    gms = sorted({s["gm"] for s in spans})
    report: dict = {"corpus": nc, "spans": len(spans), "gms": len(gms), "recipes": {}, "encode_s": round(time.time() - t0, 1)}
    scores: dict[str, list[float]] = {}
    log = open(args.out / "train.log", "w", encoding="utf-8")

    def note(msg: str) -> None:
        line = f"{time.time() - t0:7.1f}s {msg}"
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    def train_set(recipe: str, leave: str | None) -> tuple[list[int], list[float]]:
        use_corpus, rep, _, _ = RECIPES[recipe]
        idx = list(range(nc)) if use_corpus else []
        idx += [nc + i for i, s in enumerate(spans) if s["gm"] != leave] * rep
        return idx, [float(rows[i]["label"]) for i in idx]

    def write_extra() -> None:
        with gzip.open(args.out / "extra_scores.jsonl.gz", "wt", encoding="utf-8") as f:
            for i, s in enumerate(extra):
                f.write(json.dumps({"i": i, **{k: v for k, v in s.items() if k not in ("a", "b")},
                                    **{r: extra_scores[r][i] for r in extra_scores}}) + "\n")

    def write_scores() -> None:
        with gzip.open(args.out / "scores.jsonl.gz", "wt", encoding="utf-8") as f:
            for i, s in enumerate(spans):
                f.write(json.dumps({"i": i, "gm": s["gm"], "doc": s["doc"], "label": s["label"], "lr": s["lr"],
                                    **{r: scores[r][i] for r in scores}}) + "\n")

    report["shipped_lr_auc_per_gm"] = {
        gm: round(auc([s["lr"] for s in spans if s["gm"] == gm], [s["label"] for s in spans if s["gm"] == gm]), 4)
        for gm in gms}

    for recipe in args.recipes.split(","):
        if scores and time.time() - t0 > args.budget_s:
            note(f"{recipe}: skipped (time budget)")
            continue
        _, _, epochs, lr = RECIPES[recipe]
        out = [float("nan")] * len(spans)
        out_extra = [float("nan")] * len(extra)
        per_gm = {}
        for gm in [g for g in gms if not args.folds or g in args.folds.split(",")]:
            idx, y = train_set(recipe, gm)
            model = tr.fit(enc, idx, y, epochs, lr, args.batch, args.seed)
            test = [i for i, s in enumerate(spans) if s["gm"] == gm]
            for i, z in zip(test, tr.score(model, enc, [nc + i for i in test]), strict=True):
                out[i] = z
            mine = [i for i, s in enumerate(extra) if s["gm"] == gm]
            if mine:
                for i, z in zip(mine, tr.score(model, enc_extra, mine), strict=True):
                    out_extra[i] = z
            per_gm[gm] = round(auc([out[i] for i in test], [spans[i]["label"] for i in test]), 4)
            note(f"{recipe} without {gm}: {len(idx)} rows, AUC {per_gm[gm]}")
            del model
        scores[recipe] = out
        if extra:
            extra_scores[recipe] = out_extra
            write_extra()
        report["recipes"][recipe] = {"auc_per_gm": per_gm,
                                     "mean_auc": round(sum(per_gm.values()) / len(per_gm), 4),
                                     "pooled_auc": round(auc(out, [s["label"] for s in spans]), 4)}
        note(f"{recipe}: mean out-of-GM AUC {report['recipes'][recipe]['mean_auc']}")
        (args.out / "report.json").write_text(json.dumps(report, indent=1))
        write_scores()
    if args.no_final:
        note("folds only (--no-final)")
        return 0
    best = max(report["recipes"], key=lambda r: report["recipes"][r]["mean_auc"])
    idx, y = train_set(best, None)
    _, _, epochs, lr = RECIPES[best]
    model = tr.fit(enc, idx, y, epochs, lr, args.batch, args.seed)
    folder = args.out / "model"
    model.half().save_pretrained(str(folder), safe_serialization=True)
    tr.tok.save_pretrained(str(folder))
    manifest = {"recipe": best, "recipe_args": dict(zip(("corpus", "repeat_real", "epochs", "lr"), RECIPES[best], strict=True)),
                "rows": len(idx), "init": str(args.init), "freeze_words": args.freeze_words, "max_tokens": args.max_tokens, "batch": args.batch,
                "seed": args.seed, "corpus_rows": nc, "tune_spans": len(spans), "gms": gms,
                "command": "python3 training/mention_context_folds.py " + " ".join(sys.argv[1:] if argv is None else argv)}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))
    report["final"] = manifest
    report["seconds"] = round(time.time() - t0, 1)
    (args.out / "report.json").write_text(json.dumps(report, indent=1))
    note(f"final {best} saved")
    # pack the model into parts under the device's per-file limit
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(folder), arcname="model")
    data = buf.getvalue()
    for k in range(0, len(data), args.part):
        (args.out / f"model.tar.part-{k // args.part:02d}").write_bytes(data[k:k + args.part])
    import shutil

    shutil.rmtree(folder)
    note(f"packed {len(data)} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
