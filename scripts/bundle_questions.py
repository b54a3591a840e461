"""Bundle the written situation questions into the question index's data (kg/data/questions.jsonl.gz).

    python scripts/bundle_questions.py

Reads the written question files of bench/data/question-gen (each with its manifest: who wrote them, with
which instruction, from which entries), keeps the entries that have questions, in file order, and writes
kg/data/questions.jsonl.gz (deterministic gzip) and its manifest with each file's sha256. The question index
(``gmprep questions index``, part of ``gmprep index build``) embeds that file.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GEN = ROOT / "bench" / "data" / "question-gen"
# The rules entries' and prose sections' situations. written-entry-situations (spells, feats, items, class
# features, skills) trains the reranker only: in the index its 5,953 questions pulled situation questions
# toward options (tuning sets R@5 0.886 -> 0.865, situations 0.882 -> 0.853; docs/retrieval.md, reranker r8).
FILES = ["written-situations.jsonl.gz", "written-prose-situations.jsonl.gz"]
OUT = ROOT / "kg" / "data" / "questions.jsonl.gz"


def main() -> int:
    rows, digests = [], {}
    for name in FILES:
        path = GEN / name
        digests[f"bench/data/question-gen/{name}"] = hashlib.sha256(path.read_bytes()).hexdigest()
        with gzip.open(path, "rt", encoding="utf-8") as f:
            rows += [r for r in map(json.loads, f) if r.get("questions")]
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        for r in rows:
            f.write((json.dumps(r, ensure_ascii=False) + "\n").encode("utf-8"))
    manifest = {
        "source": "written situation questions (bench/data/question-gen/written-*: see their manifests; written by "
                  "Claude as gmprep helper agents with the situation-questions-v1 instruction, never shown an "
                  "evaluation set); bundled by scripts/bundle_questions.py",
        "prompt_version": "situation-questions-v1",
        "entries": len(rows),
        "questions": sum(len(r["questions"]) for r in rows),
        "files": digests,
        "replaces": "4 entries' questions by Qwen2.5-Coder-1.5B (bench/data/question-gen/qwen-1.5b-all.* keeps that run)",
        "note": "`gmprep questions generate` writes a new file with its own manifest; pass --out to keep this one",
    }
    OUT.with_name("questions.manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {manifest['entries']} entries, {manifest['questions']} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
