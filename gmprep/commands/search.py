"""``gmprep search`` (cited hits) and ``gmprep show`` (a complete entry with its ancestors)."""

from __future__ import annotations

import argparse
import json

from gmprep.commands import open_searcher, settings_from_args


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``search`` and ``show`` commands."""
    p = sub.add_parser("search", help="hybrid search over the rules; prints cited hits")
    p.add_argument("query")
    p.add_argument("--k", type=int, default=10, help="how many hits (default 10)")
    p.add_argument("--book", action="append", default=[], help="only this book (repeatable)")
    p.add_argument("--type", action="append", default=[], dest="types", help="only this entry type (repeatable)")
    p.add_argument("--trait", action="append", default=[], help="only entries with this trait (repeatable)")
    p.add_argument("--level-min", type=int, default=None)
    p.add_argument("--level-max", type=int, default=None)
    p.add_argument("--no-rerank", action="store_true", help="skip the cross-encoder")
    p.add_argument("--json", action="store_true", help="print the hits as JSON")
    p.set_defaults(func=run_search)
    s = sub.add_parser("show", help="print one entry in full, with its ancestors")
    s.add_argument("id", help="entry id, e.g. pf2e:condition:frightened (or an entry name)")
    s.set_defaults(func=run_show)


def _open_searcher(args: argparse.Namespace):
    return open_searcher(settings_from_args(args))


def run_search(args: argparse.Namespace) -> int:
    """Print the hits: name, type, book, page, id and an excerpt (or JSON)."""
    from gmprep.common.text import excerpt
    from gmprep.kg.models import SearchFilters

    store, searcher = _open_searcher(args)
    with store:
        filters = SearchFilters(
            books=args.book, types=args.types, traits=args.trait, level_min=args.level_min, level_max=args.level_max
        )
        hits = searcher.search(args.query, k=args.k, filters=filters, rerank=False if args.no_rerank else None)
    if args.json:
        print(json.dumps([h.model_dump() for h in hits], indent=2))
        return 0
    for msg in searcher.warnings:
        print(f"note: {msg}")
    if not hits:
        print("no matching entries")
        return 0
    for i, h in enumerate(hits, 1):
        print(f"{i:2d}. {h.citation()}  ({h.type}, score {h.score:.3f}, {h.via})")
        print(f"    {excerpt(h.text, 200)}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print the entry as Markdown; a name instead of an id is resolved like a hover would."""
    from gmprep.common.errors import GmprepError
    from gmprep.kg.render import render_entry

    store, searcher = _open_searcher(args)
    with store:
        node_id = args.id
        if store.get(node_id) is None:
            hit = searcher.lookup(node_id)
            if hit is None:
                raise GmprepError(f"no entry {args.id!r} in the index")
            node_id = hit.node_id
        print(render_entry(store, node_id), end="")
    return 0
