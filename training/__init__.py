"""Reranker training (``gmprep reranker train``), kept out of the runtime packages: nothing in kg/,
core/ or server/ imports it, and its extra dependencies (``datasets``, ``accelerate``: the ``train``
extra) are needed only here.

- ``queries``: training queries generated from corpus entries (never from evaluation questions);
- ``long_questions``: written questions told long, the way forum askers write (context, aside, follow-up);
- ``negatives``: hard negatives mined from the store's BM25 and vectors, minus false negatives;
- ``trainer``: sentence-transformers' ``CrossEncoderTrainer`` with our group loss, saving fp16 weights.
"""
