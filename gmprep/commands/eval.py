"""``gmprep eval retrieval|hover|answers``: each evaluation lives in ``gmprep.evals.<name>``."""

from __future__ import annotations

import argparse

from gmprep.evals import answers, hover, retrieval

EVALS = {
    "retrieval": (retrieval, "retrieval over labelled questions: recall@k, MRR, baselines"),
    "hover": (hover, "hover accuracy on labelled prep notes, through the language server"),
    "answers": (answers, "answer pipeline: outcomes, citation recall, declines, latency"),
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``eval`` and one sub-subcommand per evaluation module."""
    p = sub.add_parser("eval", help="measure retrieval, hover or answers on labelled data")
    evsub = p.add_subparsers(dest="eval_name", metavar="EVAL")
    for name, (module, help_text) in EVALS.items():
        ep = evsub.add_parser(name, help=help_text)
        module.add_arguments(ep)
        ep.set_defaults(func=module.run)
