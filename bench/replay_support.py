"""Replay the support check on saved model answers: what the answer would have been with this version of the check.

The model's text is deterministic only with the model in memory, and generating it takes minutes per question on a
CPU; the check runs after generation. ``bench/llm_answers.py --out`` saves, per answer, what the check read (the text as
generated, the question, the passages in their numbered order). This script rebuilds those passages from a store and
runs the answer path's own check (``AgentPipeline._keep_supported``) on them, so check versions can be compared on the
same generations: outcomes, the gold among the sources the text cites, claims kept and struck, and, with hand
judgements (``bench/data/faithfulness/judgements-*.jsonl`` matched by question id and sentence), how many of the kept
claims a reader judged supported.

    python bench/replay_support.py --store STORE RUN.json [RUN.json ...] [--judgements J.jsonl ...] [--no-name-rule]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _plain(sentence: str) -> str:
    """A sentence without its citation markers and spacing: the same claim whichever passage it cited."""
    from gmprep.core.agents.support import unmarked

    return unmarked(sentence).rstrip(".")


def hits_for(store, ids: list[str]):
    """The passages ``ids`` as the answer path's hits (``kg.search.to_hit``: text and stat line)."""
    from gmprep.kg.search import to_hit

    out = []
    for sid in ids:
        node = store.get(sid)
        if node is None:
            raise SystemExit(f"replay_support: {sid} is not in this store")
        out.append(to_hit(node, 0.0, "replay"))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="bench/llm_answers.py --out files (rows with 'checked')")
    p.add_argument("--store", required=True, type=Path)
    p.add_argument("--judgements", nargs="*", default=[], type=Path,
                   help="hand judgements; a judgement's id may carry a '/suffix' (answers-dev2's 'dev-013/2')")
    p.add_argument("--questions", nargs="*", default=[], type=Path,
                   help="the runs' question files, for each question's gold mode (any / all; default any)")
    p.add_argument("--no-name-rule", action="store_true", help="the check without its other-entry name rule")
    p.add_argument("--no-number-rule", action="store_true",
                   help="the check without its rule on a number beside other words")
    p.add_argument("--no-recite-rule", action="store_true",
                   help="re-cite a struck claim to any passage the check keeps it on, holding a new word of it or not")
    p.add_argument("--rows", type=Path, help="write each replayed answer here (JSONL)")
    p.add_argument("--reader", action="store_true",
                   help="the check with the answering model's reading of each kept claim (llm.support_reader): "
                        "the installed default GGUF through llama.cpp, or --model-path")
    p.add_argument("--model-path", type=Path, help="with --reader: the GGUF to read with")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    import gmprep.core.agents.support as support

    # the switches are set for this replay only (the test suite calls main in-process)
    rule, anchored = support.named_elsewhere, support.SupportChecker.anchored_numbers
    recite_rule = support.SupportChecker.recite_new_words
    if args.no_recite_rule:
        support.SupportChecker.recite_new_words = False
    if args.no_name_rule:
        support.named_elsewhere = lambda sentence, cited, passages: []  # type: ignore[assignment]
    if args.no_number_rule:
        support.SupportChecker.anchored_numbers = False
    try:
        return _replay(args)
    finally:
        support.named_elsewhere = rule  # type: ignore[assignment]
        support.SupportChecker.anchored_numbers = anchored
        support.SupportChecker.recite_new_words = recite_rule


def _replay(args: argparse.Namespace) -> int:
    import gmprep.core.agents.support as support
    from gmprep.core.agents.pipeline import ALL_STRUCK, NOT_FOUND, AgentPipeline
    from gmprep.core.progress import AnswerProgress
    from gmprep.evals.answers import recall_hit
    from gmprep.kg.store import Store

    modes = {}
    for path in args.questions:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                modes[q["id"]] = q.get("gold_mode", "any")
    judged: dict[tuple[str, str], str] = {}
    for path in args.judgements:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                j = json.loads(line)
                judged[(j["id"].split("/")[0], _plain(j["sentence"]))] = j["label"]
    reader = None
    reads: list[float] = []
    prompt_chars: list[int] = []
    check_ms: list[float] = []
    if args.reader:
        from gmprep.core.llm.base import ChatMessage
        from gmprep.core.llm.llamacpp import LlamaCppBackend
        from gmprep.core.llm.models import installed_model

        path = args.model_path or installed_model()
        if path is None:
            raise SystemExit("replay_support: --reader needs the model (gmprep model install) or --model-path")
        llm = LlamaCppBackend(path, n_threads=args.threads)

        def reader(messages: list[dict[str, str]]) -> float | None:
            t0 = time.perf_counter()
            try:
                return llm.yes_no([ChatMessage.model_validate(m) for m in messages])
            finally:  # every reading, the check's and recite's, with its time and prompt size
                reads.append((time.perf_counter() - t0) * 1000)
                prompt_chars.append(sum(len(m["content"]) for m in messages))

    store = Store.open(args.store, create=False)
    totals = {"answers": 0, "answerable": 0, "text_cites_gold": 0, "outcomes": {}, "claims": 0, "struck": 0,
              "kept_judged": 0, "kept_supported": 0, "struck_judged_supported": 0, "struck_judged": 0}
    out_rows = []
    for run in args.runs:
        rows = json.loads(run.read_text(encoding="utf-8"))["rows"]
        for row in rows.get("llamacpp", []):
            checked = row.get("checked")
            if not checked:
                if row["outcome"] in ("not_in_books", "not_in_corpus"):
                    continue
                raise SystemExit(f"replay_support: {run}: {row['id']} has no saved check input (an older run)")
            hits = hits_for(store, checked["passages"])
            shown_ids = row["shown"]
            from gmprep.kg.models import Citation

            shown = [Citation.from_hit(h) for h in hits_for(store, shown_ids)]
            trace: list = []
            t0 = time.perf_counter()
            text, used, quoted = AgentPipeline._keep_supported(checked["checked"], checked["question"], hits, shown,
                                                               trace, AnswerProgress(), reader)
            check_ms.append((time.perf_counter() - t0) * 1000)
            totals["model_readings"] = totals.get("model_readings", 0) + trace[0].output.get("model_readings", 0)
            outcome = "answered" if used and not quoted else "partial"
            totals["answers"] += 1
            totals["outcomes"][outcome] = totals["outcomes"].get(outcome, 0) + 1
            if row["answerable"]:
                totals["answerable"] += 1
                totals["text_cites_gold"] += recall_hit(used, row["gold"], modes.get(row["id"], "any"))
            # the model's sentences the reader is shown as the answer: the text before the notes on citing again and
            # striking, and before any quoted passages; the struck ones are listed as "~~...~~" lines
            body = "" if text.startswith((NOT_FOUND, ALL_STRUCK)) else text.split("\n\n_")[0].split("\n\nFrom the books")[0]
            for sent in support.split_sentences(body):
                if sent.kind != "text" or not support.is_claim(sent.text, bool(sent.markers)):
                    continue
                totals["claims"] += 1
                label = judged.get((row["id"], _plain(sent.text)))
                if label:
                    totals["kept_judged"] += 1
                    totals["kept_supported"] += label == "supported"
            for line in text.splitlines():
                if line.startswith("- ~~") and line.endswith("~~"):
                    totals["struck"] += 1
                    label = judged.get((row["id"], _plain(line[4:-2])))
                    if label:
                        totals["struck_judged"] += 1
                        totals["struck_judged_supported"] += label == "supported"
            out_rows.append({"id": row["id"], "outcome": outcome, "used": used, "text": text})
    totals["text_cites_gold_rate"] = round(totals["text_cites_gold"] / max(1, totals["answerable"]), 4)
    # what the check costs an answer (the model's readings included): recite's readings are not in model_readings
    totals["check_ms"] = {"p50": round(statistics.median(check_ms)), "max": round(max(check_ms))} if check_ms else None
    if reads:
        totals["readings_all"] = len(reads)
        totals["reading_ms"] = {"p50": round(statistics.median(reads)), "sum": round(sum(reads))}
        totals["reading_prompt_chars_p50"] = round(statistics.median(prompt_chars))
    if args.rows:
        args.rows.write_text("".join(json.dumps(r) + "\n" for r in out_rows), encoding="utf-8")
    print(json.dumps(totals, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
