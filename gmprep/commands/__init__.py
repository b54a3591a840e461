"""Subcommands of the ``gmprep`` CLI, one module per area (see ``gmprep.cli.COMMAND_MODULES``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from gmprep.common.settings import Settings, load_settings

if TYPE_CHECKING:
    from gmprep.kg.search import Searcher
    from gmprep.kg.store import Store


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings for a CLI run: the current folder's TOML, the environment, then ``--store``."""
    overrides = {"store_dir": args.store} if getattr(args, "store", None) else None
    return load_settings(None, overrides)



def open_searcher(settings: Settings) -> tuple[Store, Searcher]:
    """The store and searcher for ``settings``; a missing index or lost vectors is a clear error
    before any model loads. Close the store (``with store:``) when done."""
    from gmprep.kg.search import Searcher
    from gmprep.kg.store import Store

    store = Store.open(settings.store_dir, create=False)
    searcher = Searcher(store, settings=settings.search)
    try:
        searcher.check_vectors()
    except Exception:
        store.close()
        raise
    return store, searcher
