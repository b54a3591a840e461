"""Check a statblock's numbers against GM Core's Building Creatures tables for its stated level."""

from __future__ import annotations

from gmprep.core.creators.models import StatIssue


def check_statblock(markdown_text: str, level: int | None = None) -> list[StatIssue]:
    """Every number off its table for the statblock's level (from ``**Creature N**`` or ``level``)."""
    raise NotImplementedError
