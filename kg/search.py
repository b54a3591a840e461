"""Hybrid search over the store: names, BM25 + vectors, cross-encoder rerank, graph expansion.

Pipeline of ``Searcher.search``:

1. **Query reading** (``kg.query``): entry names, aliases, values ("frightened 2") and legacy names
   ("flat-footed", rewritten to the Remaster name before anything else reads the query), one-word
   actions used as verbs ("Trips"), and the asked-for type and spell rank ("Which 2nd-rank spell").
   A name that *is* the query ("Bless", "Stats for an ogre warrior") is an exact hit and ranks first;
   a name inside a longer question is a hint; "my fighter" names a character, not the class entry.
2. **Seeds**: FTS5 BM25 and the vector index, ``seed_k`` each, fused by reciprocal rank (RRF); the
   fused rank gives each candidate a prior (1 for the first, 0.5 for the fifth ...). A long question (a forum
   post: a story, then the ask) is also read as what it asks (``search.focus_weight``): its asking sentences'
   dense and question-index lists join the fusion at a share of a plain list's weight.
3. **Rerank** (when on): the cross-encoder scores the ``rerank_top`` fused entries, the ``prose_top``
   best sections of the books' rules prose beside them, and the named ones; a candidate's score is then
   its reranker probability plus ``rerank_prior`` (0.6) x its prior. In a question over ``rerank_words`` (40)
   words (a forum post, which the cross-encoder reads only as its asking sentences) the probability counts
   (rerank_words / words)^2 of itself, so the first-stage order, which read the whole post, keeps more say.
   With ``search.rerank_readings`` (off) such a post is also read sentence by sentence and whole, and a
   candidate keeps its best probability.
4. **Graph expansion**: the best results lend score to what they point to: names and links in their
   text (weighted up when the paragraph holding the link shares the query's words, and when the
   target is a condition), traits, parent/child entries, siblings and other grades of an item; decayed
   per hop (``expand_decay``) and scaled by the lead's vector similarity to the query. New leads that
   reach the result list are expanded again until none does or ``expand_rounds`` is spent. This is
   what brings the condition an action imposes (Trip -> Prone). In a question over ``rerank_words`` words
   what a lead inherits is scaled by the reranker's share too (``search.expand_share``): a long post's story
   names entries whose links would otherwise fill its top 10.
5. **Filters** (book, type, trait, rarity, level range, kind, origin) apply to every candidate, and
   further grades of one item family are demoted so they do not fill the top five.
6. **Link slot** (``search.link_slot``): when neither of the two best hits has what its paragraph matching
   the query links to among the first five, the best such link by the cross-encoder (at least
   ``link_slot_floor``, and above the fifth entry's reranker score) takes the fifth place: a two-part
   question's second entry (Trip -> Prone) is cited even when it shares none of the question's words.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from gmprep.common.errors import GmprepError, StoreError
from gmprep.common.settings import SearchSettings, Settings
from gmprep.common.text import content_stems
from gmprep.kg.models import Hit, Node, SearchFilters
from gmprep.kg.query import QueryAnalysis, analyze, asking, condense, sentences, verb_index
from gmprep.kg.render import plain_stat_line

if TYPE_CHECKING:
    from gmprep.kg.dense_stage import DenseStage
    from gmprep.kg.embedder import Embedder
    from gmprep.kg.names import NameIndex
    from gmprep.kg.reranker import Reranker
    from gmprep.kg.store import Store

log = logging.getLogger(__name__)

RRF_K = 60
PRIOR_HALF_RANK = 4  # the fused rank whose prior is half the first one's
# How fast the reranker's share falls past ``search.rerank_words`` (2: a post of twice that length keeps a quarter):
# 1, 2 and 3 were measured alike on the tuning sets (docs/retrieval.md, "The reranker's say in a long post").
RERANK_SHARE_POWER = 2
# What a lead inherits from the entry pointing to it, by how it is reached: (weight, relevance floor).
# "link": a name or a link in the entry's text (Trip -> Prone): few, specific, so even a lead that looks
# unlike the query keeps part of its share; traits, hierarchy and siblings count only when similar.
LEAD_WEIGHTS = {
    "link": (1.0, 0.3), "trait": (0.6, 0.0), "parent": (0.5, 0.0), "child": (0.5, 0.0),
    "next": (0.4, 0.0), "prev": (0.4, 0.0), "grade": (0.5, 0.0),
}
# What the query's own words add: a name that is the whole query wins outright.
NAME_BONUS = {"exact": 2.0, "hint": 0.5, "verb": 0.3, "character": 0.0}
HINTS = frozenset({"hint", "verb"})  # the bonuses ``search.hint_words`` (or ``hint_model``) scales down in a long question
CHARACTER_FACTOR = 0.6  # "my fighter": the class entry is rarely what a question about a PC asks for
INTENT_BONUS = 0.15  # the entry is of the type the question asks for (and again for the named spell rank)
FAMILY_DECAY = 0.8  # score kept by each further grade of the same item family
EXPAND_FROM = 5  # how many of the best results lend score in the first round
PARAGRAPH_CACHE = 8192  # entries whose paragraph links are kept (a few KB each)
FUSE_DEPTH = 10  # how deep each phrasing's list is read by search_fused
FUSE_RRF_K = 10  # small: the first few places of each list dominate
# A link to a condition is what an action, spell, item or monster ability leaves its target with: the
# usual second half of a two-step question. Links to anything else inherit less.
EFFECT_TYPES = frozenset({"condition"})
# Index entries (a skill's list of the actions and feats that use it, ingest/skills.py) are where an entry
# is listed, not what its text points to: the skill named in "Attempt an Athletics check" would otherwise
# pull the index into the neighbourhood of every action that rolls it.
INDEX_TYPES = frozenset({"skill"})
OTHER_LINK_FACTOR = 0.7  # share a non-condition link target keeps
# The link slot (``search.link_slot``): the place a top hit's linked entry may take, how many of the best hits
# lend it, and at most how many of their links the cross-encoder scores for it (a few ms each).
LINK_SLOT_AT = 5
LINK_SLOT_FROM = 2
LINK_SLOT_PAIRS = 6
# Seed lists are read SEED_WIDEN times deeper under a filter that keeps fewer than SEED_KEEP of their candidates.
SEED_WIDEN = 4
SEED_KEEP = 0.5

@dataclass
class Candidate:
    """One entry under consideration, with the evidence gathered for it."""

    node: Node
    rrf: float = 0.0
    plain_rrf: float = 0.0  # from the BM25 and dense lists only (without the question index)
    prior: float = 0.0  # from the fused rank: 1 for the first, 0.5 for the fifth, ...
    bm25_rank: int | None = None
    dense_rank: int | None = None
    question_rank: int | None = None
    named: str | None = None  # how the query names it: exact, hint, verb, character
    rerank: float | None = None  # reranker probability
    graph: float = 0.0  # score inherited along edges
    via: str = "seed"
    score: float = 0.0
    sources: list[str] = field(default_factory=list)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def passes(node: Node, filters: SearchFilters | None) -> bool:
    """True when ``node`` satisfies every non-empty filter."""
    if filters is None:
        return node.kind == "entry"
    if filters.kinds and node.kind not in filters.kinds:
        return False
    if filters.books and (node.book or "") not in filters.books:
        return False
    if filters.types and node.type not in filters.types:
        return False
    if filters.traits and not set(filters.traits) & set(node.traits):
        return False
    if filters.rarities and (node.rarity or "common") not in filters.rarities:
        return False
    if filters.level_min is not None and (node.level is None or node.level < filters.level_min):
        return False
    if filters.level_max is not None and (node.level is None or node.level > filters.level_max):
        return False
    if filters.origins and not any(node.origin.startswith(o) for o in filters.origins):
        return False
    return True


def to_hit(node: Node, score: float, via: str) -> Hit:
    """A citable hit for ``node``."""
    return Hit(
        source_id=node.source_id, node_id=node.node_id, name=node.name, type=node.type, book=node.book,
        page=node.page, path=node.path, level=node.level, traits=node.traits, score=round(float(score), 5),
        text=node.text or node.summary, origin=node.origin, via=via, stats=plain_stat_line(node),
    )


class Searcher:
    """Hybrid search over one store. Thread-safe for concurrent ``search`` calls.

    ``embedder`` and ``reranker`` default to the shared process-wide instances on ``device``, loaded on
    first use; without vectors in the store search is lexical, and a reranker that cannot be loaded is
    reported once in ``warnings`` and search goes on without it.
    """

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        settings: SearchSettings | None = None,
        names: NameIndex | None = None,
        device: str | None = None,
    ):
        self.store = store
        self.settings = settings or SearchSettings()
        self.device = device
        self._embedder = embedder
        self._reranker = reranker
        self._names = names
        self._verbs: dict[str, str] | None = None
        self._types: dict[str, str] = {}
        self._families: dict[str, list[str]] = {}
        self._lock = threading.RLock()
        # An entry's paragraphs and the names each one mentions do not depend on the query: found once
        # per text (the name scan was most of a search's CPU before this cache).
        self._paragraph_links = lru_cache(maxsize=PARAGRAPH_CACHE)(self._scan_paragraphs)
        self._reranker_failed = False
        self.warnings: list[str] = []

    @classmethod
    def from_settings(cls, store: Store, settings: Settings) -> Searcher:
        """The searcher the settings describe: their search knobs, their ``device`` for every model, their
        threads for one query's model calls."""
        from gmprep.kg import threads

        threads.configure(settings.query_threads)
        return cls(store, settings=settings.search, device=settings.device)

    # ----- lazily loaded parts ----------------------------------------------------------------------
    @property
    def names(self):
        """The name index over the store's entries (built on first use, ~1 s)."""
        self._ensure_indexes()
        return self._names

    def _ensure_indexes(self) -> None:
        """Name index, action-verb forms, entry types and item families, from one pass over the entries."""
        if self._names is not None and self._verbs is not None:
            return
        from gmprep.kg.names import NameIndex

        with self._lock:
            if self._verbs is not None and self._names is not None:
                return
            nodes = list(self.store.iter_nodes(kinds=("entry",)))
            if self._names is None:
                self._names = NameIndex.build(nodes)
            self._types = {n.node_id: n.type for n in nodes}
            families: dict[str, list[str]] = {}
            for n in nodes:
                families.setdefault(family(n), []).append(n.node_id)
            self._families = {n.node_id: families[family(n)] for n in nodes if len(families[family(n)]) > 1}
            self._verbs = verb_index(nodes)

    def refresh_names(self) -> None:
        """Forget the query-side indexes (call after the store changed, e.g. notes were re-indexed)."""
        with self._lock:
            self._names = None
            self._verbs = None
            self._paragraph_links.cache_clear()

    def analyze(self, query: str) -> QueryAnalysis:
        """What the query names and asks for (see ``kg.query``)."""
        self._ensure_indexes()
        return analyze(query, self._names, self._verbs or {}, self._types, self.settings.class_own_features,
                       self.settings.spell_cues, self.settings.initials)

    def check_vectors(self) -> None:
        """StoreError when the store's vectors are missing or half-built (see ``embedder``)."""
        problem = self.store.vector_problem()
        if problem is not None:
            raise StoreError(f"{problem}; search refuses to run on keywords alone: run `gmprep index build`")

    @property
    def embedder(self) -> Embedder | None:
        """The query embedder (the process's shared one on ``device``), or None when the store was
        built without vectors (``--no-embed``).

        A store whose vectors are lost or half-built raises StoreError instead of searching by
        keywords alone: on the held-out questions BM25 alone finds the right entry in the top 5 for
        0.29 of them against 0.75 hybrid, so a quiet fallback would hand out worse citations as if
        nothing were wrong, while the repair is one command."""
        self.check_vectors()
        if not self.store.any_embedded():
            return None
        if self._embedder is None:
            from gmprep.kg.embedder import shared_embedder

            self._embedder = shared_embedder(self.device)
        return self._embedder

    @property
    def dense_stage(self) -> DenseStage | None:
        """The fine-tuned bi-encoder's seed lists (``kg.dense_stage``), or None: no fine-tuned model, no
        sidecar of it in the store, or ``dense_model`` off. The stock vectors serve everything else."""
        if not self.settings.dense_model:
            return None
        from gmprep.kg.dense_stage import dense_stage_for

        return dense_stage_for(self.store, self.device)

    def _has_notes(self) -> bool:
        """Whether the store holds entries beyond the corpus (notes), cheap: one row."""
        row = self.store.db.execute("SELECT 1 FROM nodes WHERE kind = 'entry' AND origin NOT LIKE 'corpus:%' LIMIT 1").fetchone()
        return row is not None

    @property
    def reranker(self) -> Reranker | None:
        """The cross-encoder, or None when it cannot be loaded (the reason is in ``warnings``)."""
        if self._reranker is None and not self._reranker_failed:
            from gmprep.kg.reranker import shared_reranker

            try:
                self._reranker = shared_reranker(max_length=self.settings.rerank_max_length, device=self.device)
            except GmprepError as exc:
                self._reranker_failed = True
                self.warnings.append(f"search without rerank: {exc}")
                log.warning("search without rerank: %s", exc)
        return self._reranker

    # ----- public API -------------------------------------------------------------------------------
    def lookup(self, name: str) -> Hit | None:
        """The entry a name (alias, plural, value such as "frightened 2", legacy name) denotes, or None."""
        text = name.strip()
        if not text:
            return None
        node_id = self.names.lookup(text)
        via = "name"
        if node_id is None:
            mentions = self.names.find_mentions(text)
            if len(mentions) == 1 and mentions[0].start == 0 and mentions[0].end >= len(text.rstrip(" .?!")):
                node_id = mentions[0].node_id
        if node_id is None:
            node_id = self.store.resolve_name(text)
        if node_id is None:
            return None
        node = self.store.get(node_id)
        if node is None:
            return None
        legacy = self.names.legacy_of(text)
        if legacy:
            via = f"name (legacy: {legacy})"
        return to_hit(node, 1.0, via)

    def search(self, query: str, k: int = 10, filters: SearchFilters | None = None, rerank: bool | None = None) -> list[Hit]:
        """The ``k`` best entries for ``query``, best first (see the module docstring for the steps)."""
        query = query.strip()
        if not query or k <= 0:
            return []
        s = self.settings
        use_rerank = s.rerank if rerank is None else rerank
        qa = self.analyze(query)
        rewritten = (qa.situation or qa.text) if self.settings.mask_characters else qa.text
        pool: dict[str, Candidate] = {}
        qvec = self._seed(rewritten, pool, filters)
        focus = self._focus(rewritten)
        if focus is not None:
            self._seed(focus, pool, filters, focus_weight=s.focus_weight)
        self._add_named(qa.named, pool, filters)
        if not pool:
            return []
        ranked = sorted(pool.values(), key=lambda c: (-c.rrf, c.node.node_id))
        for r, c in enumerate(ranked):
            c.prior = 1.0 / (1.0 + r / PRIOR_HALF_RANK) if c.rrf > 0 else 0.0
        reranker = self.reranker if use_rerank else None
        if reranker is not None:
            chosen = _window(ranked, s.rerank_top, s.prose_top)
            # the plain query's own best candidates are always reranked: the question index may add
            # candidates to the window, never push the plain lists' out of it
            plain = sorted((c for c in pool.values() if c.plain_rrf > 0), key=lambda c: (-c.plain_rrf, c.node.node_id))
            chosen += [c for c in _window(plain, s.rerank_top, s.prose_top) if c not in chosen]
            chosen = [c for c in chosen if c.named != "exact"]  # a name that is the whole query is decided
            chosen += [c for c in pool.values() if c.named in ("hint", "verb") and c not in chosen]
            probs = reranker.score_nodes(rewritten, [c.node for c in chosen], s.rerank_query_tokens)
            for c, logit in zip(chosen, probs, strict=True):
                c.rerank = _sigmoid(logit)
            if s.rerank_readings:
                self._other_readings(rewritten, chosen, reranker)
        shares = self._hint_shares(qa)
        trust = _rerank_share(qa.text, s.rerank_words)
        for c in pool.values():
            share = shares.get(c.node.node_id, 1.0) if shares is not None else _hint_share(qa.text, s.hint_words)
            c.score = self._base_score(c, qa, reranked=reranker is not None, hint_share=share, rerank_share=trust)
        if s.subname_penalty > 0:
            self._demote_subnames(pool, qa, s.subname_penalty)
        if s.expand_rounds > 0:
            # in a long post the story's named entries lead the list, and their links would fill the rest of it
            # (the conditions of the story): what they lend shrinks with the reranker's share (expand_share)
            self._expand(pool, rewritten, qvec, filters, k, lend=trust if s.expand_share else 1.0)
        ranked = _diversify(sorted(pool.values(), key=lambda c: (-c.score, c.node.node_id)))
        if s.link_slot and reranker is not None and k >= LINK_SLOT_AT:
            ranked = self._link_slot(ranked, pool, rewritten, filters, reranker)
        return [to_hit(c.node, c.score, c.via) for c in ranked[:k]]

    def search_fused(self, queries: Sequence[str], k: int = 10, filters: SearchFilters | None = None) -> list[Hit]:
        """One ranking for several phrasings of one need (a follow-up's rewrite and its conversation),
        fused by reciprocal rank: an entry near the top of any list rises, so one bad phrasing cannot
        sink the answer. The first query's hit wins ties; ``via`` says which lists found each hit."""
        lists = [self.search(q, k=max(k, FUSE_DEPTH), filters=filters) for q in dict.fromkeys(q for q in queries if q.strip())]
        if len(lists) <= 1:
            return lists[0][:k] if lists else []
        fused: dict[str, float] = {}
        first: dict[str, Hit] = {}
        found_by: dict[str, list[str]] = {}
        for n, hits in enumerate(lists):
            for rank, hit in enumerate(hits):
                fused[hit.node_id] = fused.get(hit.node_id, 0.0) + 1.0 / (FUSE_RRF_K + rank)
                first.setdefault(hit.node_id, hit)
                found_by.setdefault(hit.node_id, []).append(str(n))
        order = sorted(fused, key=lambda nid: (-fused[nid], nid))[:k]
        return [first[nid].model_copy(update={"score": round(fused[nid], 6),
                                              "via": f"{first[nid].via}; fused from queries {','.join(found_by[nid])}"})
                for nid in order]

    # ----- steps ------------------------------------------------------------------------------------
    def _focus(self, text: str) -> str | None:
        """What a long question asks, for seed lists of its own (``search.focus_weight``): ``kg.query.condense``
        within ``focus_words`` words (its asking sentences, then the sentences before them, which say what "it"
        is), when that is shorter than the question; None for a question of at most ``hint_words`` words."""
        s = self.settings
        if s.focus_weight <= 0 or _hint_share(text, s.hint_words) >= 1.0:
            return None
        focus = condense(text, s.focus_words, _count_words)
        return focus if focus != text else None

    def _other_readings(self, text: str, chosen: list[Candidate], reranker: Reranker) -> None:
        """``search.rerank_readings``: in a question over ``rerank_words`` words (a forum post, which the first pass
        reads as its asking sentences, often about "it"), the cross-encoder also reads each sentence that does not
        ask and the whole post (as much of it as the window holds); a candidate keeps its best probability over
        the readings (max-passage over the post's sentences). The passages are the same (picked by the whole
        post's words)."""
        s = self.settings
        if s.rerank_words <= 0 or _count_words(text) <= s.rerank_words or not chosen:
            return
        sents = sentences(text)
        asks = set(asking(sents))
        readings = [x for i, x in enumerate(sents) if i not in asks]
        nodes = [c.node for c in chosen]
        best = [c.rerank or 0.0 for c in chosen]
        for reading, budget in [(x, s.rerank_query_tokens) for x in readings] + [(text, 0)]:
            logits = reranker.score_nodes(reading, nodes, budget, passage_query=text)
            best = [max(b, _sigmoid(x)) for b, x in zip(best, logits, strict=True)]
        for c, p in zip(chosen, best, strict=True):
            c.rerank = p

    def _seed(self, query: str, pool: dict[str, Candidate], filters: SearchFilters | None,
              focus_weight: float | None = None) -> np.ndarray | None:
        """BM25 and vector candidates fused by reciprocal rank; returns the query vector (or None).

        With ``focus_weight`` the query is a long question's focus (``_focus``): its dense and question-index
        lists (no BM25: the whole question's words are already read) add that share of their reciprocal rank to
        the fused score, and nothing to the plain query's own (``plain_rrf``, whose window is always reranked).

        A filter that drops most of the ``seed_k`` candidates of each list (a book, a type, the notes among
        the books) has them read ``SEED_WIDEN`` times deeper; one that drops few (the books' own origin in a
        store of books) leaves the lists as an unfiltered search reads them, so the answer's search ranks
        as the retrieval eval measures it."""
        kinds = tuple(filters.kinds) if filters and filters.kinds else ("entry",)
        qvec = None
        embedder = self.embedder
        if embedder is not None:
            qvec = embedder.encode_query(query)  # stock: graph expansion's similarities read it too
        stage = self.dense_stage if qvec is not None and kinds == ("entry",) else None
        # the fine-tuned model's query vector, when a dense-stage sidecar is there (kg/dense_stage.py)
        dvec = stage.embedder.encode_query(query) if stage is not None else None
        lexical = focus_weight is None
        if not lexical and qvec is None:
            return None  # a focus is read by the vectors only
        lists, nodes = self._seed_lists(query, qvec, kinds, filters, self.settings.seed_k, stage, dvec, lexical)
        if filters and _restrictive(filters):
            fetched = [nid for name, ranked in lists if name != "question" for nid in ranked]
            kept = sum(1 for nid in fetched if nid in nodes and passes(nodes[nid], filters))
            if kept < SEED_KEEP * len(fetched):
                lists, nodes = self._seed_lists(query, qvec, kinds, filters, self.settings.seed_k * SEED_WIDEN, stage,
                                                dvec, lexical)
        for name, ranked in lists:
            for rank, nid in enumerate(ranked):
                node = nodes.get(nid)
                if node is None or not passes(node, filters):
                    continue
                c = pool.get(nid) or pool.setdefault(nid, Candidate(node=node))
                weight = self.settings.question_weight if name == "question" else 1.0
                if focus_weight is not None:
                    c.rrf += focus_weight * weight / (RRF_K + rank + 1)
                    c.sources.append(f"focus {name}")
                    continue
                c.rrf += weight / (RRF_K + rank + 1)
                if name != "question":
                    c.plain_rrf += 1.0 / (RRF_K + rank + 1)
                setattr(c, f"{name}_rank", rank)
                c.sources.append(name)
        return qvec

    def _seed_lists(self, query: str, qvec: np.ndarray | None, kinds: tuple[str, ...], filters: SearchFilters | None,
                    k: int, stage: DenseStage | None = None, dvec: np.ndarray | None = None,
                    lexical: bool = True) -> tuple[list[tuple[str, list[str]]], dict[str, Node]]:
        """The ranked BM25 (unless not ``lexical``), dense and question-index lists (``k`` deep) and their nodes."""
        lists: list[tuple[str, list[str]]] = []
        if lexical:
            lists.append(("bm25", [nid for nid, _ in self.store.bm25(query, k, kinds=kinds)]))
        if qvec is not None:
            if stage is not None and dvec is not None:
                # the fine-tuned model's ranking of the corpus entries; the entries it does not hold
                # (notes) keep their stock rank, as one more list
                lists.append(("dense", [nid for nid, _ in stage.entries.search(dvec, k)]))
                if self._has_notes():
                    rest = [nid for nid, _ in self.store.vector_search(qvec, k, kinds=kinds) if nid not in stage.entry_ids]
                    lists.append(("dense", rest))
            else:
                lists.append(("dense", [nid for nid, _ in self.store.vector_search(qvec, k, kinds=kinds)]))
            if self.settings.question_index and "entry" in kinds:
                from gmprep.kg.question_index import question_index_for

                qindex, qv = question_index_for(self.store), qvec
                if stage is not None and dvec is not None and self.settings.dense_model_questions:
                    qindex, qv = stage.questions, dvec
                if qindex is not None:
                    # what the entry is asked about (or the situations that link to it), as one more
                    # ranked list: it adds candidates and fused score, the plain lists keep theirs
                    lists.append(("question", [nid for nid, _ in qindex.search(qv, self.settings.question_k)]))
        ids = list(dict.fromkeys(nid for _, ranked in lists for nid in ranked))
        return lists, self.store.get_many(ids)

    def _add_named(self, named: dict[str, str], pool: dict[str, Candidate], filters: SearchFilters | None) -> None:
        nodes = self.store.get_many(list(named))
        for nid, how in named.items():
            node = nodes.get(nid)
            if node is None or not passes(node, filters):
                continue
            c = pool.get(nid) or pool.setdefault(nid, Candidate(node=node))
            c.named = how
            c.via = "name"
            c.sources.append("name")

    @staticmethod
    def _demote_subnames(pool: dict[str, Candidate], qa: QueryAnalysis, penalty: float) -> None:
        """``search.subname_penalty``: a candidate the question names only inside a longer name it names (each place
        its name is said lies inside another named entry's longer span) loses ``penalty``."""
        spans = [(a, b) for nid, how in qa.named.items() if how in ("exact", "hint") for a, b in qa.spans.get(nid, ())]
        if not spans:
            return
        low = qa.text.lower()
        for c in pool.values():
            if c.named in ("exact", "hint"):
                continue
            name = c.node.name.lower()
            if not name or name not in low:
                continue  # most of the pool is never said: no pattern to compile (a long post's pool is hundreds)
            places = [m.span() for m in re.finditer(r"(?<!\w)" + re.escape(name) + r"(?!\w)", low)]
            if places and all(any(a <= x and y <= b and b - a > y - x for a, b in spans) for x, y in places):
                c.score -= penalty

    def _hint_shares(self, qa: QueryAnalysis) -> dict[str, float] | None:
        """Each hint's and verb's share of its bonus by the learned decision (``search.hint_model``, kg.hint_share)
        in a question over ``hint_words`` words, or None where the word count decides (``search.hint_words``)."""
        if not self.settings.hint_model:
            return None
        if _hint_share(qa.text, self.settings.hint_words) >= 1.0:
            return {}  # a short question's names are its topic: all keep the full bonus
        from gmprep.kg.hint_share import shipped

        hints = {nid: how for nid, how in qa.named.items() if how in HINTS}
        return shipped().shares(qa.text, qa.spans, hints, self.settings.hint_keep_at)

    def _base_score(self, c: Candidate, qa: QueryAnalysis, reranked: bool, hint_share: float = 1.0,
                    rerank_share: float = 1.0) -> float:
        """Reranker probability (when reranked; times ``rerank_share``) plus a share of the fused rank score, plus
        what the query says: a name (a hint's or verb's bonus times ``hint_share``), an action verb, the asked-for
        type and rank."""
        prior = c.prior
        if reranked and c.rerank is not None:
            score = rerank_share * c.rerank + self.settings.rerank_prior * prior
            if c.via == "seed":
                c.via = "rerank"
        elif reranked:
            score = self.settings.rerank_prior * prior  # below the reranked ones, in fused order
        else:
            score = prior
        score += NAME_BONUS.get(c.named or "", 0.0) * (hint_share if c.named in HINTS else 1.0)
        if c.named == "character":
            score *= CHARACTER_FACTOR
        if c.node.type in qa.types:
            score += INTENT_BONUS
            if qa.rank is not None and c.node.level == qa.rank:
                score += INTENT_BONUS
        return score

    def _leads(self, src: Candidate, qwords: set[str]) -> list[tuple[str, str, float]]:
        """``(node_id, how, focus)`` for what an entry points to: names in its text and its ``ref`` links
        ("link"), its traits, parent/child entries, siblings and other grades of the same item.

        ``focus`` (0..1) says how much the paragraph holding a link shares the query's words: asked
        "what does a *success* leave them with", the Success line of Trip is the one whose link
        (Prone) matters."""
        out: list[tuple[str, str, float]] = []
        own = src.node.node_id
        edges = self.store.neighbors(own, kinds=("ref", "trait", "parent", "child", "next", "prev"))
        trait_ids = {nid for nid, kind in edges if kind == "trait"}
        paragraphs = self._paragraph_links(own, src.node.text or "")
        overlaps = [len(qwords & words) for words, _ids in paragraphs]
        best = max(overlaps, default=0)
        focus: dict[str, float] = {}
        for (_words, mentioned), overlap in zip(paragraphs, overlaps, strict=True):
            for nid in mentioned:
                if nid == own or nid in trait_ids or self._types.get(nid) in INDEX_TYPES:
                    continue
                f = overlap / best if best else 0.0
                focus[nid] = max(focus.get(nid, 0.0), f)
        for nid, f in focus.items():
            out.append((nid, "link", f))
        for nid, kind in edges:
            if nid == own or nid in focus:
                continue
            if kind == "ref":
                out.append((nid, "trait" if nid in trait_ids else "link", 0.0))
            else:
                out.append((nid, kind, 0.0))
        out += [(nid, "grade", 0.0) for nid in self._families.get(own, []) if nid != own]
        return out

    def _focused_links(self, src: Candidate, qwords: set[str]) -> list[str]:
        """The entries named in the paragraph of ``src`` that shares the most of the query's words (Trip's
        Success line when the question asks what a success does); every named entry when the text is one
        paragraph. Traits, the entry itself and skill indexes are left out, as in ``_leads``."""
        own = src.node.node_id
        paragraphs = self._paragraph_links(own, src.node.text or "")
        overlaps = [len(qwords & words) for words, _ids in paragraphs]
        best = max(overlaps, default=0)
        if best == 0 and len(paragraphs) != 1:
            return []
        traits = {nid for nid, kind in self.store.neighbors(own, kinds=("trait",))}
        out: list[str] = []
        for (_words, mentioned), overlap in zip(paragraphs, overlaps, strict=True):
            if overlap < best:
                continue
            for nid in mentioned:
                if nid != own and nid not in traits and self._types.get(nid) not in INDEX_TYPES and nid not in out:
                    out.append(nid)
        return out

    def _link_slot(self, ranked: list[Candidate], pool: dict[str, Candidate], query: str,
                   filters: SearchFilters | None, reranker: Reranker) -> list[Candidate]:
        """``ranked`` with the best entry that one of its ``LINK_SLOT_FROM`` best hits links to from the
        paragraph matching the query moved into place ``LINK_SLOT_AT``, when it is not in the places before
        and the cross-encoder scores it at least ``link_slot_floor``.

        Graph expansion already lends such a link score, but a two-part question's second entry (Trip ->
        Prone, a hazard's save -> Drained) rarely shares the question's words, so it lands 6th or 7th
        behind entries that do; the slot gives it the last of the cited five only when the reranker, reading
        it against the question, agrees it bears on it."""
        if len(ranked) < LINK_SLOT_AT:
            return ranked
        head = {c.node.node_id for c in ranked[:LINK_SLOT_AT]}
        qwords = content_stems(query)
        leads: list[str] = []
        for src in ranked[:LINK_SLOT_FROM]:
            links = self._focused_links(src, qwords)
            if any(nid in head for nid in links):
                continue  # the five already hold what this hit's matching paragraph points to
            leads += [nid for nid in links if nid not in head and nid not in leads]
        if not leads:
            return ranked
        nodes = self.store.get_many(leads)
        leads = [nid for nid in leads if nid in nodes and passes(nodes[nid], filters)]
        # the links graph expansion already rates highest are scored first
        leads.sort(key=lambda nid: -(pool[nid].score if nid in pool else 0.0))
        leads = leads[:LINK_SLOT_PAIRS]
        todo = [nid for nid in leads if nid not in pool or pool[nid].rerank is None]
        if todo:
            logits = reranker.score_nodes(query, [nodes[nid] for nid in todo], self.settings.rerank_query_tokens)
            for nid, logit in zip(todo, logits, strict=True):
                c = pool.get(nid) or pool.setdefault(nid, Candidate(node=nodes[nid], via="link slot"))
                c.rerank = _sigmoid(logit)
        best = max(leads, key=lambda nid: (pool[nid].rerank or 0.0, nid), default=None)
        if best is None or (pool[best].rerank or 0.0) < self.settings.link_slot_floor:
            return ranked
        chosen = pool[best]
        rest = [c for c in ranked if c is not chosen]
        at = LINK_SLOT_AT - 1
        displaced = rest[at].rerank
        if displaced is not None and displaced >= (chosen.rerank or 0.0):
            return ranked  # the entry in that place reads as closer to the question
        chosen.score = max(chosen.score, rest[at].score)
        chosen.via = f"link slot ({chosen.via})"
        return rest[:at] + [chosen] + rest[at:]

    def _scan_paragraphs(self, node_id: str, text: str) -> tuple[tuple[frozenset[str], tuple[str, ...]], ...]:
        """``(content words, mentioned entry ids)`` for each paragraph of an entry's text."""
        return tuple(
            (frozenset(content_stems(p)), tuple(dict.fromkeys(m.node_id for m in self.names.find_mentions(p))))
            for p in text.split("\n") if p.strip()
        )

    def _expand(self, pool: dict[str, Candidate], query: str, qvec: np.ndarray | None,
                filters: SearchFilters | None, k: int, lend: float = 1.0) -> None:
        """Spread score from the best results to the entries they point to, hop by hop; ``lend`` (0..1) scales
        what every lead inherits (``search.expand_share``: a long post's reranker share)."""
        if lend <= 0.0:
            return
        s = self.settings
        qwords = content_stems(query)
        frontier = sorted(pool.values(), key=lambda c: -c.score)[: min(k, EXPAND_FROM)]
        seen_src: set[str] = set()
        for _round in range(s.expand_rounds):
            threshold = self._kth_score(pool, k)
            leads: dict[str, tuple[float, str, str, float]] = {}
            for src in frontier:
                if src.node.node_id in seen_src:
                    continue
                seen_src.add(src.node.node_id)
                for nid, how, focus in self._leads(src, qwords):
                    inherited = src.score * s.expand_decay * LEAD_WEIGHTS[how][0] * lend
                    if inherited > leads.get(nid, (0.0,))[0]:
                        leads[nid] = (inherited, how, src.node.node_id, focus)
            if not leads:
                break
            nodes = self.store.get_many(list(leads))
            ids = [i for i in leads if i in nodes and passes(nodes[i], filters)]
            if not ids:
                break
            sims = self._similarities(qvec, ids)
            gains = {}
            for nid, sim in zip(ids, sims, strict=True):
                inherited, how, _src, focus = leads[nid]
                floor = LEAD_WEIGHTS[how][1]
                gains[nid] = inherited * (floor + (1.0 - floor) * max(_relevance(sim), focus))
                if how == "link" and nodes[nid].type not in EFFECT_TYPES:
                    gains[nid] *= OTHER_LINK_FACTOR
            new_frontier = []
            for nid in ids:
                inherited, how, src_id, focus = leads[nid]
                gain = gains[nid]
                c = pool.get(nid)
                if c is None:
                    c = pool[nid] = Candidate(node=nodes[nid], via=f"expand:{how} from {src_id}")
                if gain <= c.graph:
                    continue
                c.graph = gain
                before = c.score
                # independent evidence: noisy-or of the entry's own score and what it inherits
                c.score = before + gain * (1.0 - min(before, 1.0))
                if gain > before and c.via in ("seed", "rerank"):
                    c.via = f"expand:{how} from {src_id}"
                if c.score > threshold >= before:
                    new_frontier.append(c)
            if not new_frontier:
                break  # the leads died out: nothing new reached the result list
            frontier = new_frontier

    @staticmethod
    def _kth_score(pool: dict[str, Candidate], k: int) -> float:
        scores = sorted((c.score for c in pool.values()), reverse=True)
        return scores[k - 1] if len(scores) >= k else 0.0

    def _similarities(self, qvec: np.ndarray | None, ids: list[str]) -> list[float]:
        if qvec is None:
            return [0.5] * len(ids)  # no vectors: every neighbour counts as moderately related
        vecs = self.store.vectors_for(ids)
        return [float(x) for x in vecs @ qvec]


def family(node: Node) -> str:
    """The item family of an entry: its name without the grade ("Glue Bomb (Lesser)" -> "glue bomb")."""
    return f"{node.type}:{node.name.split(' (')[0].strip().lower()}"


def _window(ranked: list[Candidate], top: int, prose_top: int) -> list[Candidate]:
    """The candidates the cross-encoder scores: the ``top`` best entries and, beside them, the
    ``prose_top`` best sections of the books' rules prose. Prose sections are long and share words
    with most questions, so in one window they would take the places of the entries the question names."""
    entries = [c for c in ranked if not c.node.is_prose][:top]
    prose = [c for c in ranked if c.node.is_prose][:prose_top]
    return entries + prose


def _diversify(ranked: list[Candidate]) -> list[Candidate]:
    """Demote the 2nd, 3rd ... grade of one item family (each to FAMILY_DECAY of the score before it)
    so that four grades of one bomb do not fill the top five."""
    seen: dict[str, int] = {}
    for c in ranked:
        fam = family(c.node)
        n = seen.get(fam, 0)
        if n:
            c.score *= FAMILY_DECAY**n
        seen[fam] = n + 1
    return sorted(ranked, key=lambda c: (-c.score, c.node.node_id))


def _hint_share(text: str, hint_words: int) -> float:
    """The share of a name hint's bonus a question of ``text`` keeps: all of it up to ``hint_words`` words,
    then ``hint_words`` / its words. In a short question a name is the topic ("Does Trip work on a flying
    creature?"); a long one names the spells, feats and actions of the story around what it asks (a
    forum post's Reactive Strike and Spellstrike, when it asks what disrupts an action)."""
    if hint_words <= 0:
        return 1.0
    return min(1.0, hint_words / max(1, len(text.split())))


def _rerank_share(text: str, rerank_words: int) -> float:
    """The share of its probability the cross-encoder's score keeps in a question of ``text``: all of it up to
    ``rerank_words`` words, then (rerank_words / words)^2. A long post is read by the cross-encoder as its asking
    sentences only ("Is that right RAW?"; ``rerank_query_tokens``), often about "it" or "that", while BM25 and the
    vectors read the whole post; its probabilities are then low and close together, so the first-stage order
    decides more (docs/retrieval.md, "The reranker's say in a long post")."""
    if rerank_words <= 0:
        return 1.0
    return min(1.0, rerank_words / max(1, _count_words(text))) ** RERANK_SHARE_POWER


def _count_words(text: str) -> int:
    return len(text.split())


def _relevance(sim: float) -> float:
    """Map a query-neighbour cosine to [0, 1]: unrelated (< 0.1) gives nothing, 0.5 and above full."""
    return min(1.0, max(0.0, (sim - 0.1) / 0.4))


def _restrictive(filters: SearchFilters) -> bool:
    return bool(
        filters.books or filters.types or filters.traits or filters.rarities
        or filters.level_min is not None or filters.level_max is not None or filters.origins
    )


def build_filters(books: Iterable[str] = (), types: Iterable[str] = (), **extra) -> SearchFilters:
    """Filters from simple lists (CLI and LSP parameters)."""
    return SearchFilters(books=list(books), types=list(types), **extra)
