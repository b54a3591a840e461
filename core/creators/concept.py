"""How close a creature is to what the GM asked for, in meaning: the one owner for the creature builder's suggested
abilities and the encounter builder's creatures.

The bundled MiniLM embeds each creature as "name (traits)" and the request's words as a query; the cosine is the
closeness. A "guard captain" is closer to a Kholo Sergeant than to a Bogwid, a "haunted crypt" to a ghost than to a
serpentfolk, though they share no word. The whole stat block was measured first and does not separate them (it is
mostly numbers). Without the model (not installed, failed to load) every closeness is 0 and the shared words rank.
"""

from __future__ import annotations

import logging
import re
import threading

import numpy as np

log = logging.getLogger(__name__)

# What the closeness counts for beside the builders' word scores (3 per shared word in the creature builder, 2 per
# trait or name word in the encounter builder): on the profiles the closest creatures lie 0.1-0.3 above the rest
# ("guard captain": Kholo Sergeant 0.43, then Duskwalker Ghost Hunter 0.30; "ogre bouncer": Ogre Warrior 0.58)
CONCEPT_WEIGHT = 10.0

_lock = threading.Lock()
_profiles: dict[str, np.ndarray] = {}  # node id -> its profile's vector (a few hundred creatures: kept)


def profile(node) -> str:
    return f"{node.name} ({', '.join(node.traits)})"


def _cosines(concept: str, nodes: list, cache: dict[str, np.ndarray], text) -> np.ndarray:
    """Cosine of ``concept`` (as a query) to each node's ``text(node)``, whose vectors ``cache`` keeps by node id.
    Raises when the embedder cannot be loaded (the callers fall back)."""
    from gmprep.kg.embedder import shared_embedder

    embedder = shared_embedder()
    with _lock:
        missing = [n for n in nodes if n.node_id not in cache]
        if missing:
            for n, v in zip(missing, embedder.encode([text(n) for n in missing]), strict=True):
                cache[n.node_id] = np.asarray(v, dtype=np.float32)
        vectors = np.stack([cache[n.node_id] for n in nodes])
    return vectors @ np.asarray(embedder.encode_query(concept), dtype=np.float32)


def closeness(concept: str, nodes: list) -> list[float]:
    """Cosine of ``concept`` to each creature's profile, or zeros when there is no concept or no model."""
    if not concept.strip() or not nodes:
        return [0.0] * len(nodes)
    try:
        return [float(x) for x in _cosines(concept, nodes, _profiles, profile)]
    except Exception:  # no model: the shared words still rank
        log.warning("creature closeness without the embedder", exc_info=True)
        return [0.0] * len(nodes)


# Whether a theme Monster Core has no creature for is people to build (bandits, smugglers, a militia) or a place
# (a desert, a canyon): its closeness to a description of each, written once (not a list of either). On 60 themes
# written for this the people scored 0.00-0.46 above the place description and the places -0.34-0.13; 20 others
# written before the margin was chosen (10 each: hired killers, zealots, militia ...; glacier, prison, catacombs ...)
# fall on the right side of 0.13 all (people 0.17-0.35, places -0.33-0.03); docs/creators.md.
PEOPLE_MARGIN = 0.13
_PEOPLE = "a group of people: humanoid foes, soldiers, criminals, cultists"
_PLACE = "a place: terrain, a building, a location, an environment"


def people_margin(phrase: str) -> float | None:
    """How much closer ``phrase`` is to people than to a place (``PEOPLE_MARGIN``), or None without the model."""
    if not phrase.strip():
        return None
    try:
        from gmprep.kg.embedder import shared_embedder

        embedder = shared_embedder()
        v = np.asarray(embedder.encode([phrase])[0], dtype=np.float32)
        people, place = (np.asarray(embedder.encode_query(t), dtype=np.float32) for t in (_PEOPLE, _PLACE))
        return float(v @ people - v @ place)
    except Exception:  # no model
        log.warning("people margin without the embedder", exc_info=True)
        return None


# The skill a concept's words name by meaning ("blacksmith": Crafting, "healer": Medicine), for an NPC whose concept
# names no background or archetype to say its skills. Each skill is embedded as its name, the actions its entry lists
# and its skill feats ("Crafting: Repair, Craft, Earn Income, Identify Alchemy ...; Alchemical Crafting, Quick Repair
# ..."); the closest is taken only when it leads the next by SKILL_MARGIN. On 22 tuning concepts
# (bench/data/creator-skills.jsonl) the closest was a skill a GM expects for 17, and every miss led by under 0.06
# (a jailer's Thievery by 0.055); at 0.10 the 4 it keeps are right, and on the 24 held-out concepts, never tuned on,
# the 5 it keeps are right (of all 24 the closest is right for 15: a nun's is Deception, a safecracker's Deception);
# ``python bench/creator_skills.py --store STORE``.
SKILL_MARGIN = 0.10
_skill_vectors: dict[str, np.ndarray] = {}


def skill_profile(node) -> str:
    """A skill as its entry lists it: name, actions (Recall Knowledge, which every skill has, left out), skill feats."""
    parts = []
    for label in ("Untrained actions", "Trained actions", "Other actions that call for"):
        m = re.search(rf"\*\*{label}[^*]*\*\*(?:\s*\([^)]*\))?([^\n]*)", node.text or "")
        if m:
            parts += [a.strip() for a in re.sub(r"\([^)]*\)", "", m.group(1)).split(",")]
    feats = re.search(r"\*\*Skill feats\*\*[^:]*:([^\n]*)", node.text or "")
    feat_names = re.sub(r"\([^)]*\)|,? and \d+ more", "", feats.group(1)) if feats else ""
    actions = ", ".join(a for a in parts if a and a != "Recall Knowledge")
    return f"{node.name}: {actions}; {' '.join(feat_names.split())}"


def closest_skill(concept: str, skills: list) -> tuple[str, float] | None:
    """(the skill ``concept`` names by meaning, its lead over the next) when it leads by ``SKILL_MARGIN``; else None
    (also without the model). Lore and Perception are no skill to read a concept as."""
    nodes = [n for n in skills if n.name not in ("Lore", "Perception")]
    if not concept.strip() or len(nodes) < 2:
        return None
    try:
        scores = _cosines(concept, nodes, _skill_vectors, skill_profile)
    except Exception:  # no model: no skill by meaning
        log.warning("skill closeness without the embedder", exc_info=True)
        return None
    order = np.argsort(-scores)
    lead = float(scores[order[0]] - scores[order[1]])
    return (nodes[int(order[0])].name, lead) if lead >= SKILL_MARGIN else None
