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
