"""Subcommands of the ``gmprep`` CLI, one module per area (listed in ``gmprep.cli.COMMAND_MODULES``)."""

from __future__ import annotations

import argparse

from gmprep.common.settings import Settings, load_settings


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings for a CLI run: the current folder's TOML, the environment, then ``--store``."""
    overrides = {"store_dir": args.store} if getattr(args, "store", None) else None
    return load_settings(None, overrides)

