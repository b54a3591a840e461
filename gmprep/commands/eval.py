"""``gmprep eval retrieval|hover|answers``: each evaluation lives in ``gmprep.evals.<name>``."""

from __future__ import annotations

import argparse
import importlib

EVALS = {
    "retrieval": "retrieval over labelled questions: recall@k, MRR, baselines",
    "hover": "hover accuracy on labelled prep notes, through the language server",
    "answers": "answer pipeline: outcomes, citation recall, declines, latency",
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``eval`` and one sub-subcommand per evaluation module that exists."""
    p = sub.add_parser("eval", help="measure retrieval, hover or answers on labelled data")
    evsub = p.add_subparsers(dest="eval_name", metavar="EVAL")
    for name, help_text in EVALS.items():
        try:
            module = importlib.import_module(f"gmprep.evals.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"gmprep.evals.{name}":
                continue
            raise
        ep = evsub.add_parser(name, help=help_text)
        module.add_arguments(ep)
        ep.set_defaults(func=module.run)
