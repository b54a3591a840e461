"""``gmprep books add|list|show|remove``: the GM's own books (PDF, markdown or HTML), kept in their store.

Nothing leaves the machine: the file is read where it lies and its text goes into the local store only.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gmprep.commands import print_report, settings_from_args


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``books`` command group."""
    p = sub.add_parser("books", help="add your own books (PDF, markdown, HTML) with their pages")
    bsub = p.add_subparsers(dest="books_cmd", metavar="ACTION")
    a = bsub.add_parser("add", help="read a book you own into the store (matches its sections to the rules)")
    a.add_argument("path", type=Path, help="the book: .pdf, .md or .html")
    a.add_argument("--title", help="the book's title (default: the PDF's metadata or its title page)")
    a.add_argument("--name", help="short name for `books remove` (default: from the title)")
    a.add_argument("--no-embed", action="store_true", help="graph and BM25 only, no vectors")
    a.add_argument("--json", action="store_true", help="print the report as JSON")
    a.set_defaults(func=run_add)
    ls = bsub.add_parser("list", help="the books added to the store")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=run_list)
    sh = bsub.add_parser("show", help="a book's inferred outline with pages")
    sh.add_argument("name")
    sh.add_argument("--json", action="store_true", help="the whole parsed tree as JSON")
    sh.set_defaults(func=run_show)
    rm = bsub.add_parser("remove", help="remove a book (its sections, vectors and the pages it gave entries)")
    rm.add_argument("name")
    rm.set_defaults(func=run_remove)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_add(args: argparse.Namespace) -> int:
    """Parse, ingest and match one book; print what happened."""
    from gmprep.ingest.books.store import add_book

    report = add_book(settings_from_args(args), args.path, title=args.title, name=args.name,
                      progress=not args.json, embed=not args.no_embed)
    if print_report(report, as_json=args.json):
        return 0
    print(
        f"added {report.title!r} as {report.name}: {report.pages} pages, {report.nodes - 1} sections, "
        f"{report.matched} matched to bundled entries ({report.paged} took their page), "
        f"{report.nodes_embedded} embedded ({report.seconds}s)"
    )
    return 0


def run_list(args: argparse.Namespace) -> int:
    """One line per added book."""
    from gmprep.ingest.books.store import list_books

    books = list_books(settings_from_args(args))
    if args.json:
        print(json.dumps([b.model_dump() for b in books], indent=2))
        return 0
    if not books:
        print("no books added yet: gmprep books add PATH.pdf")
    for b in books:
        print(f"{b.name}\t{b.title}\t{b.format}, {b.pages} pages, {b.sections} sections, "
              f"{b.matched} matched entries\t({b.source}, added {b.added_at})")
    return 0


def run_show(args: argparse.Namespace) -> int:
    """The outline: one indented line per heading/sidebar with its page."""
    from gmprep.ingest.books.store import book_tree

    tree = book_tree(settings_from_args(args), args.name)
    if args.json:
        print(tree.model_dump_json(indent=2))
        return 0
    print(tree.title)

    def show(secs, depth: int) -> None:
        for s in secs:
            mark = "[sidebar] " if s.kind == "sidebar" else ""
            page = f"  p. {s.page}" if s.page else ""
            print(f"{'  ' * depth}{mark}{s.title}{page}")
            show(s.children, depth + 1)

    show(tree.sections, 1)
    return 0


def run_remove(args: argparse.Namespace) -> int:
    """Remove one book."""
    from gmprep.ingest.books.store import remove_book

    n = remove_book(settings_from_args(args), args.name)
    print(f"removed {args.name}: {n} nodes")
    return 0
