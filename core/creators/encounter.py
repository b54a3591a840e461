"""Encounters: parse what a GM writes, resolve creatures, XP and threat (GM Core p. 75), build options."""

from __future__ import annotations

from gmprep.core.creators.models import EncounterReport, EncounterSpec, Threat


def parse_encounter(text: str) -> EncounterSpec:
    """Parse ``Encounter (4 PCs, level 3): 2 goblin warriors, elite wolf`` or list lines (``- 2 goblin warriors``)."""
    raise NotImplementedError


def evaluate_encounter(spec: EncounterSpec, resolver, party_size: int | None = None,
                       party_level: int | None = None) -> EncounterReport:
    """XP per creature, total, threat, budgets and warnings for the party (given here or in ``spec``)."""
    raise NotImplementedError


def build_encounters(party_size: int, party_level: int, threat: Threat, words: list[str], resolver,
                     n: int = 3) -> list[EncounterReport]:
    """Up to ``n`` deterministic Monster Core encounters for the threat's budget, matching traits/terrain words."""
    raise NotImplementedError
