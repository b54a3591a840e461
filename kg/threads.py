"""How many CPU threads torch uses for one model call: few for one query, every core for bulk encoding.

A query's model work is small (one ~20-token question through the embedder, ~13 question/passage pairs of 80
tokens through the reranker), and on the 2-core development machine it runs faster on one intra-op thread
than on two: search with rerank p50 ~110 ms against ~135 ms (docs/retrieval.md, "Threads"), the threads'
hand-offs costing more than they save. Bulk encoding (the index build's batches of long texts) is
compute-bound and uses every core. Torch's thread count is process-wide, so each model call sets the count
it wants for its own duration (``torch_threads``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_query_threads: int | None = None  # settings.query_threads; None: half the cores, 1 to 4


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
    """Threads for one query's model calls: the setting, else half the cores (at least 1, at most 4)."""
    if _query_threads:
        return max(1, _query_threads)
    return max(1, min(4, cores() // 2))


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
