"""What a creature request builds, decided once for the chat, the CLI and the editor's "Insert statblock" action.

A request whose every word is a hazard word is a hazard (``hazards``); one that names a Monster Core creature whole
and says nothing else of it is that creature at the level (``scale``); anything else is a statblock built from GM
Core's tables by role (``creature.build_creature``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from gmprep.core.creators.models import Citation, CreatureRequest


class Built(BaseModel):
    """A built stat block: what it is, its markdown and sources, and the model it was rendered from (``--json``)."""

    kind: Literal["hazard", "scaled", "statblock"]
    name: str
    level: int
    markdown: str
    citations: list[Citation]
    model: BaseModel
    role: str | None = None  # a statblock's role
    role_default: bool = False  # a statblock built as GM Core's default soldier (nothing named gave a build)


def build_request(req: CreatureRequest, resolver) -> Built:
    """The stat block ``req`` asks for (see the module's doc); ``resolver`` may be None (tables only). An NPC's own
    name (``req.name``) heads it, with what it is beside it ("Gorim (Blacksmith)")."""
    built = _build(req, resolver)
    if not req.name:
        return built
    first, _, rest = built.markdown.partition("\n")
    what = first.removeprefix("### ")
    title = f"{req.name}, {what}" if "(" in what else f"{req.name} ({what})"
    if hasattr(built.model, "name"):
        built.model.name = title
    return built.model_copy(update={"name": title, "markdown": f"### {title}\n{rest}"})


def _build(req: CreatureRequest, resolver) -> Built:
    from gmprep.core.creators.creature import build_creature, render_statblock_markdown
    from gmprep.core.creators.hazards import build_hazard, hazard_request, render_hazard_markdown
    from gmprep.core.creators.scale import named_whole, render_scaled_markdown, scale_creature

    hazard = hazard_request(req.level, req.concept) if resolver is not None else None
    if hazard is not None:
        h = build_hazard(hazard, getattr(resolver, "hazard_rules", {}))
        return Built(kind="hazard", name=h.lines[0].removeprefix("### "), level=h.level,
                     markdown=render_hazard_markdown(h), citations=h.citations, model=h)
    whole = named_whole(req, resolver)
    if whole is not None:
        s = scale_creature(whole, req.level)
        return Built(kind="scaled", name=s.name, level=s.level, markdown=render_scaled_markdown(s),
                     citations=s.citations, model=s)
    sb = build_creature(req, resolver)
    return Built(kind="statblock", name=sb.name, level=sb.level, markdown=render_statblock_markdown(sb),
                 citations=sb.citations, model=sb, role=sb.role, role_default=sb.role_default)
