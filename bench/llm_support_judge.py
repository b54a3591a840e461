"""The answering model as the support check's reader: how well does the local LLM's yes/no tell the hand-judged
supported claims from the unsupported ones, and what would it add to the shipped check? (Measured, not in the
answer path: docs/faithfulness.md, "The answering model as the reader of support".)

For every judged claim that cites a passage (``bench/data/faithfulness/judgements-*.jsonl``), the model reads the cited
passages (name and text from the store, each cut to ``support.READER_CHARS`` around the claim, or ``--head``) and the claim without its markers, and answers one
token; the score is log P("yes") - log P("no") from its top log-probabilities. ``score`` writes one line per claim
(resumable); ``report`` gives the AUC per judgement file and the agreement of the shipped check alone and of the
check with the model's "no" added (a claim the check keeps is struck when the score is below a threshold), per
split, from ``gmprep eval answers --faithfulness --answers-in A --judgements J --out CHECK`` rows.

    python bench/llm_support_judge.py score --store STORE --judgements J.jsonl [J2.jsonl] --out S.jsonl
    python bench/llm_support_judge.py report S.jsonl --check NAME=CHECK.jsonl:J.jsonl [NAME=...]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

def prompt(passages: list[tuple[str, str]], claim: str, chars: int | None = None, head: bool = False) -> list[dict]:
    """The answer path's own question to the model (``core.agents.support.reader_prompt``)."""
    from gmprep.core.agents.support import READER_CHARS, reader_prompt

    return reader_prompt(claim, passages, chars or READER_CHARS, head=head)


def shared_prompt(passages: list[tuple[str, str]], cites: list[int], claim: str, chars: int) -> list[dict]:
    """One answer's cited passages as a prefix every claim of the answer shares (each its first ``chars``
    characters, in the answer's order), then the claim and the passages it cites: only the claim's tokens are new
    from one reading to the next (``--shared``; measured, not the answer path's prompt)."""
    from gmprep.common.text import clean_markdown
    from gmprep.core.agents.support import READER_SYSTEM, _strip_markers

    body = "\n\n".join(f"Passage {i + 1}: {name}\n{text[:chars]}" for i, (name, text) in enumerate(passages))
    which = " and ".join(f"Passage {k + 1}" for k in cites)
    plain = " ".join(clean_markdown(_strip_markers(claim)).split())
    return [{"role": "system", "content": READER_SYSTEM},
            {"role": "user", "content": f"{body}\n\nClaim, citing {which}: {plain}\n\nDoes {which} state this "
                                        "claim, with the same subject and the same numbers? Answer yes or no."}]


def score(args: argparse.Namespace) -> int:
    from gmprep.core.llm.base import ChatMessage
    from gmprep.core.llm.llamacpp import LlamaCppBackend
    from gmprep.kg.store import Store

    store = Store.open(args.store, create=False)
    done: set[tuple[str, str, int]] = set()
    if args.out.exists():
        done = {(d["file"], d["id"], d["index"]) for d in map(json.loads, args.out.open())}
    # the answer path's backend and call (``LLMBackend.yes_no``); claims of one answer that cite the same passage
    # reuse its tokens from the prefix cache
    llm = LlamaCppBackend(args.model_path, n_ctx=4096, n_threads=args.threads)
    with args.out.open("a", encoding="utf-8") as out:
        for path in args.judgements:
            lines = path.read_text(encoding="utf-8").splitlines()
            # --shared: the passages all of an answer's judged claims cite, in first-cited order
            union: dict[str, list[str]] = {}
            for line in lines:
                j = json.loads(line)
                if j["label"] in ("supported", "unsupported"):
                    union.setdefault(j["id"], [])
                    union[j["id"]] += [c for c in j["cited"] if c not in union[j["id"]]]
            for line in lines:
                j = json.loads(line)
                key = (path.name, j["id"], j["index"])
                if j["label"] not in ("supported", "unsupported") or not j["cited"] or key in done:
                    continue
                nodes = [store.get(c) for c in j["cited"][:3]]
                passages = [(n.name, n.text) if n else (c, "(not in this store)")
                            for n, c in zip(nodes, j["cited"][:3], strict=True)]
                t0 = time.perf_counter()
                if args.shared:
                    ids = union[j["id"]]
                    nodes_all = [store.get(c) for c in ids]
                    messages = shared_prompt([(n.name, n.text) if n else (c, "(not in this store)")
                                              for n, c in zip(nodes_all, ids, strict=True)],
                                             [ids.index(c) for c in j["cited"]], j["sentence"], args.chars or 1400)
                else:
                    messages = prompt(passages, j["sentence"], args.chars, args.head)
                reading = llm.yes_no([ChatMessage.model_validate(m) for m in messages])
                out.write(json.dumps({"file": path.name, "id": j["id"], "index": j["index"], "label": j["label"],
                                      "split": j.get("split"), "score": None if reading is None else round(reading, 4),
                                      "ms": round((time.perf_counter() - t0) * 1000)}) + "\n")
                out.flush()
    return 0


def _auc(rows: list[dict]) -> float | None:
    pos = [r["score"] for r in rows if r["label"] == "supported"]
    neg = [r["score"] for r in rows if r["label"] == "unsupported"]
    if not pos or not neg:
        return None
    return sum((a > b) + 0.5 * (a == b) for a in pos for b in neg) / (len(pos) * len(neg))


def report(args: argparse.Namespace) -> int:
    import statistics

    rows = [r for r in map(json.loads, args.scores.open(encoding="utf-8")) if r["score"] is not None]
    for name in sorted({r["file"] for r in rows}):
        part = [r for r in rows if r["file"] == name]
        auc = _auc(part)
        print(f"{name}: {len(part)} claims, AUC {auc:.3f}" if auc is not None else f"{name}: {len(part)} claims")
    print(f"ms per claim: median {statistics.median(r['ms'] for r in rows):.0f}")
    by_key = {(r["file"], r["id"], r["index"]): r["score"] for r in rows}
    sets = []
    for spec in args.check:
        name, _, files = spec.partition("=")
        check_path, _, judged = files.partition(":")
        verdicts = {}
        for line in Path(check_path).open(encoding="utf-8"):
            r = json.loads(line)
            for v in (r.get("support") or {}).get("verdicts", []):
                verdicts[(r["id"], v["index"])] = v
        judgements = [json.loads(line) for line in Path(judged).open(encoding="utf-8")]
        sets.append((name, verdicts, judgements, Path(judged).name))
    from gmprep.core.agents.support import ReaderWeights

    fit = _fit_combined(sets, by_key) if sets else None
    # the fit as the answer path reads it (``support.ReaderWeights``: the check's score as a logit, the model's reading)
    combined = None if fit is None else ReaderWeights(check=round(fit[0][0], 4), model=round(fit[0][1], 4),
                                                      bias=round(fit[1], 4), manifest={
        "fitted_by": "bench/llm_support_judge.py report --write-weights (docs/faithfulness.md)",
        "scores": args.scores.name, "judgements": [jname for _, _, _, jname in sets],
        "pairs": "the calibration halves' model-written claims the check decided by its score",
        "features": "check: logit of the support score; model: log P(yes) - log P(no)"})
    if combined is not None:
        print(f"combined logistic on the calibration halves' written claims: {combined.check:.3f} * logit(check) "
              f"+ {combined.model:.3f} * model score + {combined.bias:.3f}")
        if args.write_weights:
            args.write_weights.write_text(combined.model_dump_json(indent=1) + "\n", encoding="utf-8")
    for name, verdicts, judgements, jname in sets:
        for thr in [None, *args.thresholds, "combined"]:
            cells = []
            for split in ("calibrate", "test"):
                ok = n = 0
                for j in judgements:
                    v = verdicts.get((j["id"], j["index"]))
                    if j.get("split") != split or v is None or v["text"] != j["sentence"]:
                        continue
                    label = "not_claim" if not v["claim"] else ("supported" if v["supported"] else "unsupported")
                    s = by_key.get((jname, j["id"], j["index"]))
                    written = v.get("kind", "text") == "text"  # quoted passage lines are the passages' own words
                    if thr == "combined" and combined is not None and _scored(v) and written and s is not None:
                        label = "supported" if combined.probability(v["score"], s) >= combined.threshold else "unsupported"
                    elif isinstance(thr, float) and label == "supported" and written and s is not None and s < thr:
                        label = "unsupported"
                    n += 1
                    ok += label == j["label"]
                cells.append(f"{split} {ok / n:.3f} ({n})" if n else f"{split} -")
            how = "check alone" if thr is None else (
                "check and model, combined" if thr == "combined" else f"check + model below {thr:g}")
            print(f"{name} {how}: {'; '.join(cells)}")
    return 0


def _scored(v: dict) -> bool:
    """A claim the check decided by its logistic score (not by a rule)."""
    return bool(v["claim"]) and v.get("reason") == "score" and v.get("score") is not None


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def _fit_combined(sets: list, by_key: dict) -> tuple[list[float], float] | None:
    """A two-feature logistic (the check's own score as a logit, the model's score) fitted on the calibration halves'
    model-written claims that the check decided by score, every judgement file together."""
    from gmprep.evals.faithfulness import _fit_logistic

    x, y = [], []
    for _, verdicts, judgements, jname in sets:
        for j in judgements:
            v = verdicts.get((j["id"], j["index"]))
            s = by_key.get((jname, j["id"], j["index"]))
            if j.get("split") != "calibrate" or v is None or v["text"] != j["sentence"] or s is None:
                continue
            if _scored(v) and v.get("kind", "text") == "text" and j["label"] in ("supported", "unsupported"):
                x.append([_logit(v["score"]), s])
                y.append(int(j["label"] == "supported"))
    return _fit_logistic(x, y) if len(set(y)) == 2 else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("score")
    s.add_argument("--store", required=True, type=Path)
    s.add_argument("--judgements", nargs="+", required=True, type=Path)
    s.add_argument("--out", required=True, type=Path)
    s.add_argument("--model-path", type=Path, help="GGUF (default: the installed default model)")
    s.add_argument("--threads", type=int, default=2)
    s.add_argument("--chars", type=int, default=None,
                   help="each passage cut to this many characters around the claim (support.reader_excerpt; "
                   "default support.READER_CHARS, the answer path's prompt)")
    s.add_argument("--shared", action="store_true",
                   help="one prefix of all the passages an answer's judged claims cite (each its first --chars, "
                   "default 1400), the claim asked after it (shared_prompt; measured, not the answer path's)")
    s.add_argument("--head", action="store_true",
                   help="cut each passage to its first --chars characters instead (the first prompt: --chars 1400)")
    r = sub.add_parser("report")
    r.add_argument("scores", type=Path)
    r.add_argument("--check", nargs="*", default=[], help="NAME=CHECK_ROWS.jsonl:JUDGEMENTS.jsonl")
    r.add_argument("--write-weights", type=Path, help="write the combined fit here (core/agents/support_reader.json)")
    r.add_argument("--thresholds", nargs="*", type=float, default=[0.0, 0.5, 1.0],
                   help="strike a model-written claim the check keeps when the model's score is below each of these")
    args = p.parse_args(argv)
    if args.cmd == "score":
        if args.model_path is None:
            from gmprep.core.llm.models import installed_model

            args.model_path = installed_model()
            if args.model_path is None:
                raise SystemExit("llm_support_judge: no model installed (gmprep model install), or give --model-path")
        return score(args)
    return report(args)


if __name__ == "__main__":
    raise SystemExit(main())
