"""Add to the shipped mention scorer's zipf table the words of entry names it lacks, weights untouched.

Why: the scorer reads how common each word of an entry's name is in ordinary English from a table
stored in the model file at training time (``build_tables``: wordfreq's zipf for every name word). A
word missing from it reads as 0, i.e. as rarer than any English word, which is strong evidence for a
rule: entries added to the corpus after training ("Society", "Religion" from the skill entries) were
hovered in lowercase everyday prose with confidence ~1. This fills exactly those words with the value
training would have stored (``zipf_frequency(word, "en")`` rounded to 2, zero values left out) and
records it in the model manifest. Retraining (``gmprep hover train-scorer``) rebuilds the whole table.

Usage: python scripts/extend_scorer_zipf.py   (needs wordfreq, from the ``train`` extra)
"""

from __future__ import annotations

import json

from wordfreq import zipf_frequency

from gmprep.ingest.corpus import load_corpus
from gmprep.kg.mention_scorer import MODEL_DIR, MODEL_FILE
from gmprep.kg.names import NameIndex


def main() -> int:
    path = MODEL_DIR / MODEL_FILE
    model = json.loads(path.read_text(encoding="utf-8"))
    idx = NameIndex.build(load_corpus().nodes)
    name_words = {w for key in idx._keys for w in key if not w.isdigit()}
    missing = sorted(w for w in name_words if w not in model["zipf"])
    added = {w: z for w in missing if (z := round(zipf_frequency(w, "en"), 2)) > 0}
    model["zipf"] = {**model["zipf"], **added}
    path.write_text(json.dumps(model, sort_keys=True), encoding="utf-8")  # as training writes it
    manifest_path = MODEL_DIR / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["zipf_words"] = len(model["zipf"])
    manifest["zipf_extended"] = {
        "by": "scripts/extend_scorer_zipf.py (weights unchanged)", "words_added": len(added),
        "corpus": load_corpus().digest[:16],
    }
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"{len(added)} name words added to the zipf table ({len(missing) - len(added)} have no English frequency)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
