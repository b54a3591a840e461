"""The choices class features offer (arcane theses and schools, druidic orders, hunter's edges, research fields)
and the familiar and master abilities, from the Archives-of-Nethys option notes of the kmdavis/xuartlek vault.

Why: the bundled corpus had the features that offer a choice ("Arcane Thesis", "Research Field") but not the
choices: "Staff Nexus", "Toxicologist" or the familiar ability "Dragon" were found nowhere, so a question about
one was answered from feats that merely mention it. The vault keeps each list as one note,
``content/srd/pf2e/compendium/character/<list>.md``: ``## Name`` per option, its paragraphs (``### `` parts such
as a research field's *Field Vials* or a hunter's edge's *Masterful Hunter*), for familiar abilities a
``- **Ability Type**: Master`` bullet, and a footer ``*Source: Player Core p. 195*``. This module reads the
transcription kept in ``ingest/data/xuartlek-transcribed/options/`` (or a checkout's notes) and adds:

- a class option as a ``class-feature`` entry of its class (``pf2e:class-feature:wizard--staff-nexus``), linked
  to the class and to the feature that offers it (``fields.option_of``), which links back to it;
- a familiar or master ability as a ``rule`` entry (``pf2e:rule:familiar-ability--dragon``) linked to Player
  Core's *Familiar Abilities* or *Master Abilities* section, with ``fields.ability_type`` as the note prints it.

Options of books other than the four are left out. An option whose name another entry already has (the
``precision`` trait, the ``darkvision`` spell), and every familiar ability (their names are ordinary words:
Speech, Tough, Plant), is searchable and citable but not a hover name (``fields.hover_name`` false, as rules
prose sections: ``kg/names.py``). Nothing is written by hand: every text is the note's, wiki links written as
their labels.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gmprep.ingest.class_features import _labels, _norm, text_links
from gmprep.ingest.creature_speed import REPO
from gmprep.ingest.foundry.convert import entry_slug

OPTIONS_DIR = "content/srd/pf2e/compendium/character"
BOOKS = {"Player Core", "Player Core 2", "GM Core", "Monster Core"}
FAMILIAR_ABILITIES = "familiar-abilities"


@dataclass(frozen=True)
class OptionList:
    """Which class feature a note's options belong to; ``name`` the entry name for a heading (Foundry's
    ``classfeatures`` pack names a druidic order "Animal Order", the note's heading is "Animal")."""

    cls: str
    parent: str  # the class-feature id that offers the choice
    kind: str  # "arcane thesis", as fields.option_kind
    name: str = "{}"


OPTION_LISTS = {
    "arcane-theses": OptionList("wizard", "pf2e:class-feature:wizard--arcane-thesis", "arcane thesis"),
    "arcane-schools": OptionList("wizard", "pf2e:class-feature:wizard--arcane-school", "arcane school"),
    "druidic-orders": OptionList("druid", "pf2e:class-feature:druid--druidic-order", "druidic order", "{} Order"),
    "hunters-edges": OptionList("ranger", "pf2e:class-feature:ranger--hunters-edge", "hunter's edge"),
    "research-fields": OptionList("alchemist", "pf2e:class-feature:alchemist--research-field", "research field"),
}
# Player Core's sections the familiar and master abilities are listed in (rules prose entries).
ABILITY_PARENTS = {"familiar": "pf2e:rule:player-core--familiar-abilities",
                   "master": "pf2e:rule:player-core--master-abilities"}

SOURCE = re.compile(r"^\*Source: (.+?) p\. (\d+)\*\s*$")
ABILITY_TYPE = re.compile(r"^- \*\*Ability Type\*\*: (.+?)\s*$")
ACTIONS = re.compile(r'^\[[<>]+\]\([^)]*"([^"]+)"\)\s*$')  # [>>](books/... "Two-Action")


@dataclass(frozen=True)
class Option:
    """One ``## `` section of an option note."""

    name: str
    text: str
    book: str  # "Player Core"
    page: str
    ability_type: str | None = None
    actions: str | None = None


@dataclass(frozen=True)
class OptionNote:
    """An option note's sections of the four books, with where it was read."""

    stem: str  # "arcane-theses"
    options: list[Option]
    path: str
    commit: str


@dataclass
class OptionReport:
    """What ``add_class_options`` added and left out."""

    created: list[str] = field(default_factory=list)
    not_hover_names: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "arcane-schools: School of X (Impossible Magic)"


def parse_option_note(text: str, stem: str, path: str, commit: str) -> tuple[OptionNote, list[str]]:
    """The note's options of the four books, and the names of those left out (another book's)."""
    sections: list[tuple[str, list[str]]] = []
    for line in _labels(text).splitlines():
        if line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
    options, left_out = [], []
    for name, lines in sections:
        book = page = ""
        ability = actions = None
        body: list[str] = []
        for line in lines:
            s = line.strip()
            if m := SOURCE.match(s):
                book, page = m.group(1), m.group(2)
            elif m := ABILITY_TYPE.match(s):
                ability = m.group(1)
                body.append(f"**Ability Type** {ability}")
            elif m := ACTIONS.match(s):
                actions = m.group(1)
                body.append(f"**Actions** {actions}")
            else:
                body.append(line.rstrip())
        if book not in BOOKS:
            left_out.append(f"{name} ({book or 'no source'})")
            continue
        text_ = re.sub(r"\n{3,}", "\n\n", "\n".join(body)).strip()
        options.append(Option(name.replace("\u2019", "'"), text_, book, page, ability, actions))
    return OptionNote(stem, options, path, commit), left_out


def read_transcription(folder: Path) -> list[OptionNote]:
    """The transcribed notes: ``<list>.md`` with ``repo:``, ``path:``, ``commit:`` lines, ``---``, the note."""
    notes = []
    for file in sorted(folder.glob("*.md")):
        if file.stem not in OPTION_LISTS and file.stem != FAMILIAR_ABILITIES:
            continue
        head, _, body = file.read_text(encoding="utf-8").partition("\n---\n")
        meta = dict(ln.split(": ", 1) for ln in head.splitlines() if ": " in ln)
        notes.append(parse_option_note(body, file.stem, meta["path"], meta["commit"])[0])
    return notes


def read_vault(vault: Path, commit: str) -> list[OptionNote]:
    """The option notes of a kmdavis/xuartlek checkout."""
    notes = []
    for stem in [*OPTION_LISTS, FAMILIAR_ABILITIES]:
        path = f"{OPTIONS_DIR}/{stem}.md"
        if (vault / path).exists():
            notes.append(parse_option_note((vault / path).read_text(encoding="utf-8"), stem, path, commit)[0])
    return notes


def _names(records: list[dict]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for r in records:
        out.setdefault(r["type"], {}).setdefault(_norm(r["name"]), r["id"])
    return out


def _entry(note: OptionNote, opt: Option, by_id: dict[str, dict], names: dict[str, dict[str, str]]) -> dict | None:
    """The entry of one option; None when the class or the parent feature is not in the corpus."""
    source = {"repo": REPO, "commit": note.commit, "path": note.path}
    book = f"Pathfinder {opt.book}"
    if note.stem == FAMILIAR_ABILITIES:
        kind = (opt.ability_type or "").lower()
        parent = ABILITY_PARENTS.get(kind)
        section = [by_id[parent]["name"] if parent in by_id else "Specific Familiars", opt.name]
        fields: dict = {"ability_type": opt.ability_type, "hover_name": False}
        if opt.actions:
            fields["actions"] = opt.actions
        links = [x for x in [parent, *text_links(opt.text, names)] if x and x in by_id]
        return {"id": f"pf2e:rule:familiar-ability--{entry_slug(opt.name)}", "name": opt.name, "type": "rule",
                "book": book, "page": opt.page, "traits": [], "rarity": None, "level": None, "text": opt.text,
                "links": list(dict.fromkeys(links)), "unresolved_links": [], "section": ["Familiars", *section],
                "fields": fields, "source": source}
    spec = OPTION_LISTS[note.stem]
    class_id, parent = f"pf2e:class:{spec.cls}", spec.parent
    if class_id not in by_id or parent not in by_id:
        return None
    name = spec.name.format(opt.name)
    cls_name, parent_rec = by_id[class_id]["name"], by_id[parent]
    links = [class_id, parent, *text_links(opt.text, names)]
    return {"id": f"pf2e:class-feature:{spec.cls}--{entry_slug(name)}", "name": name, "type": "class-feature",
            "book": book, "page": opt.page, "traits": [], "rarity": None, "level": parent_rec.get("level"),
            "text": opt.text, "links": list(dict.fromkeys(links)), "unresolved_links": [],
            "section": ["Classes", cls_name, parent_rec["name"], name],
            "fields": {"class": cls_name, "option_of": parent, "option_kind": spec.kind}, "source": source}


def _ours(rec: dict) -> bool:
    src = rec.get("source")
    return isinstance(src, dict) and src.get("repo") == REPO and src.get("path", "").rsplit("/", 1)[-1].removesuffix(
        ".md") in {*OPTION_LISTS, FAMILIAR_ABILITIES}


def add_class_options(records: Iterable[dict], notes: list[OptionNote]) -> tuple[list[dict], OptionReport]:
    """The corpus with the notes' options added (see the module docstring); a rerun changes nothing."""
    records = [r for r in records if not _ours(r)]  # a rerun rebuilds its own entries
    report = OptionReport()
    by_id = {r["id"]: r for r in records}
    names = _names(records)
    taken = {n for m in names.values() for n in m}
    created: list[dict] = []
    children: dict[str, list[dict]] = {}
    for note in notes:
        for opt in note.options:
            rec = _entry(note, opt, by_id, names)
            if rec is None or rec["id"] in by_id:
                report.skipped.append(f"{note.stem}: {opt.name} (no parent entry, or its id is taken)")
                continue
            if _norm(rec["name"]) in taken and rec["fields"].get("hover_name") is not False:
                rec["fields"]["hover_name"] = False
                report.not_hover_names.append(rec["name"])
            by_id[rec["id"]] = rec
            created.append(rec)
            report.created.append(f"{note.stem}: {rec['name']}")
            parent = rec["fields"].get("option_of")
            if parent:
                children.setdefault(parent, []).append(rec)
    out = []
    for rec in records:
        kids = children.get(rec["id"])
        if kids:  # the feature links to its options; its "classfeatures:Bomber" references are now resolved
            kid_names = {k["name"] for k in kids}
            rec = {**rec, "links": list(dict.fromkeys([*(rec.get("links") or []), *(k["id"] for k in kids)])),
                   "unresolved_links": [u for u in rec.get("unresolved_links") or []
                                        if u.split(":", 1)[-1] not in kid_names]}
        out.append(rec)
    for etype in ("class-feature", "rule"):
        new = [r for r in created if r["type"] == etype]
        last = max((k for k, r in enumerate(out) if r["type"] == etype), default=len(out) - 1)
        out = [*out[:last + 1], *new, *out[last + 1:]]
    return out, report
