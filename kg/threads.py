"""How many CPU threads torch uses for one model call: one query's work split into single-threaded shards,
every core for bulk encoding.

A query's model work is small (one ~20-token question through the embedder, ~13 question/passage pairs of 80
tokens through the reranker). A call made alone on the calling thread (the question's embedding, a lone shard)
runs on the query threads (``lone_threads``): re-measured in stop 49, a forum post's ~176 tokens took 62 ms on one
thread of the 2 cores and 38 ms on two, a ~26-token question 20 and 16 ms, three pairs 25 and 13 ms. Splitting the reranker's pairs into one shard per core,
each shard a whole model call on its own single-threaded worker, is faster still: 13 pairs in ~60 ms against
~110 ms on one thread and ~82 ms on two intra-op threads (docs/retrieval.md, "One shard per core"). Bulk encoding (the
index build's batches of long texts) is compute-bound and uses every core. Torch keeps the intra-op count per
calling thread (OpenMP), so each model call sets the count it wants for its own duration (``torch_threads``) and
the query workers are set to one thread when they start.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

_lock = threading.Lock()
_query_threads: int | None = None  # settings.query_threads; None: the cores, 1 to 4
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def cores() -> int:
    """CPU cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def configure(query_threads: int | None) -> int | None:
    """Set the threads of one query's model calls (``None``: the default rule); returns the previous setting."""
    global _query_threads
    before, _query_threads = _query_threads, query_threads
    return before


def query_threads() -> int:
    """Workers for one query's model calls: the setting, else the cores (at least 1, at most 4)."""
    if _query_threads:
        return max(1, _query_threads)
    return max(1, min(4, cores()))


def lone_threads() -> int:
    """Intra-op threads for one query's model call made alone on the calling thread (the question's embedding, a
    lone shard of pairs): the query workers, no more than the cores."""
    return max(1, min(query_threads(), cores()))


def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)


def _quiet_blas() -> None:
    """numpy's BLAS on one thread from now on. A query's numpy work is small (a few thousand vectors against
    one), and OpenBLAS's own threads keep spinning on the cores for a while after each call, which is where
    the query workers' shards must run: without this the shards gained nothing in real searches (docs/retrieval.md)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")


def shards(items: Sequence[T], min_shard: int = 3) -> list[Sequence[T]]:
    """``items`` cut into up to ``query_threads()`` contiguous shards of at least ``min_shard`` items."""
    count = max(1, min(query_threads(), len(items) // max(1, min_shard)))
    size, extra = divmod(len(items), count)
    out, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        out.append(items[start:end])
        start = end
    return out


def on_workers(fn: Callable[[T], R], args: Sequence[T]) -> list[R]:
    """``fn(arg)`` for each of ``args`` at once, each on a single-threaded query worker; results in input order.
    One argument runs here, on the query threads: a lone shard of three question/passage pairs took 25 ms on one of
    the 2 cores and 13 ms on both (stop 49, docs/retrieval.md)."""
    global _pool, _pool_size
    if len(args) <= 1:
        with torch_threads(lone_threads()):
            return [fn(a) for a in args]
    with _lock:
        if _pool is None or _pool_size < len(args):
            if _pool is None:
                _quiet_blas()
            # a bigger setting replaces the pool; the old one's idle workers exit once it is dropped
            _pool, _pool_size = ThreadPoolExecutor(len(args), "gmprep-query", initializer=_one_thread), len(args)
        pool = _pool
    return [f.result() for f in [pool.submit(fn, a) for a in args]]


def bulk_threads() -> int:
    """Threads for bulk encoding: every core."""
    return cores()


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the body with torch's intra-op threads at ``n``, then put the previous count back."""
    import torch

    with _lock:
        before = torch.get_num_threads()
        if before != n:
            torch.set_num_threads(n)
    try:
        yield
    finally:
        with _lock:
            if torch.get_num_threads() != before:
                torch.set_num_threads(before)
