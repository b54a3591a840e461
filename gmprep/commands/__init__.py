"""Subcommands of the ``gmprep`` CLI, one module per area (see ``gmprep.cli.COMMAND_MODULES``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from gmprep.common.errors import GmprepError
from gmprep.common.settings import Settings, resolve_settings, settings_error

if TYPE_CHECKING:
    from gmprep.kg.search import Searcher
    from gmprep.kg.store import Store


def print_report(report, *, as_json: bool) -> bool:
    """A build report: the whole JSON (True: nothing more to print) or its notes, one line each."""
    if as_json:
        print(report.model_dump_json(indent=2))
        return True
    for msg in report.messages:
        print(f"note: {msg}")
    return False


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings for a CLI run, through the server's ``resolve_settings``: the user config file, the
    current folder's TOML (``gmprep.toml``, ``[tool.gmprep]`` in ``pyproject.toml``, under the same
    workspace-trust policy as the server's; what it ignored is said on stderr), the environment, then
    ``--store``. The store stays ``~/.cache/gmprep/store`` unless one of those names another."""
    overrides = {"store_dir": args.store} if getattr(args, "store", None) else None
    try:
        loaded = resolve_settings(Path.cwd(), overrides, workspace_store=False)
    except (ValidationError, ValueError) as exc:  # an invalid flag or environment value
        raise GmprepError(settings_error(exc)) from None
    if loaded.problems:  # a command line run stops on a settings file it could not use
        raise GmprepError(loaded.problems[0])
    message = loaded.ignored_message()
    if message:
        print(f"gmprep: {message}", file=sys.stderr)
    return loaded.settings



def open_searcher(settings: Settings) -> tuple[Store, Searcher]:
    """The store and searcher for ``settings``; a missing index or lost vectors is a clear error
    before any model loads. Close the store (``with store:``) when done."""
    from gmprep.kg.search import Searcher
    from gmprep.kg.store import Store

    store = Store.open(settings.store_dir, create=False)
    searcher = Searcher.from_settings(store, settings)
    try:
        searcher.check_vectors()
    except Exception:
        store.close()
        raise
    return store, searcher
