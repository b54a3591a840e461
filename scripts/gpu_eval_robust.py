"""`gmprep eval answers` one question at a time, recording a crash as outcome `crash` instead of stopping.

Used by scripts/gpu_answers.sh on the GPU machine: args QUESTIONS STORE OUTDIR NAME SAMPLE MODEL.
"""
import asyncio
import json
import sys
import traceback
from pathlib import Path

from gmprep.commands import open_searcher
from gmprep.common.settings import Settings
from gmprep.evals.answers import QuestionResult, evaluate, load_questions, summarize

questions, store_dir, outdir, name, sample, model = sys.argv[1:7]
settings = Settings().merged({"store_dir": store_dir, "llm": {"backend": "transformers", "model_path": model}})
qs = load_questions(Path(questions), sample=int(sample))
store, searcher = open_searcher(settings)
out = Path(outdir)
results = []
with open(out / f"{name}.jsonl", "w") as f:
    for q in qs:
        try:
            r = asyncio.run(evaluate([q], searcher, settings))[0]
        except Exception:
            print(f"CRASH {q.id}: {traceback.format_exc()[-600:]}", file=sys.stderr, flush=True)
            r = QuestionResult(id=q.id, kind=q.kind, outcome="crash", cited=[], declined=False,
                               recall_at_5=None if q.kind == "unanswerable" else 0.0, ms=0.0, tokens_in=0, tokens_out=0)
        results.append(r)
        f.write(r.model_dump_json() + "\n")
        f.flush()
        (out / f"{name}.json").write_text(json.dumps(summarize(results, "transformers"), indent=2))
