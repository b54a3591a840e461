"""Long entries read to their end: write a store's question index with the entries' later parts added (measured,
not shipped: docs/retrieval.md, "Long rules entries read to the end").

An entry's vector is MiniLM's reading of its first 254 word pieces; a long rules section states most of its rules
further down (the Player Core's rules overview: "Duplicate Effects" after 1,500 characters). This script cuts each
long entry of the given types past that window into whole paragraphs of about ``--chars`` characters, each led by
the entry's name, and writes them into the store's question index sidecar beside the questions and inbound contexts
(an entry then also scores its best part). Search reads the sidecar as it is, so `gmprep eval retrieval/answers`
on the store measure the change. Run it on a copy of a store: it replaces the copy's sidecar.

    cp -r STORE /tmp/parts-store
    python bench/question_parts.py /tmp/parts-store [--types rule,class-feature,action,condition,trait,skill] [--chars 900]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WINDOW_TOKENS = 254  # MiniLM's 256 less its two special tokens: what the entry's own vector reads
OVERLAP_CHARS = 200  # the first part starts this far back inside what the entry's vector read
_PARAGRAPH = re.compile(r"\n\s*\n|\n(?=[-*] )")


def entry_parts(node, tokenizer, chars: int) -> list[str]:
    """What the embedder does not read of ``node`` in its own vector, as whole paragraphs packed up to ``chars``
    characters (a longer paragraph cut at a sentence end), each ``"Name: text"``; [] for an entry that fits."""
    from gmprep.common.text import clean_markdown, contextual_text

    full = contextual_text(node, max_chars=10**7)
    ids = tokenizer(full, add_special_tokens=False, verbose=False)["input_ids"]
    if len(ids) <= WINDOW_TOKENS:
        return []
    read = len(tokenizer.decode(ids[:WINDOW_TOKENS]))
    body = clean_markdown(node.text) if node.text else (node.summary or "")
    start = max(0, read - (len(full) - len(body)) - OVERLAP_CHARS)
    out: list[str] = []
    chunk = ""
    for para in (p.strip() for p in _PARAGRAPH.split(body[start:])):
        if not para:
            continue
        if chunk and len(chunk) + 1 + len(para) > chars:
            out.append(chunk)
            chunk = ""
        chunk = f"{chunk} {para}".strip()
        while len(chunk) > chars * 3 // 2:
            cut = chunk.rfind(". ", 0, chars)
            cut = cut + 1 if cut > chars // 3 else chars
            out.append(chunk[:cut].strip())
            chunk = chunk[cut:].strip()
    if chunk:
        out.append(chunk)
    return [f"{node.name}: {p}" for p in out]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("store", type=Path, help="a copy of a built store (its question_index.npz is replaced)")
    p.add_argument("--types", default="rule,class-feature,action,condition,trait,skill",
                   help="entry types whose later parts are added ('all': every entry)")
    p.add_argument("--chars", type=int, default=900)
    args = p.parse_args(argv)

    import numpy as np

    from gmprep.kg import question_index as qi
    from gmprep.kg.embedder import shared_embedder
    from gmprep.kg.store import Store

    store = Store.open(args.store, create=False)
    embedder = shared_embedder("cpu")
    types = None if args.types == "all" else set(args.types.split(","))
    nodes = sorted((n for n in store.iter_nodes(kinds=("entry",)) if types is None or n.type in types),
                   key=lambda n: n.node_id)
    parts = [(n.node_id, t) for n in nodes for t in entry_parts(n, embedder.model.tokenizer, args.chars)]
    pairs = qi.question_pairs(store, qi.default_data_paths()) + parts
    vecs = np.asarray(embedder.encode([t for _, t in pairs]), dtype=np.float32)
    np.savez(args.store / qi.SIDECAR, ids=np.array([nid for nid, _ in pairs]), vectors=vecs)
    print(f"{len(parts)} parts of {len({nid for nid, _ in parts})} entries added to {len(pairs) - len(parts)} "
          f"questions and contexts -> {args.store / qi.SIDECAR}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
