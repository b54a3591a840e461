#!/usr/bin/env bash
# Sparse, shallow checkout of the foundryvtt/pf2e compendium packs that `gmprep corpus build` reads,
# at a pinned commit, so that anyone with network access rebuilds the same corpus:
#
#   scripts/fetch_foundry_packs.sh [DEST] [COMMIT]
#   gmprep corpus build --from DEST --out ingest/data/pf2e
#
# The whole repository is ~2 GB; these folders are a small part of it. COMMIT defaults to the one
# pinned below (a foundryvtt/pf2e commit whose pack files were checked with this converter's fixtures).
set -euo pipefail
DEST=${1:-foundry-pf2e}
COMMIT=${2:-49c22915d11c182f2709eecc433406e304300afb}
PACKS=(
  packs/pf2e/classfeatures
  packs/pf2e/bestiary-ability-glossary-srd
  packs/pf2e/pathfinder-monster-core
  packs/pf2e/equipment
  packs/pf2e/hazards
  static/lang
)
if [ ! -d "$DEST/.git" ]; then
  git init -q "$DEST"
  git -C "$DEST" remote add origin https://github.com/foundryvtt/pf2e.git
fi
git -C "$DEST" sparse-checkout init --no-cone
printf '%s/\n' "${PACKS[@]}" | git -C "$DEST" sparse-checkout set --no-cone --stdin
git -C "$DEST" fetch -q --depth 1 --filter=blob:none origin "$COMMIT"
git -C "$DEST" -c advice.detachedHead=false checkout -q FETCH_HEAD
echo "foundryvtt/pf2e @ $(git -C "$DEST" rev-parse HEAD) in $DEST:"
for p in "${PACKS[@]}"; do
  printf '  %-45s %s files\n' "$p" "$(find "$DEST/$p" -name '*.json' 2>/dev/null | wc -l)"
done
