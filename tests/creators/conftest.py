"""Fixtures of the GM creators tests: the creature resolver over the cached real store."""

from __future__ import annotations

import pytest

from gmprep.core.creators.resolver import CreatureResolver
from gmprep.kg.store import Store


@pytest.fixture(scope="session")
def resolver(store_dir) -> CreatureResolver:
    store = Store.open(store_dir, create=False)
    try:
        return CreatureResolver.from_store(store)
    finally:
        store.close()
