"""The question index: extra texts per entry that say *when* the entry applies, searched beside it.

An entry's own text names its rule ("You prepare to use an action ... designate a trigger"); a GM
describes the table ("can I hold my attack until the door opens?"). The question index holds, per
rules-heavy entry, questions written in a GM's voice by the local LLM offline (``gmprep questions
generate``, committed data in ``kg/data``), embedded with the store's embedder into a sidecar file in
the store folder. At query time the query vector is compared with every question; an entry scores
its best question. Search adds that ranking as one more list to its reciprocal-rank fusion.

Without generated questions (a CPU run writes ~0.6 tokens/s under load: hours for a few hundred
entries), the same index holds each rules entry's *inbound contexts*: the sentences of other entries
that link to it ("... the target is knocked prone", "If you're fatigued from a lack of sleep ...").
They say in the corpus's own words in which situations the rule comes up.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gmprep.common.jsonlines import json_objects

if TYPE_CHECKING:
    from gmprep.kg.store import Store

log = logging.getLogger(__name__)

SIDECAR = "question_index.npz"
DATA_DIR = Path(__file__).parent / "data"


def bundled_questions_path() -> Path:
    """The committed LLM-written questions (``gmprep questions generate`` writes here by default)."""
    return DATA_DIR / "questions.jsonl.gz"


def default_data_paths() -> list[Path]:
    """The bundled question data files that exist."""
    return [p for p in (bundled_questions_path(),) if p.exists()]


def read_texts(paths: Sequence[Path]) -> list[tuple[str, str]]:
    """``(node_id, text)`` pairs from question data files (JSON lines with ``node_id`` and ``questions``)."""
    out: list[tuple[str, str]] = []
    for path in paths:
        for row in json_objects(path):  # a torn last line of an interrupted run is skipped
            for q in row.get("questions", []):
                if isinstance(q, str) and q.strip():
                    out.append((row["node_id"], q.strip()))
    return list(dict.fromkeys(out))


# Entry types whose inbound contexts are indexed (as core.question_gen.RULE_TYPES: rules a situation
# calls on), and how many contexts each keeps (a condition is linked from hundreds of spells).
CONTEXT_TYPES = ("action", "condition", "rule", "hazard", "class-feature")
CONTEXTS_PER_ENTRY = 12
CONTEXT_CHARS = 300
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def inbound_contexts(store: Store, types: Sequence[str] = CONTEXT_TYPES,
                     per_entry: int = CONTEXTS_PER_ENTRY) -> list[tuple[str, str]]:
    """``(node_id, sentence)``: for each entry of ``types``, sentences of other entries that link to it
    by name, in a fixed order (linking entry id), at most ``per_entry`` distinct ones."""
    targets = {n.node_id: n for n in store.iter_nodes(kinds=("entry",)) if n.type in set(types)}
    inbound: dict[str, list[str]] = {}
    for src, dst in store.db.execute("SELECT src, dst FROM edges WHERE kind = 'ref' ORDER BY dst, src"):
        if dst in targets and src != dst and len(inbound.setdefault(dst, [])) < per_entry * 3:
            inbound[dst].append(src)
    out: list[tuple[str, str]] = []
    for dst, srcs in inbound.items():
        name = targets[dst].name.lower()
        stem = name[:-1] if len(name) > 5 else name  # "prone"/"fatigued" also match "fatigue"
        nodes = store.get_many(srcs)
        kept: list[str] = []
        for sid in srcs:
            node = nodes.get(sid)
            if node is None:
                continue
            for sentence in _SENTENCE.split((node.text or "").replace("\n", " ")):
                if stem in sentence.lower() and 20 <= len(sentence) and sentence not in kept:
                    kept.append(sentence[:CONTEXT_CHARS])
                    break
            if len(kept) >= per_entry:
                break
        out += [(dst, s) for s in kept]
    return out


def question_pairs(store: Store, paths: Sequence[Path], contexts: bool = True, types: Sequence[str] = CONTEXT_TYPES,
                   per_entry: int = CONTEXTS_PER_ENTRY) -> list[tuple[str, str]]:
    """``(node_id, text)`` the index holds: the questions of ``paths`` whose entry is in ``store`` and, with
    ``contexts``, the rules entries' inbound contexts (the dense stage embeds the same texts)."""
    pairs = read_texts(paths) + (inbound_contexts(store, types, per_entry) if contexts else [])
    known = store.get_many(list(dict.fromkeys(nid for nid, _ in pairs)))
    return [(nid, t) for nid, t in pairs if nid in known]


def build_question_index(store: Store, paths: Sequence[Path], device: str | None = None, embedder=None,
                         contexts: bool = True, types: Sequence[str] = CONTEXT_TYPES,
                         per_entry: int = CONTEXTS_PER_ENTRY) -> str:
    """Embed the questions of ``paths`` whose entry is in ``store`` (and, with ``contexts``, the rules
    entries' inbound contexts) into the store's sidecar file."""
    pairs = question_pairs(store, paths, contexts, types, per_entry)
    target = Path(store.root) / SIDECAR
    if not pairs:
        target.unlink(missing_ok=True)
        return "question index: no questions for this store's entries"
    if embedder is None:
        from gmprep.kg.embedder import shared_embedder

        embedder = shared_embedder(device)
    vecs = np.asarray(embedder.encode([t for _, t in pairs]), dtype=np.float32)
    ids = np.array([nid for nid, _ in pairs])
    tmp = target.with_suffix(".tmp.npz")
    np.savez(tmp, ids=ids, vectors=vecs)
    tmp.replace(target)
    return f"question index: {len(pairs)} questions for {len(set(ids.tolist()))} entries -> {target}"


class QuestionIndex:
    """The sidecar's vectors, searched exactly (a few thousand rows: a matrix product is < 1 ms)."""

    def __init__(self, ids: np.ndarray, vectors: np.ndarray):
        self.ids = ids
        self.vectors = vectors
        uniq, inverse = np.unique(ids, return_inverse=True)
        self._entries = uniq
        self._inverse = inverse

    @classmethod
    def load(cls, store: Store) -> QuestionIndex | None:
        path = Path(store.root) / SIDECAR
        if not path.exists():
            return None
        with np.load(path) as z:
            return cls(z["ids"], z["vectors"].astype(np.float32))

    def __len__(self) -> int:
        return len(self.ids)

    def search(self, qvec: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Entries by their best question's cosine to the query, best first."""
        sims = self.vectors @ qvec.astype(np.float32)
        best = np.full(len(self._entries), -1.0, dtype=np.float32)
        np.maximum.at(best, self._inverse, sims)
        order = np.argsort(-best)[:k]
        return [(str(self._entries[i]), float(best[i])) for i in order]


_cache: dict[str, tuple[float, QuestionIndex | None]] = {}
_lock = threading.Lock()


def question_index_for(store: Store) -> QuestionIndex | None:
    """The store's question index (reloaded when its file changes), or None when it has none."""
    path = Path(store.root) / SIDECAR
    mtime = path.stat().st_mtime if path.exists() else -1.0
    with _lock:
        hit = _cache.get(str(path))
        if hit is not None and hit[0] == mtime:
            return hit[1]
        index = QuestionIndex.load(store) if mtime >= 0 else None
        _cache[str(path)] = (mtime, index)
        return index
