"""Fixtures the kg tests share: the real session store, opened read-only once per module, and a searcher
over it with the default search settings."""

from __future__ import annotations

import pytest

from gmprep.common.settings import SearchSettings
from gmprep.kg.search import Searcher
from gmprep.kg.store import Store


@pytest.fixture(scope="module")
def store(store_dir):
    st = Store.open(store_dir, create=False)
    yield st
    st.close()


@pytest.fixture(scope="module")
def searcher(store):
    return Searcher(store, settings=SearchSettings())


@pytest.fixture
def scorer_copy(tmp_path):
    """A writable copy of the shipped mention-scorer model (model + manifest), for commands that refit it."""
    from gmprep.kg.mention_scorer import MODEL_DIR

    model = tmp_path / "model"
    model.mkdir()
    for name in ("mention_scorer.json", "manifest.json"):
        (model / name).write_bytes((MODEL_DIR / name).read_bytes())
    return model
