"""Weapon damage, hands, range, reload, category, group and page from Archives-of-Nethys weapon notes.

Why: the vault the bundled equipment comes from gives a weapon's price, bulk and usage but not its damage
die, category or group, and no page. The kmdavis/xuartlek Obsidian vault imports the Archives of Nethys
(ORC content) into one note per base weapon, ``content/srd/pf2e/compendium/equipment/weapons/<group>/<slug>.md``,
with bullets ``- **Damage**: 1d8 S``, ``- **Hands**: 1``, ``- **Range**: 60 ft.``, ``- **Reload**: 0``,
``- **Category**: Martial``, ``- **Group**: Sword`` and a footer ``*Source: Player Core p. 278*``. This
module parses those lines (from a checkout, or from the transcription of them kept in
``ingest/data/xuartlek-transcribed/weapons.tsv``), matches notes to corpus equipment by id slug (the note's
file name) and adds the fields the Foundry build gives a weapon (``damage`` ``1d8 slashing``, ``damage_die``,
``damage_type``, ``hands``, ``range`` in feet, ``reload``, ``category``, ``group`` in Foundry's lower-case
words, ``item_type``), the same ``**Damage** …; **Group** …`` stat text after the Price line, and ``page``
when the note's book is the entry's book. Nothing is written by hand: every value is a note's line.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gmprep.ingest.creature_speed import REPO, with_source

WEAPONS_DIR = "content/srd/pf2e/compendium/equipment/weapons"
COLUMNS = ("damage", "hands", "range", "reload", "type", "category", "group", "source")
BULLET = re.compile(r"^- \*\*(Damage|Hands|Range|Reload|Type|Category|Group)\*\*: (.+?)\s*$", re.M)
SOURCE = re.compile(r"^\*Source: (.+?)\*\s*$", re.M)
BOOK_PAGE = re.compile(r"^(.+?) p\. (\d+(?:[-–]\d+)?)$")
DAMAGE = re.compile(r"^(\d+)(d\d+)? (\w+)$")  # "1d8 S", "1 P" (blowgun), "1d6 modular" (tricky pick)
DAMAGE_TYPES = {"B": "bludgeoning", "P": "piercing", "S": "slashing"}


@dataclass(frozen=True)
class WeaponNote:
    """The stat bullets and source line of one weapon note, with where it was read."""

    slug: str  # the note's file name, which is the corpus id's last part (``pf2e:equipment:longsword``)
    stats: dict[str, str]  # COLUMNS -> the bullet's value as printed ("" when the note has no such bullet)
    path: str
    commit: str
    repo: str = REPO  # where ``path`` is: the vault, or the saved Archives of Nethys pages (``aon_weapons.py``)

    @property
    def book_page(self) -> tuple[str, str] | None:
        m = BOOK_PAGE.match(self.stats.get("source", ""))
        return (m.group(1), m.group(2)) if m else None


@dataclass
class WeaponReport:
    """What ``add_weapon_stats`` changed and what it could not match."""

    notes: int = 0
    stats_added: int = 0
    page_added: int = 0
    other_book: list[str] = field(default_factory=list)  # matched, but the note's book is not the entry's
    unused: list[str] = field(default_factory=list)  # notes no corpus entry matched


def parse_weapon_note(text: str, path: str, commit: str) -> WeaponNote | None:
    """A weapon note's stat bullets and ``*Source: Book p. N*`` line; None when it has no Group bullet."""
    stats = {k.lower(): v for k, v in BULLET.findall(text)}
    if not stats.get("group"):
        return None
    source = SOURCE.search(text)
    stats = {c: stats.get(c, "") for c in COLUMNS[:-1]} | {"source": source.group(1) if source else ""}
    return WeaponNote(Path(path).stem, stats, path, commit)


def read_vault(vault: Path, commit: str) -> list[WeaponNote]:
    """Every base-weapon note (``weapons/<group>/<slug>.md``) of a kmdavis/xuartlek checkout."""
    notes = []
    for path in sorted((vault / WEAPONS_DIR).glob("*/*.md")):
        note = parse_weapon_note(path.read_text(encoding="utf-8"), path.relative_to(vault).as_posix(), commit)
        if note:
            notes.append(note)
    return notes


def read_transcription(tsv: Path) -> list[WeaponNote]:
    """The transcribed rows: ``path`` (``<group>/<slug>`` under WEAPONS_DIR), ``commit`` and COLUMNS."""
    with tsv.open(encoding="utf-8", newline="") as fh:
        return [WeaponNote(row["path"].rsplit("/", 1)[-1], {c: row[c] for c in COLUMNS},
                           f"{WEAPONS_DIR}/{row['path']}.md", row["commit"])
                for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)]


def weapon_fields(stats: dict[str, str]) -> dict:
    """The note's bullets as the Foundry build's weapon fields (ammunition has no damage, hands or item_type)."""
    out: dict = {}
    m = DAMAGE.match(stats.get("damage", ""))
    if m:
        dtype = DAMAGE_TYPES.get(m.group(3), m.group(3).lower())
        out["damage"] = f"{m.group(1)}{m.group(2) or ''} {dtype}"
        if m.group(2):
            out["damage_die"] = m.group(2)
        out["damage_type"] = dtype
    if stats.get("hands"):
        out["hands"] = stats["hands"]
    rng = re.match(r"^(\d+) ft\.$", stats.get("range", ""))
    if rng:
        out["range"] = int(rng.group(1))
    if stats.get("reload"):
        out["reload"] = stats["reload"]
    for key in ("category", "group"):
        if stats.get(key):
            out[key] = stats[key].lower()
    if "damage" in out:
        out["item_type"] = "weapon"
    return out


def stat_line(fields: dict) -> str:
    """``**Damage** 1d8 slashing; **Hands** 1; …; **Group** sword`` as the Foundry build writes it."""
    parts = []
    if "damage" in fields:
        parts += [f"**Damage** {fields['damage']}", f"**Hands** {fields.get('hands') or '—'}"]
    if fields.get("range"):
        parts.append(f"**Range** {fields['range']} feet")
    if fields.get("reload") not in (None, ""):
        parts.append(f"**Reload** {fields['reload']}")
    parts += [f"**Category** {fields.get('category') or '—'}", f"**Group** {fields.get('group') or '—'}"]
    return "; ".join(parts)


def with_weapon_stats(rec: dict, fields: dict) -> dict:
    """The entry with the fields it lacks and their stat text appended to its ``**Price**`` line."""
    have = rec.get("fields") or {}
    rec = {**rec, "fields": {**have, **{k: v for k, v in fields.items() if k not in have}}}
    text = rec.get("text") or ""
    line = stat_line(rec["fields"])
    m = re.search(r"^\*\*Price\*\*.*$", text, flags=re.M)
    rec["text"] = f"{text[:m.end()]}; {line}{text[m.end():]}" if m else f"{line}\n\n{text}"
    return rec


def add_weapon_stats(records: Iterable[dict], notes: list[WeaponNote]) -> tuple[list[dict], WeaponReport]:
    """Equipment whose id slug is a note's name (hyphens aside: ``dwarven-war-axe`` is ``dwarven-waraxe``) gains its stats (entries with a ``group`` keep theirs) and
    page (when the note's book, ``Player Core``, is the entry's, ``Pathfinder Player Core``)."""
    report = WeaponReport(notes=len(notes))
    by_slug = {_key(n.slug): n for n in notes}
    used: set[str] = set()
    out = []
    for rec in records:
        note = by_slug.get(_key(rec["id"].rsplit(":", 1)[-1])) if rec.get("type") == "equipment" else None
        if note is None:
            out.append(rec)
            continue
        used.add(note.slug)
        before = rec
        fields = weapon_fields(note.stats)
        if fields and not (rec.get("fields") or {}).get("group"):
            rec = with_weapon_stats(rec, fields)
            report.stats_added += 1
        book_page = note.book_page
        if book_page and f"Pathfinder {book_page[0]}" == rec.get("book"):
            if not rec.get("page"):
                rec = {**rec, "page": book_page[1]}
                report.page_added += 1
        elif book_page:
            report.other_book.append(f"{rec['name']} ({book_page[0]}; entry: {rec.get('book')})")
        if rec is not before:
            rec = with_source(rec, {"repo": REPO, "commit": note.commit, "path": note.path})
        out.append(rec)
    report.unused = sorted(n.slug for n in notes if n.slug not in used)
    return out, report


def _key(slug: str) -> str:
    return slug.replace("-", "")
