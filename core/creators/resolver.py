"""Creature names as GMs write them ("goblin warriors", "Goblin War Chanter") -> Monster Core entries."""

from __future__ import annotations

from gmprep.kg.models import Node


class CreatureResolver:
    """Resolves creature names against the store's creature entries, with "did you mean" suggestions."""

    def __init__(self, creatures: list[Node]):
        raise NotImplementedError

    @classmethod
    def from_store(cls, store) -> CreatureResolver:
        """Every creature entry of ``store`` (a ``gmprep.kg.store.Store``)."""
        raise NotImplementedError

    def resolve(self, name: str) -> Node | None:
        """The creature entry ``name`` means (exact name, plural, any case), or None."""
        raise NotImplementedError

    def suggest(self, name: str, k: int = 3) -> list[str]:
        """The closest creature names to an unknown ``name``, best first."""
        raise NotImplementedError

    def creatures(self) -> list[Node]:
        """All creature entries, in a stable order."""
        raise NotImplementedError
