"""Hard negatives for the generated queries: BM25 and dense neighbours that would not also answer.

Negatives for a query are its BM25 and dense neighbours in the store, interleaved, minus entries that
would be false negatives (the positive, entries sharing its base name, entries containing the masked
sentence, entries the generator knows also answer), plus some drawn at random so easy cases are seen
too. ``sentence_transformers.util.mine_hard_negatives`` was considered and not used: it mines by one
embedding model over a fixed passage text only (no BM25 side, which finds the lexical near-misses a
reranker has to learn), and its false-negative guards are score margins, not the corpus knowledge
above (a "Glue Bomb (Lesser)" query must not take "Glue Bomb (Greater)" as a negative).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

from pydantic import Field

from gmprep.common.errors import GmprepError
from gmprep.common.text import clean_markdown
from gmprep.kg.models import Node
from gmprep.training.long_questions import lengthen, pick_mention, with_context
from gmprep.training.queries import TrainQuery, generate_queries, written_queries


class TrainGroup(TrainQuery):
    """A query with its positive and mined negatives (node ids)."""

    negatives: list[str] = Field(default_factory=list)


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
        # an entry the question names without asking about it is the hardest negative it has
        hard = [c for c in dict.fromkeys([*q.mentioned, *cands]) if _fair_negative(nodes.get(c), q, pos_base)]
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


def long_written(queries: Sequence[TrainQuery], nodes: dict[str, Node],
                 bm25: Callable[[str, int], list[tuple[str, float]]], share: float, mention_share: float,
                 seed: int) -> list[TrainQuery]:
    """``queries`` (written ones) with ``share`` of them, drawn by ``seed``, told long (``long_questions.lengthen``:
    generator "long"); ``mention_share`` of those also name one of the short question's first BM25 neighbours
    that would be a fair negative (not a prose section: their names are headings), kept as ``mentioned``."""
    rng = random.Random(seed + 11)

    def tell(q: TrainQuery) -> TrainQuery:
        pos = nodes[q.positive]
        mentioned: list[str] = []
        if rng.random() < mention_share:
            fair = [nid for nid, _ in bm25(q.query, 12)
                    if _fair_negative(nodes.get(nid), q, _base_name(pos.name)) and not nodes[nid].is_prose
                    and len(nodes[nid].name) >= 4]
            other = pick_mention(fair, rng)
            mentioned = [other] if other else []
        text = lengthen(q.query, rng, avoid_name=pos.name, mention=nodes[mentioned[0]].name if mentioned else None)
        return q.model_copy(update={"query": text, "generator": "long", "mentioned": mentioned})

    return _tell_share(queries, share, rng, tell)


def _tell_share(queries: Sequence[TrainQuery], share: float, rng: random.Random,
                tell: Callable[[TrainQuery], TrainQuery]) -> list[TrainQuery]:
    """``queries`` with ``share`` of them, drawn by ``rng``, rewritten by ``tell`` (in order, so one seed gives
    one result); the rest as they are."""
    picked = set(rng.sample(range(len(queries)), round(len(queries) * max(0.0, min(1.0, share)))))
    return [tell(q) if i in picked else q for i, q in enumerate(queries)]


_SCENE_EDGES = ("ref", "ref_by", "next", "prev")  # links that share a scene (not traits, not the book's tree)


def context_written(queries: Sequence[TrainQuery], nodes: dict[str, Node],
                    bm25: Callable[[str, int], list[tuple[str, float]]], written_by_node: Mapping[str, Sequence[str]],
                    share: float, seed: int, neighbors: Callable[[str], list[str]] | None = None,
                    ) -> list[TrainQuery]:
    """``queries`` (written ones) with ``share`` of them, drawn by ``seed``, told inside context made of another
    entry's written questions (``long_questions.with_context``: generator "context"). The other entry is one of
    the first five fair neighbours of the short question (BM25) or of its entry (``neighbors``: the graph's
    links) that has written questions of its own; it is kept as ``mentioned``, so it becomes the first hard
    negative. A query with no such neighbour stays as it is."""
    rng = random.Random(seed + 23)

    def tell(q: TrainQuery) -> TrainQuery:
        pos = nodes[q.positive]
        base = _base_name(pos.name)
        lexical = [nid for nid, _ in bm25(q.query, 12)]
        linked = neighbors(q.positive) if neighbors is not None else []
        fair = [nid for nid in dict.fromkeys([*lexical, *linked])
                if written_by_node.get(nid) and _fair_negative(nodes.get(nid), q, base)]
        lex_fair = [nid for nid in fair if nid in lexical][:5]
        link_fair = [nid for nid in fair if nid not in lexical][:3]
        pool = lex_fair + link_fair
        if not pool:
            return q
        other = rng.choice(pool)
        others = list(written_by_node[other])
        chosen = rng.sample(others, 2 if len(others) > 1 and rng.random() < 0.3 else 1)
        text, told = with_context(q.query, chosen, rng, avoid_name=pos.name)
        return q.model_copy(update={"query": text, "generator": "context", "mentioned": [other],
                                    "context": f"{told}/{'lexical' if other in lexical else 'graph'}"})

    return _tell_share(queries, share, rng, tell)


def groups_from_store(store, pairs: int, negatives: int, seed: int, progress: bool = True,
                      written: Sequence[tuple[str, str]] = (), written_share: float = 0.5,
                      long_share: float = 0.0, mention_share: float = 0.5, context_share: float = 0.0,
                      ) -> tuple[list[TrainGroup], dict[str, Node]]:
    """Generate queries from the store's corpus entries and mine their negatives with the store's
    BM25 and vectors (the vectors only when the store has them). ``written``: ``(node_id, question)``
    pairs written for entries (situations in a GM's words); up to ``written_share`` of the queries are
    drawn from them, the rest generated, so the reranker keeps what the generated queries taught it.
    ``long_share`` of the written ones are told long (``long_written``), ``context_share`` of the rest inside
    another entry's written questions (``context_written``), the rest stay short."""
    nodes = {n.node_id: n for n in store.iter_nodes(kinds=("entry",), origin_prefix="corpus:")}
    if not nodes:
        raise GmprepError(f"the store in {store.root} holds no corpus entries: run `gmprep index build` first")
    n_queries = max(1, pairs // (1 + negatives))
    from_written = written_queries(written, nodes, round(n_queries * written_share), seed) if written else []
    if long_share > 0:
        from_written = long_written(from_written, nodes, store.bm25, long_share, mention_share, seed)
    if context_share > 0 and from_written:
        by_node: dict[str, list[str]] = {}
        for nid, text in written:
            by_node.setdefault(nid, []).append(text)
        short = [i for i, q in enumerate(from_written) if q.generator == "written"]
        told = context_written([from_written[i] for i in short], nodes, store.bm25, by_node, context_share, seed,
                               neighbors=lambda nid: [o for o, _ in store.neighbors(nid, _SCENE_EDGES)])
        for i, q in zip(short, told, strict=True):
            from_written[i] = q
    queries = from_written + generate_queries(list(nodes.values()), n_queries - len(from_written), seed)
    dense = dense_miner(store)

    groups = mine_negatives(queries, nodes, store.bm25, dense, negatives, seed, progress=progress)
    return groups, nodes


def dense_miner(store):
    """``texts, k -> ranked (id, score) lists`` from the store's stock vectors, or None without vectors: the
    dense half of hard-negative mining, shared by the reranker's and the bi-encoder's rows."""
    if not store.has_embeddings():
        return None
    from gmprep.kg.embedder import shared_embedder

    embedder = shared_embedder()

    def dense(texts: list[str], k: int) -> list[list[tuple[str, float]]]:
        vecs = embedder.encode(texts, batch_size=128)
        return [store.vector_search(v, k) for v in vecs]

    return dense
