"""Build a creature or NPC from GM Core's Building Creatures tables, by level and role."""

from __future__ import annotations

from gmprep.core.creators.models import CreatureRequest, Statblock


def build_creature(req: CreatureRequest, resolver=None) -> Statblock:
    """A statblock whose every number is a table value for ``req.level``, columns chosen by role."""
    raise NotImplementedError


def render_statblock_markdown(sb: Statblock) -> str:
    """The statblock in the corpus's markdown form, with the column of each number and citations."""
    raise NotImplementedError
