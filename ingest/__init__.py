"""Loaders that turn sources (the bundled PF2e corpus, markdown notes) into graph nodes and edges."""
