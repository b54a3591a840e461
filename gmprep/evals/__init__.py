"""Evaluations: retrieval (kg), hover (server), answers (core agents). Each module exposes
``add_arguments(parser)`` and ``run(args) -> int`` for ``gmprep eval <name>``."""
