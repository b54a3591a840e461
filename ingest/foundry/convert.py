"""One Foundry pf2e pack document -> one corpus entry (the schema in ``ingest/data/pf2e/README.md``).

Only documents whose ``publication.title`` is one of the four Remaster core books are kept. Ids follow
the bundled corpus (``pf2e:<type>:<slug of the name>``, class features ``<class>--<feature>``) so that
an entry rebuilt from the packs keeps the id tests, eval gold and hover labels refer to.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gmprep.ingest.corpus import slug
from gmprep.ingest.foundry.enrich import GLYPHS, Enriched, Resolver, enrich

BOOKS = (
    "Pathfinder Player Core", "Pathfinder Player Core 2", "Pathfinder GM Core", "Pathfinder Monster Core",
)
CLASSES = (
    "alchemist", "barbarian", "bard", "champion", "cleric", "druid", "fighter", "investigator", "monk",
    "oracle", "ranger", "rogue", "sorcerer", "swashbuckler", "witch", "wizard",
)
SIZES = {"tiny": "Tiny", "sm": "Small", "med": "Medium", "lg": "Large", "huge": "Huge", "grg": "Gargantuan"}
USAGE_HANDS = {"held-in-one-hand": "1", "held-in-two-hands": "2", "held-in-one-plus-hands": "1+"}
ATTRS = ("str", "dex", "con", "int", "wis", "cha")

Localize = Callable[[str], "str | None"]
# Document types whose converted description replaces only the text of the bundled entry of its id (their
# other fields come from the bundled corpus); a pack without a bundled twin adds nothing.
TEXT_ONLY = {"spell": "spell", "feat": "feat", "heritage": "heritage"}


def roll_data(doc: dict) -> dict[str, float]:
    """The roll data a document's own formulas use: its level, which for a spell is its rank at base."""
    return level_roll_data(((doc.get("system") or {}).get("level") or {}).get("value"))


def level_roll_data(level: object) -> dict[str, float]:
    """The roll data of an item of this level (a spell: this rank); none without a level."""
    if not isinstance(level, int | float) or isinstance(level, bool):
        return {}
    return {"item.level": level, "item.rank": level, "item.system.level.value": level}


def entry_slug(name: str) -> str:
    """Id slug as the bundled corpus spells it: apostrophes dropped ("Patron's Puppet" -> patrons-puppet)."""
    return slug(name.replace("'", "").replace("\u2019", ""))


def publication(doc: dict) -> dict:
    """``system.publication`` (items) or ``system.details.publication`` (actors)."""
    system = doc.get("system") or {}
    return system.get("publication") or (system.get("details") or {}).get("publication") or {}


def in_core_books(doc: dict) -> bool:
    """True for a document published in one of the four Remaster core books."""
    return publication(doc).get("title") in BOOKS


def action_cost(system: dict) -> str | None:
    """``actionType``/``actions`` -> ``[two-actions]``, ``[reaction]``, ``[free-action]`` or None."""
    kind = (system.get("actionType") or {}).get("value")
    count = (system.get("actions") or {}).get("value")
    if kind == "reaction":
        return GLYPHS["r"]
    if kind == "free":
        return GLYPHS["f"]
    if kind == "action" and count in (1, 2, 3):
        return GLYPHS[str(count)]
    return None


def _signed(n: Any) -> str:
    return f"+{n}" if isinstance(n, int) and n >= 0 else str(n)


def speed_text(system: dict) -> tuple[str | None, dict[str, int]]:
    """An actor's Speed as printed (``10 feet, fly 60 feet``) and as numbers by movement type.

    Reads the schema of ``system.attributes.speed`` (``value`` + ``otherSpeeds``) and the newer
    ``system.movement.speeds`` (``{land: {value}, fly: {value}, ...}``) layout."""
    speeds: dict[str, int] = {}
    details = ""
    movement = (system.get("movement") or {}).get("speeds")
    if isinstance(movement, dict):
        for kind, value in movement.items():
            v = value.get("value") if isinstance(value, dict) else value
            if isinstance(v, int | float) and v:
                speeds[kind] = int(v)
    attr = (system.get("attributes") or {}).get("speed") or {}
    if not speeds and attr:
        if isinstance(attr.get("value"), int | float) and attr["value"]:
            speeds["land"] = int(attr["value"])
        for other in attr.get("otherSpeeds") or []:
            if isinstance(other.get("value"), int | float) and other.get("type"):
                speeds[other["type"]] = int(other["value"])
        details = (attr.get("details") or "").strip()
    if not speeds and not details:
        return None, {}
    parts = [f"{v} feet" if k == "land" else f"{k} {v} feet" for k, v in speeds.items()]
    text = ", ".join(parts)
    if details:
        text = f"{text}; {details}" if text else details
    return text, speeds


class Converter:
    """Turns documents into entries; resolves links through ``resolve`` and ``@Localize`` through ``localize``."""

    def __init__(self, resolve: Resolver, localize: Localize | None = None) -> None:
        self.resolve = resolve
        self.localize = localize

    def _enrich(self, src: str | None, doc: dict | None = None) -> Enriched:
        return enrich(src or "", self.resolve, self.localize, values=roll_data(doc) if doc else None)

    def convert(self, doc: dict, pack: str, source: dict) -> list[dict]:
        """The corpus entries for ``doc`` from pack folder ``pack`` (none when it is not kept; a class
        feature shared by several classes, such as Magical Fortitude, gives one entry per class)."""
        if not in_core_books(doc):
            return []
        kind = doc.get("type")
        system = doc.get("system") or {}
        if kind == "feat" and system.get("category") == "classfeature":
            traits = (system.get("traits") or {}).get("value") or []
            return [self._class_feature(doc, source, cls) for cls in [t for t in traits if t in CLASSES] or [None]]
        entry = self._convert_one(doc, pack, source, kind)
        return [entry] if entry else []

    def _convert_one(self, doc: dict, pack: str, source: dict, kind: str | None) -> dict | None:
        if kind in TEXT_ONLY:
            return self._text_only(doc, source, TEXT_ONLY[kind])
        if kind == "action":
            return self._action(doc, pack, source)
        if kind == "weapon":
            return self._weapon(doc, source)
        if kind == "armor":
            return self._armor(doc, source)
        if kind == "npc":
            return self._creature(doc, source)
        if kind == "hazard":
            return self._hazard(doc, source)
        return None

    def _text_only(self, doc: dict, source: dict, etype: str) -> dict:
        """The description of a spell, feat or heritage, to replace the text of the bundled entry of that id
        (``merge: "text"``); the bundled entry keeps its other fields (cast, range, page ...)."""
        body = self._enrich((doc["system"].get("description") or {}).get("value"), doc)
        entry = self._base(doc, etype, f"pf2e:{etype}:{entry_slug(doc['name'])}", body, source)
        entry["merge"] = "text"
        return entry

    def _base(self, doc: dict, etype: str, entry_id: str, body: Enriched, source: dict) -> dict:
        system = doc.get("system") or {}
        traits_block = system.get("traits") or {}
        rarity = traits_block.get("rarity")
        level = (system.get("level") or {}).get("value")
        if level is None:
            level = ((system.get("details") or {}).get("level") or {}).get("value")
        return {
            "id": entry_id, "name": doc["name"], "type": etype, "book": publication(doc).get("title"),
            "page": None, "traits": list(traits_block.get("value") or []),
            "rarity": rarity if rarity and rarity != "common" else None, "level": level,
            "text": body.text, "links": body.links, "unresolved_links": body.unresolved, "section": None,
            "fields": {"foundry_id": doc.get("_id")}, "source": source,
        }

    def _class_feature(self, doc: dict, source: dict, cls: str | None) -> dict:
        system = doc["system"]
        traits = list((system.get("traits") or {}).get("value") or [])
        body = self._enrich((system.get("description") or {}).get("value"), doc)
        class_name = cls.title() if cls else None
        entry_id = f"pf2e:class-feature:{cls}--{entry_slug(doc['name'])}" if cls else f"pf2e:class-feature:{entry_slug(doc['name'])}"
        entry = self._base(doc, "class-feature", entry_id, body, source)
        entry["traits"] = [t for t in traits if t not in CLASSES]
        if class_name:
            entry["fields"]["class"] = class_name
            entry["section"] = ["Classes", class_name, doc["name"]]
        cost = action_cost(system)
        if cost:
            entry["fields"]["cast"] = cost
        return entry

    def _action(self, doc: dict, pack: str, source: dict) -> dict:
        system = doc["system"]
        body = self._enrich((system.get("description") or {}).get("value"), doc)
        entry = self._base(doc, "action", f"pf2e:action:{entry_slug(doc['name'])}", body, source)
        cost = action_cost(system)
        if cost:
            entry["fields"]["cast"] = cost
        if pack == "bestiary-ability-glossary-srd":
            entry["fields"]["category"] = "universal monster ability"
            entry["section"] = ["Universal Monster Abilities", doc["name"]]
        return entry

    def _equipment_head(self, system: dict) -> list[str]:
        price = (system.get("price") or {}).get("value") or {}
        price_txt = " ".join(f"{v} {k}" for k, v in price.items() if v)
        bulk = (system.get("bulk") or {}).get("value")
        bulk_txt = "L" if bulk == 0.1 else ("—" if bulk in (0, None) else str(bulk))
        return [f"**Price** {price_txt or '—'}", f"**Bulk** {bulk_txt}"]

    def _weapon(self, doc: dict, source: dict) -> dict:
        system = doc["system"]
        body = self._enrich((system.get("description") or {}).get("value"), doc)
        dmg = system.get("damage") or {}
        dice = f"{dmg.get('dice', 1)}{dmg.get('die', '')}" if dmg.get("die") else None
        damage = " ".join(x for x in (dice, dmg.get("damageType")) if x) or None
        usage = (system.get("usage") or {}).get("value")
        fields = {
            "damage": damage, "damage_die": dmg.get("die"), "damage_type": dmg.get("damageType"),
            "category": system.get("category"), "group": system.get("group"),
            "hands": USAGE_HANDS.get(usage or ""), "range": system.get("range"),
            "reload": (system.get("reload") or {}).get("value"),
        }
        entry = self._base(doc, "equipment", f"pf2e:equipment:{entry_slug(doc['name'])}", body, source)
        traits = ", ".join(entry["traits"]) or "—"
        stat = [*self._equipment_head(system), f"**Damage** {damage or '—'}", f"**Hands** {fields['hands'] or '—'}"]
        if fields["range"]:
            stat.append(f"**Range** {fields['range']} feet")
        if fields["reload"] not in (None, ""):
            stat.append(f"**Reload** {fields['reload']}")
        stat += [f"**Category** {fields['category'] or '—'}", f"**Group** {fields['group'] or '—'}", f"**Traits** {traits}"]
        entry["text"] = "; ".join(stat) + (f"\n\n{body.text}" if body.text else "")
        entry["fields"].update({k: v for k, v in fields.items() if v not in (None, "")})
        entry["fields"]["item_type"] = "weapon"
        return entry

    def _armor(self, doc: dict, source: dict) -> dict:
        system = doc["system"]
        body = self._enrich((system.get("description") or {}).get("value"), doc)
        fields = {
            "ac_bonus": system.get("acBonus"), "dex_cap": system.get("dexCap"),
            "check_penalty": system.get("checkPenalty"), "speed_penalty": system.get("speedPenalty"),
            "strength": system.get("strength"), "category": system.get("category"), "group": system.get("group"),
        }
        entry = self._base(doc, "equipment", f"pf2e:equipment:{entry_slug(doc['name'])}", body, source)
        entry["fields"].update({k: v for k, v in fields.items() if v is not None})
        entry["fields"]["item_type"] = "armor"
        # the same stat text as the armor added from Archives of Nethys pages (imported here: armor_stats
        # imports this module through creature_speed)
        from gmprep.ingest.armor_stats import armor_stat_line

        stat = [*self._equipment_head(system), armor_stat_line(entry["fields"])]
        entry["text"] = "; ".join(stat) + (f"\n\n{body.text}" if body.text else "")
        return entry

    def _strike(self, item: dict) -> str:
        system = item["system"]
        rolls = (system.get("damageRolls") or {}).values()
        damage = " plus ".join(
            f"{r.get('damage', '')} {(r.get('category') or '') + ' ' if r.get('category') else ''}{r.get('damageType', '')}".strip()
            for r in rolls
        )
        extra = [e.replace("-", " ").title() for e in (system.get("attackEffects") or {}).get("value") or []]
        if extra:
            damage = " plus ".join([damage, *extra]) if damage else " plus ".join(extra)
        traits = ", ".join((system.get("traits") or {}).get("value") or [])
        bonus = _signed((system.get("bonus") or {}).get("value", 0))
        kind = "Ranged" if any(t.startswith(("range", "thrown")) for t in (system.get("traits") or {}).get("value") or []) else "Melee"
        return f"**{kind}** [one-action] {item['name']} {bonus}" + (f" ({traits})" if traits else "") + f", **Damage** {damage}"

    def _creature(self, doc: dict, source: dict) -> dict:
        system = doc["system"]
        attrs = system.get("attributes") or {}
        perception = system.get("perception") or {}
        senses = ", ".join(
            " ".join(x for x in (s.get("type", "").replace("-", " ").title(),
                                 f"({s['acuity']})" if s.get("acuity") else "",
                                 f"{s['range']} feet" if s.get("range") else "") if x)
            for s in perception.get("senses") or []
        )
        speed, speeds = speed_text(system)
        langs = (system.get("details") or {}).get("languages") or {}
        languages = ", ".join(x.title() for x in langs.get("value") or [])
        if langs.get("details"):
            languages = f"{languages}; {langs['details']}" if languages else langs["details"]
        skills = ", ".join(
            f"{k.replace('-', ' ').title()} {_signed(v.get('base', v.get('value', 0)))}"
            for k, v in sorted((system.get("skills") or {}).items())
        )
        mods = [_signed(((system.get("abilities") or {}).get(a) or {}).get("mod", 0)) for a in ATTRS]
        saves = system.get("saves") or {}
        ac = (attrs.get("ac") or {}).get("value")
        hp = (attrs.get("hp") or {}).get("max")
        save_txt = ", ".join(
            f"**{n}** {_signed((saves.get(k) or {}).get('value', 0))}"
            for k, n in (("fortitude", "Fort"), ("reflex", "Ref"), ("will", "Will"))
        )
        size = SIZES.get(((system.get("traits") or {}).get("size") or {}).get("value", ""), "")
        entry = self._base(doc, "creature", f"pf2e:creature:{entry_slug(doc['name'])}", Enriched(""), source)
        rarity = (system.get("traits") or {}).get("rarity") or "common"
        head = f"**Creature {entry['level']}** ({', '.join([rarity, size.lower(), *entry['traits']])})"
        lines = [head, f"**Perception** {_signed(perception.get('mod', 0))}" + (f"; {senses}" if senses else "")]
        if languages:
            lines.append(f"**Languages** {languages}")
        if skills:
            lines.append(f"**Skills** {skills}")
        lines.append(", ".join(f"**{a.title()}** {m}" for a, m in zip(ATTRS, mods, strict=True)))
        lines.append(f"**AC** {ac}; {save_txt}")
        lines.append(f"**HP** {hp}")
        if speed:
            lines.append(f"**Speed** {speed}")
        attacks, abilities = [], []
        links: list[str] = []
        unresolved: list[str] = []
        for item in sorted(doc.get("items") or [], key=lambda i: i.get("sort", 0)):
            if item.get("type") == "melee":
                attacks.append(self._strike(item))
            elif item.get("type") == "action":
                body = self._enrich((item["system"].get("description") or {}).get("value"))
                links += body.links
                unresolved += body.unresolved
                cost = action_cost(item["system"])
                abilities.append(f"**{item['name']}**" + (f" {cost}" if cost else "") + (f" {body.text}" if body.text else ""))
        lines += attacks + abilities
        entry["text"] = "\n\n".join(lines)
        entry["links"] = list(dict.fromkeys(links))
        entry["unresolved_links"] = list(dict.fromkeys(unresolved))
        entry["rarity"] = rarity
        lore = self._enrich((system.get("details") or {}).get("publicNotes")).text
        entry["fields"].update({
            "size": size, "perception": f"{_signed(perception.get('mod', 0))}" + (f"; {senses}" if senses else ""),
            "languages": languages, "skills": skills, "abilityMods": mods,
            "ac_saves": f"{ac}; {save_txt}", "hp": str(hp), "speed": speed, "speeds": speeds,
            "attacks": attacks, "abilities": [a.split("**")[1] for a in abilities], "lore": lore,
        })
        return entry

    def _hazard(self, doc: dict, source: dict) -> dict:
        system = doc["system"]
        details = system.get("details") or {}
        parts = [
            (label, self._enrich(details.get(key)))
            for key, label in (("description", None), ("disable", "Disable"), ("routine", "Routine"), ("reset", "Reset"))
        ]
        attrs = system.get("attributes") or {}
        stealth = attrs.get("stealth") or {}
        saves = system.get("saves") or {}
        stats = [f"**Stealth** {_signed(stealth.get('value', 0))} {self._enrich(stealth.get('details')).text}".strip()]
        stats.append(f"**AC** {(attrs.get('ac') or {}).get('value')}; " + ", ".join(
            f"**{n}** {_signed((saves.get(k) or {}).get('value', 0))}"
            for k, n in (("fortitude", "Fort"), ("reflex", "Ref"), ("will", "Will"))))
        if attrs.get("hasHealth"):
            immune = ", ".join(i.get("type", "").replace("-", " ") for i in attrs.get("immunities") or [])
            stats.append(f"**Hardness** {attrs.get('hardness', 0)}, **HP** {(attrs.get('hp') or {}).get('max')}"
                         + (f"; **Immunities** {immune}" if immune else ""))
        text = "\n\n".join([*stats, *(f"**{label}** {e.text}" if label else e.text for label, e in parts if e.text)])
        items, enriched = [], [e for _, e in parts]
        for item in sorted(doc.get("items") or [], key=lambda i: i.get("sort", 0)):
            if item.get("type") == "action":
                body = self._enrich((item["system"].get("description") or {}).get("value"))
                enriched.append(body)
                cost = action_cost(item["system"])
                items.append(f"**{item['name']}**" + (f" {cost}" if cost else "") + f" {body.text}")
        body = Enriched(
            text="\n\n".join([text, *items]).strip(),
            links=list(dict.fromkeys(x for e in enriched for x in e.links)),
            unresolved=list(dict.fromkeys(x for e in enriched for x in e.unresolved)),
        )
        entry = self._base(doc, "hazard", f"pf2e:hazard:{entry_slug(doc['name'])}", body, source)
        entry["fields"].update({
            "complex": bool(details.get("isComplex")), "ac": (attrs.get("ac") or {}).get("value"),
            "hardness": attrs.get("hardness"), "hp": (attrs.get("hp") or {}).get("max"),
        })
        return entry


def clean_name(name: str) -> str:
    """Whitespace-normalized display name."""
    return re.sub(r"\s+", " ", name).strip()
