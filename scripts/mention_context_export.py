"""Export what ``training/mention_context_folds.py`` trains on (issue 11; docs/mention-scorer.md, "The context
model in the hover decision"): run here, where the corpus and the fetched notes are, then carry DIR to a GPU.

    python scripts/mention_context_export.py DIR [PER_KIND]      # DIR e.g. .devcarry (git-ignored)

- DIR/tune_spans.jsonl.gz: every candidate the hover scan proposes in the judged TUNING notes
  (bench/data/real-notes/labels/tune.jsonl over .cache/real-notes): its GM, whether it is the labelled rule,
  the shipped pipeline's confidence as a logit (``lr``) and its input pair (``kg.mention_context.pair``);
- DIR/corpus.jsonl.gz: the corpus's automatic labels, sampled as the logistic scorer's trainer samples them.
A held-out labels file is refused (``tune_spans``).
"""

from __future__ import annotations

import gzip
import json
import sys
import time
from collections import Counter
from pathlib import Path

from gmprep.commands.hover import corpus_text
from gmprep.kg.mention_context import pair
from gmprep.kg.mention_context_train import sample_examples, tune_spans
from gmprep.kg.mention_scorer_train import collect_examples

SEED = 7


def main(out: Path, per_kind: int = 4000) -> None:
    t0 = time.time()
    out.mkdir(parents=True, exist_ok=True)
    corpus = corpus_text()
    spans = tune_spans(Path("bench/data/real-notes/labels/tune.jsonl"), Path(".cache/real-notes"), corpus.nodes)
    with gzip.open(out / "tune_spans.jsonl.gz", "wt", encoding="utf-8") as f:
        for s in spans:
            f.write(json.dumps({"gm": s["gm"], "doc": s["doc"], "label": s["label"], "lr": s["lr"],
                                "a": s["pair"][0], "b": s["pair"][1]}) + "\n")
    examples, _records, _index = collect_examples(corpus, SEED, None)
    kept = sample_examples(examples, per_kind, SEED)
    with gzip.open(out / "corpus.jsonl.gz", "wt", encoding="utf-8") as f:
        for ex in kept:
            a, b = pair(ex.text, ex.start, ex.end, ex.cand.type, ex.cand.name)
            f.write(json.dumps({"entry": ex.entry, "kind": ex.kind, "label": ex.label, "a": a, "b": b}) + "\n")
    print(json.dumps({"tune_spans": len(spans), "positive": sum(s["label"] for s in spans), "corpus_examples": len(examples),
                      "kept": len(kept), "by_kind": Counter(f"{e.kind}:{e.label}" for e in kept),
                      "seconds": round(time.time() - t0, 1)}, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 4000)
