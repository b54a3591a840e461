"""The ``gmprep`` command line. Each area registers its own subcommands from ``gmprep.commands``."""

from __future__ import annotations

import argparse
import logging
import sys

from gmprep.commands import (
    ask,
    books,
    corpus,
    creators,
    doctor,
    embedder,
    hover,
    index,
    lsp,
    mentions,
    questions,
    reranker,
    search,
)
from gmprep.commands import eval as eval_cmd
from gmprep.common.errors import GmprepError

# Each module defines ``register(subparsers)`` and sets ``func`` on its parsers. Imported plainly: a
# module that fails to import is a packaging error and must fail loudly, not drop its command.
COMMAND_MODULES = [index, search, reranker, embedder, eval_cmd, lsp, ask, doctor, books, creators, mentions, hover, corpus,
                   questions]


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every registered subcommand."""
    parser = argparse.ArgumentParser(prog="gmprep", description="Offline Pathfinder 2e rules assistant")
    parser.add_argument("--store", help="store folder (default: ~/.cache/gmprep/store, or $GMPREP_STORE)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    _accept_store_anywhere(sub)
    return parser


def _accept_store_anywhere(sub: argparse._SubParsersAction) -> None:
    """``gmprep index build --store DIR`` works as well as ``gmprep --store DIR index build``."""
    for p in set(sub.choices.values()):
        if "--store" not in p._option_string_actions:
            p.add_argument("--store", default=argparse.SUPPRESS, help="store folder (as the global --store)")
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                _accept_store_anywhere(action)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        sys.stderr.close()
        return 0
    except GmprepError as exc:
        print(f"gmprep: error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a defect of ours: one line for the user, the traceback with -v
        if args.verbose:
            raise
        print(f"gmprep: internal error: {type(exc).__name__}: {exc} (run with -v for the traceback, and please "
              f"report it)", file=sys.stderr)
        return 1
