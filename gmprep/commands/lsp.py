"""``gmprep lsp [--stdio]``: run the language server on stdin/stdout."""

from __future__ import annotations

import argparse
import logging
import sys


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``lsp`` command."""
    p = sub.add_parser("lsp", help="run the language server (LSP over stdio) for markdown prep notes")
    p.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default and only transport)")
    p.add_argument("--log-file", help="write the server log to this file (stderr otherwise)")
    p.add_argument("--no-build", action="store_true", help="do not build a missing index in the background")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until the client sends exit."""
    from gmprep.common.settings import Settings
    from gmprep.server.app import create_server

    if args.log_file:
        handler = logging.FileHandler(args.log_file, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logging.getLogger().addHandler(handler)
        logging.getLogger().setLevel(logging.DEBUG if args.verbose else logging.INFO)
    # --store on the command line is a default the client's initializationOptions can override
    settings = Settings(store_dir=args.store) if getattr(args, "store", None) else None
    server = create_server(settings, build_index=not args.no_build)
    # stdout carries the protocol: nothing else may print there
    sys.stdout.flush()
    server.start_io()
    return 0
