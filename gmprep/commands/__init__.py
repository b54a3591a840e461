"""Subcommands of the ``gmprep`` CLI, one module per area (listed in ``gmprep.cli.COMMAND_MODULES``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import ValidationError

from gmprep.common.errors import GmprepError
from gmprep.common.settings import Settings, load_settings


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings for a CLI run, through the server's ``load_settings``: the current folder's TOML
    (``gmprep.toml``, ``[tool.gmprep]`` in ``pyproject.toml``), the environment, then ``--store``.
    The store stays ``~/.cache/gmprep/store`` unless one of those names another."""
    overrides = {"store_dir": args.store} if getattr(args, "store", None) else None
    try:
        return load_settings(Path.cwd(), overrides, workspace_store=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "settings"
        raise GmprepError(f"invalid setting {where}: {first.get('msg')}") from None
    except ValueError as exc:  # an unreadable TOML file
        raise GmprepError(str(exc)) from None

