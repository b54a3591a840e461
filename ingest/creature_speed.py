"""Creature Speed and Monster Core page numbers from Archives-of-Nethys statblock notes.

Why: the vault the bundled creatures come from wrote every Speed as ``0 feet`` (its importer reads an old
Foundry field), and no source of the corpus had page numbers. The kmdavis/xuartlek Obsidian vault imports
Monster Core from the Archives of Nethys (ORC content) into one statblock note per creature, with
``speed: "20 feet, fly 40 feet"`` and ``sourcebook: "_Monster Core_, page 146."``. This module parses
those two lines (from a checkout of the vault, or from the transcription of them kept in
``ingest/data/xuartlek-transcribed/``), matches the notes to corpus creatures by name and adds
``fields.speed``/``fields.speeds``, the ``**Speed**`` line of the stat block (after HP, as the Foundry
merge does) and ``page``. Nothing is written by hand: every value is a note's line.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gmprep.ingest.foundry.convert import speed_text

REPO = "kmdavis/xuartlek"
FOUNDRY_REPO = "foundryvtt/pf2e"
NOTES_DIR = "content/srd/pf2e/bestiary/monster-core"
BOOK = "Pathfinder Monster Core"
WIKI = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
NOTE_NAME = re.compile(r'^name:\s*"(.+?)"\s*$', re.M)
NOTE_SPEED = re.compile(r"^speed:\s*(.+?)\s*$", re.M)
NOTE_SOURCEBOOK = re.compile(r"^sourcebook:\s*(.+?)\s*$", re.M)
PAGE = re.compile(r"_Monster Core_, page (\d+(?:[-–]\d+)?)")
SPEED_PART = re.compile(r"^(?:([a-z][a-z ]*?)\s+)?(\d+)\s*feet(?:\s*\([^)]*\))?$")  # "burrow 20 feet (sand only)"
AGED = re.compile(r"^(.+) \((Young|Adult|Ancient)(?:, Spellcaster)?\)$")


@dataclass(frozen=True)
class NoteStats:
    """The Speed and page one statblock note prints, with where it was read."""

    name: str
    speed: str
    page: str | None
    path: str
    commit: str


@dataclass
class SpeedReport:
    """What ``add_speed_and_pages`` changed and what it could not match."""

    notes: int = 0
    speed_added: int = 0
    page_added: int = 0
    unmatched: list[str] = field(default_factory=list)  # corpus creatures without a note
    unused: list[str] = field(default_factory=list)  # notes no corpus creature matched


def unquote(value: str) -> str:
    """A YAML scalar as the note writes it (``"25 feet"`` or ``25 feet``) -> its text."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1].replace('\\"', '"')
    return value.strip()


def clean(text: str) -> str:
    """Wiki links ``[[target|label]]`` -> their label; runs of spaces collapsed."""
    text = WIKI.sub(lambda m: m.group(2) or m.group(1).split("/")[-1].split("#")[-1], text)
    text = re.sub(r"\s+([,;])", r"\1", text)  # "fly , water walk": a value the importer left empty
    return re.sub(r"\s+", " ", text).strip()


def parse_speed(raw: str) -> tuple[str, dict[str, int]]:
    """``25 feet, climb 20 feet; burrow 20 feet, earth glide`` -> (the text as printed, feet by movement).

    The land Speed is the number without a movement type; other parts (``earth glide``, ``air walk``) stay
    in the text only."""
    text = clean(unquote(raw))
    speeds: dict[str, int] = {}
    for part in re.split(r"[,;]", text):
        m = SPEED_PART.match(part.strip().lower())
        if m:
            speeds.setdefault(m.group(1) or "land", int(m.group(2)))
    return text, speeds


def parse_note(text: str, path: str, commit: str) -> NoteStats | None:
    """The statblock note's name, Speed and Monster Core page; None when it has no Speed line."""
    name, speed, source = NOTE_NAME.search(text), NOTE_SPEED.search(text), NOTE_SOURCEBOOK.search(text)
    if not speed:
        return None
    page = PAGE.search(unquote(source.group(1))) if source else None
    stem = Path(path).stem
    return NoteStats(unquote(name.group(1)) if name else stem, unquote(speed.group(1)),
                     page.group(1) if page else None, path, commit)


def read_vault(vault: Path, commit: str) -> list[NoteStats]:
    """Every Monster Core note of a kmdavis/xuartlek checkout (Title Case file names, as its newest layout)."""
    out = []
    for note in sorted((vault / NOTES_DIR).glob("*/*.md")):
        if note.stem.lower() == note.parent.name.lower():  # folder notes
            continue
        stats = parse_note(note.read_text(encoding="utf-8"), note.relative_to(vault).as_posix(), commit)
        if stats:
            out.append(stats)
    return out


def read_transcription(tsv: Path) -> list[NoteStats]:
    """The transcribed lines: ``path, commit, speed, sourcebook`` per note (path relative to NOTES_DIR)."""
    out = []
    with tsv.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            page = PAGE.search(row["sourcebook"])
            out.append(NoteStats(Path(row["path"]).name, row["speed"], page.group(1) if page else None,
                                 f"{NOTES_DIR}/{row['path']}.md", row["commit"]))
    return out


def note_name(creature: str) -> str:
    """The note a corpus creature's stats are printed in: Foundry's ``Omen Dragon (Adult, Spellcaster)`` is
    the book's ``Adult Omen Dragon`` (the spellcaster is a variant in the same stat block), and
    ``Manticore (Quill Tail)`` is ``Manticore``."""
    m = AGED.match(creature)
    if m:
        return f"{m.group(2)} {m.group(1)}"
    return re.sub(r"\s*\([^)]*\)$", "", creature)


def with_speed(rec: dict, speed: str, speeds: dict[str, int]) -> dict:
    """The creature with its Speed: ``fields.speed``/``speeds`` and a ``**Speed**`` line after HP."""
    rec = {**rec, "fields": {**(rec.get("fields") or {}), "speed": speed, "speeds": speeds}}
    text = rec.get("text") or ""
    m = re.search(r"^\*\*HP\*\*.*$", text, flags=re.M)
    line = f"**Speed** {speed}"
    rec["text"] = f"{text[:m.end()]}\n\n{line}{text[m.end():]}" if m else f"{text}\n\n{line}"
    return rec


def with_source(rec: dict, source: dict) -> dict:
    """The record with one more ``{repo, commit, path}`` it was built from."""
    sources = rec["source"] if isinstance(rec.get("source"), list) else [rec["source"]]
    return rec if source in sources else {**rec, "source": [*sources, source]}


def add_speed_and_pages(records: Iterable[dict], notes: list[NoteStats]) -> tuple[list[dict], SpeedReport]:
    """Monster Core creatures gain the Speed and page of the note of their name (existing values kept)."""
    report = SpeedReport(notes=len(notes))
    by_name = {n.name.lower(): n for n in notes}
    used: set[str] = set()
    out = []
    for rec in records:
        if rec.get("type") != "creature" or rec.get("book") != BOOK:
            out.append(rec)
            continue
        note = by_name.get(note_name(rec["name"]).lower())
        if note is None:
            report.unmatched.append(rec["name"])
            out.append(rec)
            continue
        used.add(note.name.lower())
        before = rec
        speed, speeds = parse_speed(note.speed)
        fields = rec.get("fields") or {}
        if speed and not fields.get("speed"):
            rec = with_speed(rec, speed, speeds)
            report.speed_added += 1
        elif speed and fields.get("speed") == speed and fields.get("speeds") != speeds:
            rec = {**rec, "fields": {**fields, "speeds": speeds}}  # a rerun after a parser fix
        if note.page and not rec.get("page"):
            rec = {**rec, "page": note.page}
            report.page_added += 1
        if rec is not before:
            rec = with_source(rec, {"repo": REPO, "commit": note.commit, "path": note.path})
        out.append(rec)
    report.unused = sorted(n.name for n in notes if n.name.lower() not in used)
    return out, report


@dataclass(frozen=True)
class PackSpeed:
    """A Foundry pack actor's ``system.attributes.speed`` object, with the file and commit it was read at."""

    slug: str  # the file name, which is the corpus id's last part (``envyspawn`` -> ``pf2e:creature:envyspawn``)
    speed: dict
    path: str
    commit: str


def read_pack_speeds(tsv: Path) -> list[PackSpeed]:
    """The transcribed ``path, commit, speed`` rows (``speed``: the actor's ``system.attributes.speed`` JSON)."""
    with tsv.open(encoding="utf-8", newline="") as fh:
        return [PackSpeed(Path(row["path"]).stem, json.loads(row["speed"]), row["path"], row["commit"])
                for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)]


def add_pack_speeds(records: Iterable[dict], speeds: list[PackSpeed]) -> tuple[list[dict], list[str]]:
    """Creatures still without a Speed gain their Foundry pack actor's (matched by id slug), formatted as the
    Foundry build formats it (``speed_text``). Returns the records and the names of the creatures changed."""
    by_slug = {s.slug: s for s in speeds}
    out, added = [], []
    for rec in records:
        pack = by_slug.get(rec["id"].rsplit(":", 1)[-1]) if rec.get("type") == "creature" else None
        if pack and not (rec.get("fields") or {}).get("speed"):
            text, numbers = speed_text({"attributes": {"speed": pack.speed}})
            if text:
                rec = with_source(with_speed(rec, text, numbers),
                                  {"repo": FOUNDRY_REPO, "commit": pack.commit, "path": pack.path})
                added.append(rec["name"])
        out.append(rec)
    return out, added
