#!/usr/bin/env bash
# Retrain the cross-encoder reranker on a lent GPU machine (no network; what travels is the repo tree and
# the carried .devcarry/ folder). Mining needs the store, which does not travel, so the job is split:
#
# Here, once:   gmprep --store STORE reranker train --pairs 80000 --negatives 3 --seed 31 \
#                   --rows-out .devcarry/rows.jsonl.gz          (training/rows.py: the rows, no training)
#               scripts/gpu_reranker.sh wheels                 (.devcarry/whl: what the GPU image lacks)
# There (device run, carry [".devcarry"], from the repo root):
#               bash scripts/gpu_reranker.sh train [more `gmprep reranker train` options, e.g. --epochs 2]
#   installs the wheels into /tmp/rrsite, maps the package folders as installed (gmprep.kg = kg/, ...),
#   runs `python3 -P -m gmprep reranker train --rows-in $ROWS --device cuda --init kg/reranker_model
#   --out $OUT/model OPTIONS`, then packs $OUT/model into a tar split into parts of 15 MiB ($OUT files are
#   limited to 16 MiB each, 8 files): $OUT/model.tar.part-00.., SHA256SUMS, gmprep_reranker.json, train.log.
# Here, after:  scripts/gpu_reranker.sh join FILES_AT DEST     (sha256-checked; DEST e.g. kg/reranker_model)
set -euo pipefail
cmd=${1:?wheels|train|join}
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CARRY=${CARRY:-$ROOT/.devcarry}
PART=${PART:-15M}
PY=${PY:-python3}

# The GPU image (device KINDS.md, 2026-11) has torch, transformers, sentence-transformers, accelerate, tqdm,
# pyyaml, numpy, markdown-it-py, pyarrow, pandas, fsspec, xxhash and huggingface-hub, but not these:
# pydantic (our models and settings; needs typing-extensions >= 4.16), snowballstemmer (common.text), and
# datasets + dill + multiprocess (CrossEncoderTrainer refuses to run without datasets).
WHEELS=(pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5
        typing-extensions==4.16.0 snowballstemmer==3.1.1 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19)

case $cmd in
wheels)
  mkdir -p "$CARRY/whl"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$CARRY/whl" "${WHEELS[@]}"
  du -b "$CARRY"/whl/*.whl
  ;;
train)
  OUT=${OUT:?OUT=folder for the results}
  ROWS=${ROWS:-.devcarry/rows.jsonl.gz}
  SITE=/tmp/rrsite
  PKG=/tmp/rrpkg
  cd "$ROOT"
  if compgen -G "$CARRY/whl/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$CARRY"/whl/*.whl
  fi
  # the package as installed: pyproject's package-dir maps gmprep.kg onto kg/ and so on; ./gmprep alone
  # lacks them, so the import path gets a folder of links laid out as the installed package
  rm -rf "$PKG" && mkdir -p "$PKG/gmprep"
  "$PY" - "$ROOT" "$PKG" <<'EOF'
import sys, tomllib
from pathlib import Path
root, pkg = Path(sys.argv[1]), Path(sys.argv[2])
dirs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
for item in (root / dirs.pop("gmprep")).iterdir():
    (pkg / "gmprep" / item.name).symlink_to(item)
for name, folder in dirs.items():
    (pkg / name.replace(".", "/")).symlink_to(root / folder)
EOF
  # (EXTRA_PYTHONPATH: for trying this script elsewhere, e.g. with the GPU image's library versions)
  export PYTHONPATH=$PKG:$SITE${EXTRA_PYTHONPATH:+:$EXTRA_PYTHONPATH} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
  # -P: the repo root (the current folder) is not put first on the path, where ./gmprep would shadow $PKG
  "$PY" -P -c "import gmprep.cli, gmprep.training.trainer, datasets, pydantic, sentence_transformers as st, torch
print('gmprep', gmprep.__file__, '| torch', torch.__version__, 'cuda', torch.cuda.is_available(), '| st', st.__version__,
      '| datasets', datasets.__version__, '| pydantic', pydantic.VERSION)"
  mkdir -p "$OUT"
  "$PY" -P -m gmprep reranker train --rows-in "$ROWS" --device cuda --init kg/reranker_model --out "$OUT/model" "$@" \
    2>&1 | tr '\r' '\n' | grep --line-buffered -v '^ *[0-9]*%|' | tee "$OUT/train.log"  # not tqdm's redraws
  cp "$OUT/model/gmprep_reranker.json" "$OUT/"
  (cd "$OUT/model" && sha256sum -- * > MODEL.SHA256SUMS)
  (cd "$OUT" && tar -cf - model | split -b "$PART" -d - model.tar.part- && rm -rf model && sha256sum model.tar.part-* > SHA256SUMS)
  ls -l "$OUT"
  ;;
join)
  FROM=${1:?folder with model.tar.part-* and SHA256SUMS (files_at)}
  DEST=${2:?destination folder, e.g. kg/reranker_model}
  (cd "$FROM" && sha256sum -c SHA256SUMS)
  tmp=$(mktemp -d)
  cat "$FROM"/model.tar.part-* | tar -xf - -C "$tmp"
  (cd "$tmp/model" && sha256sum -c MODEL.SHA256SUMS && rm MODEL.SHA256SUMS)
  mkdir -p "$DEST"
  rm -f "$DEST"/*.safetensors
  cp "$tmp"/model/* "$DEST/"
  rm -rf "$tmp"
  ls -l "$DEST"
  ;;
*)
  echo "unknown step $cmd" >&2
  exit 2
  ;;
esac
