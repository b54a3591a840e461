"""A cross-encoder trained for *support* (does this passage window state this claim?) on synthetic pairs made from
the store's own entries, no LLM: measured against the hand judgements, not in the answer path (docs/faithfulness.md,
"A cross-encoder trained for support on synthetic claims").

Positives are a sentence of an entry (cut to its first clause, asides dropped, "you" made "the character", sometimes
led by the entry's name, as a model writes it) against the window of the entry that holds it. Negatives: the same
sentence against another entry that shares its words (a true sentence cited to the wrong passage; skipped when that
entry states it too), a number changed, one word of a contrasting pair swapped ("can't"/"can", "bonus"/"penalty"),
another condition named, or another entry of the same kind as its subject.

    python bench/support_ce.py gen --store STORE --data pairs.jsonl --n 20000 --seed 8
    python bench/support_ce.py train --data pairs.jsonl --init kg/reranker_model --out MODEL --limit 9000 \
        --max-length 160 --lr 2e-5
    python bench/support_ce.py eval bench/data/faithfulness/judgements-dev.jsonl \
        bench/data/faithfulness/judgements-dev2.jsonl --store STORE --model MODEL --max-length 160
"""
import argparse
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

from gmprep.common.text import clean_markdown
from gmprep.core.agents.support import _sentences_of, _strip_markers, coverage, windows
from gmprep.kg.store import Store

TYPES = ("rule", "condition", "action", "spell", "feat", "equipment", "trait", "class-feature", "heritage",
         "ancestry", "hazard", "skill", "archetype", "background")
SWAPS = [("can't", "can"), ("cannot", "can"), ("doesn't", "does"), ("don't", "do"), ("isn't", "is"),
         ("increase", "decrease"), ("increases", "decreases"), ("bonus", "penalty"), ("gain", "lose"),
         ("gains", "loses"), ("before", "after"), ("ally", "enemy"), ("allies", "enemies"), ("more", "fewer"),
         ("critical success", "critical failure"), ("Critical Success", "Critical Failure"), ("Success", "Failure"),
         ("success", "failure"), ("higher", "lower"), ("maximum", "minimum"), ("always", "never"),
         ("half", "double"), ("only", "also"), ("must", "need not"), ("adjacent", "within 30 feet")]
NUM = re.compile(r"\b\d+\b")


def flip(s: str, rnd: random.Random) -> str | None:
    cands = []
    for a, b in SWAPS:
        for x, y in ((a, b), (b, a)):
            if re.search(rf"\b{re.escape(x)}\b", s):
                cands.append((x, y))
    if not cands:
        return None
    x, y = rnd.choice(cands)
    return re.sub(rf"\b{re.escape(x)}\b", y, s, count=1)


def renumber(s: str, rnd: random.Random) -> str | None:
    ms = list(NUM.finditer(s))
    if not ms:
        return None
    m = rnd.choice(ms)
    n = int(m.group())
    new = rnd.choice([n + 1, n + 2, max(0, n - 1), n * 2, n + 5]) if n > 1 else rnd.choice([2, 3, 4])
    if new == n:
        new = n + 1
    return s[:m.start()] + str(new) + s[m.end():]


def named(name: str, kind: str, s: str) -> str:
    """The claim as a model writes it: the entry named as its subject."""
    if not s:
        return name
    low = s[0].lower() + s[1:]
    if re.match(r"(You|Your|This|It|The|A|An)\b", s):
        return f"With {name}, {low}" if s.startswith(("You", "Your")) else f"{name} ({kind}): {s}"
    return f"{name}: {s}"


def paraphrase(s: str, rnd: random.Random) -> str:
    """A cheap stand-in for a model's restatement: asides dropped, second person made third, a long sentence cut
    to its first clause."""
    s0 = s
    if rnd.random() < 0.7:
        s = re.sub(r"\s*\([^)]*\)", "", s)
    if rnd.random() < 0.5:
        s = re.sub(r"\bYou\b", "The character", s)
        s = re.sub(r"\byou\b", "the character", s)
        s = re.sub(r"\bYour\b", "The character's", s)
        s = re.sub(r"\byour\b", "the character's", s)
    parts = re.split(r",\s|;\s", s)
    if len(parts) > 1 and len(parts[0].split()) >= 6 and rnd.random() < 0.4:
        s = parts[0].rstrip(".") + "."
    return s if len(s.split()) >= 4 else s0


def gen(store_dir: str, out: str, n: int, seed: int) -> None:
    rnd = random.Random(seed)
    st = Store.open(store_dir, create=False)
    rows = st.db.execute(
        f"select node_id, name, type, text from nodes where kind='entry' and type in ({','.join('?' * len(TYPES))})"
        " and length(text) >= 120", TYPES).fetchall()
    by_type: dict[str, list] = {}
    for r in rows:
        by_type.setdefault(r[2], []).append(r)
    conds = [r[1] for r in rows if r[2] == "condition"]
    rnd.shuffle(rows)
    made = 0
    with open(out, "w") as fh:
        for node_id, name, kind, text in rows:
            if made >= n:
                break
            wins = windows(text)
            sents = [x for x in _sentences_of(text, ".!?") if 7 <= len(x.split()) <= 45 and not x.startswith("**")]
            if not sents:
                continue
            s = rnd.choice(sents)
            win = next((w for w in wins if s in w), None) or max(wins, key=lambda w: coverage(s, w))
            claim = named(name, kind, paraphrase(s, rnd)) if rnd.random() < 0.5 else paraphrase(s, rnd)
            def put(c, w, y, how, name=name, node_id=node_id):
                fh.write(json.dumps({"claim": c, "passage": f"{name}\n{w}" if how != "wrong-passage" else w,
                                     "label": y, "how": how, "id": node_id}) + "\n")
            put(claim, win, 1.0, "own")
            made += 1
            r = rnd.random()
            neg = None
            if r < 0.3:
                # the same true sentence, cited to another entry that shares its words
                hits = [h for h, _ in st.bm25(s, 8) if h != node_id]
                if hits:
                    other = st.get(rnd.choice(hits[:4]))
                    if other is not None and other.text:
                        ow = max(windows(other.text), key=lambda w: coverage(s, w))
                        if coverage(s, ow) > 0.85:  # the other entry states it too: not a negative
                            continue
                        fh.write(json.dumps({"claim": claim, "passage": f"{other.name}\n{ow}", "label": 0.0,
                                             "how": "wrong-passage", "id": node_id}) + "\n")
                        made += 1
                        continue
            if r < 0.5:
                neg = renumber(claim, rnd)
                how = "number"
            if neg is None and r < 0.75:
                neg = flip(claim, rnd)
                how = "flip"
            if neg is None:
                # another entry of the same kind as the subject, or another condition in the sentence
                present = [c for c in conds if re.search(rf"\b{re.escape(c.lower())}\b", claim.lower())]
                if present and rnd.random() < 0.5:
                    c = rnd.choice(present)
                    neg = re.sub(rf"\b{re.escape(c)}\b", rnd.choice([x for x in conds if x != c]).lower(), claim,
                                 count=1, flags=re.I)
                    how = "condition"
                else:
                    other = rnd.choice(by_type[kind])[1]
                    if other != name:
                        neg = named(other, kind, s)
                        how = "subject"
            if neg and neg != claim:
                put(neg, win, 0.0, how)
                made += 1


def train(data: str, init: str, out: str, epochs: int, lr: float, max_length: int, limit: int) -> None:
    import torch
    from datasets import Dataset
    from sentence_transformers.cross_encoder import (
        CrossEncoder,
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
    torch.manual_seed(1)
    rows = [json.loads(x) for x in open(data)][:limit]
    ds = Dataset.from_dict({"claim": [r["claim"] for r in rows], "passage": [r["passage"] for r in rows],
                            "label": [r["label"] for r in rows]})
    ce = CrossEncoder(init, num_labels=1, max_length=max_length, device="cpu")
    ce.model.float()
    args = CrossEncoderTrainingArguments(output_dir=tempfile.mkdtemp(prefix="support-ce-"), num_train_epochs=epochs,
                                         per_device_train_batch_size=16, learning_rate=lr, warmup_ratio=0.1,
                                         save_strategy="no", logging_steps=50, report_to="none", use_cpu=True,
                                         seed=1, disable_tqdm=True)
    t0 = time.time()
    CrossEncoderTrainer(model=ce, args=args, train_dataset=ds, loss=BinaryCrossEntropyLoss(ce)).train()
    print("trained", len(rows), "pairs in", round(time.time() - t0), "s", file=sys.stderr)
    ce.save(out)


def auc(pos, neg):
    if not pos or not neg:
        return None
    return sum((a > b) + 0.5 * (a == b) for a in pos for b in neg) / (len(pos) * len(neg))


def evaluate(store_dir: str, model: str, files: list[str], max_length: int) -> None:
    from sentence_transformers.cross_encoder import CrossEncoder
    st = Store.open(store_dir, create=False)
    ce = CrossEncoder(model, num_labels=1, max_length=max_length, device="cpu") if model != "-" else None
    for f in files:
        res = {"model": ([], []), "coverage": ([], [])}
        by_split = {}
        for line in open(f):
            j = json.loads(line)
            if j["label"] not in ("supported", "unsupported") or not j["cited"]:
                continue
            nodes = [st.get(c) for c in j["cited"][:3]]
            texts = [n.text for n in nodes if n is not None]
            if not texts:
                continue
            plain = clean_markdown(_strip_markers(j["sentence"]))
            k = 0 if j["label"] == "supported" else 1
            res["coverage"][k].append(coverage(j["sentence"], "\n".join(texts)))
            if ce is not None:
                pairs = [(plain, f"{n.name}\n{w}") for n in nodes if n is not None for w in windows(n.text)]
                sc = max(ce.predict(pairs, show_progress_bar=False).tolist())
                res["model"][k].append(sc)
                by_split.setdefault(j.get("split"), ([], []))[k].append(sc)
        print(f, {name: (round(auc(*v), 3) if v[0] else None, len(v[0]), len(v[1])) for name, v in res.items()},
              {s: round(auc(*v), 3) for s, v in by_split.items() if v[0] and v[1]})


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("cmd")
    p.add_argument("--store", required=True)
    p.add_argument("--data", default="support-pairs.jsonl")
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--init", default=str(Path(__file__).resolve().parents[1] / "kg" / "reranker_model"))
    p.add_argument("--out", default="support-ce")
    p.add_argument("--model", default="support-ce")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--max-length", type=int, default=192)
    p.add_argument("--limit", type=int, default=10**9)
    p.add_argument("files", nargs="*")
    a = p.parse_args()
    if a.cmd == "gen":
        gen(a.store, a.data, a.n, a.seed)
    elif a.cmd == "train":
        train(a.data, a.init, a.out, a.epochs, a.lr, a.max_length, a.limit)
    else:
        evaluate(a.store, a.model, a.files, a.max_length)
