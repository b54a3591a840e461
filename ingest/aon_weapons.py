"""Base weapon statistics from saved Archives of Nethys weapon pages, for bases the vault has no note of.

Why: a specific magic weapon takes its base's statistics from the kmdavis/xuartlek weapon notes
(``ingest/weapon_stats.py``), but the vault has no note for the fist, the unarmed attack that Handwraps of
Mighty Blows prints as its base (``Base Weapon Fist``, a link to ``Weapons.aspx?ID=356``). MihanEntalpo/
pathfinder-2-ui keeps that page, as it keeps the other base weapon pages (``docs/aonprd/Weapons.aspx-ID=N.htm``),
with the stat block the book prints (``Price —; Damage 1d4 B; Bulk —; Hands 1; Type Melee; Category Unarmed;
Group Brawling``, source ``Player Core pg. 277``). This module reads those pages (from a clone, or from
``ingest/data/aon-transcribed/base-weapons.tsv``) as ``WeaponNote`` rows in the notes' own words, so one owner
(``weapon_fields``) turns both into fields. Nothing is written by hand: every value is a printed line.
"""

from __future__ import annotations

import csv
import re
import subprocess
from pathlib import Path

from gmprep.ingest.aon_pages import BOOK_PAGE, BOOKS, PAGES_DIR, REPO, saved_pages
from gmprep.ingest.armor_stats import ITALIC, SOURCE, STAT, _text
from gmprep.ingest.weapon_stats import COLUMNS as NOTE_COLUMNS
from gmprep.ingest.weapon_stats import WeaponNote

FILE = re.compile(r"^Weapons\.aspx-ID=\d+\.htm$")
TITLE = re.compile(r'<h1 class="title">.*?<a href="Weapons\.aspx-ID=\d+\.htm" '
                   r'tppabs="(https://2e\.aonprd\.com/Weapons\.aspx\?ID=\d+)">(.*?)</a>.*?</h1>', re.S)
LEGACY = 'class="title legacy-content-warning"'  # a pre-Remaster page whose newer version is saved too
STATS = {label.capitalize(): label for label in NOTE_COLUMNS if label != "source"}  # "Damage" -> "damage"
COLUMNS = ("path", "commit", "url", "slug", *NOTE_COLUMNS)  # slug: the name as a note file names it


def slug(name: str) -> str:
    """The note-style slug of a printed weapon name (``Hand Crossbow`` -> ``hand-crossbow``)."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def parse_weapon_page(text: str, path: str, commit: str) -> tuple[WeaponNote, str] | None:
    """A saved ``Weapons.aspx-ID=N`` page's stat block as a note (``stats`` as the vault's bullets would print
    them: ``1d4 B``, ``60 ft.``; ``source`` its source line of a corpus book, ``Player Core pg. 277``) and the
    page's URL; None for other files, a legacy page, a page without a Group, and a weapon of none of the corpus's
    books (only those books' statistics are transcribed, see the transcription's licence)."""
    title = TITLE.search(text) if FILE.match(Path(path).name) and LEGACY not in text else None
    source = SOURCE.search(text, title.end()) if title else None
    if not title or not source:
        return None
    ours = [b for b in map(_text, ITALIC.findall(source.group(1))) if _book(b) in BOOKS]
    if not ours:
        return None
    stats = {col: "" for col in NOTE_COLUMNS}
    for label, value in STAT.findall(source.group(2)):
        col = STATS.get(_text(label))
        if col:
            stats[col] = _text(value).rstrip(";").strip()
    stats["source"] = ours[0]
    if not stats["group"]:
        return None
    return WeaponNote(slug(_text(title.group(2))), stats, path, commit, REPO), title.group(1)


def _book(source: str) -> str:
    m = BOOK_PAGE.match(source)
    return m.group(1) if m else source


def read_clone(clone: Path) -> list[tuple[WeaponNote, str]]:
    """Every saved base weapon page of a MihanEntalpo/pathfinder-2-ui clone (bare or not), read with git at HEAD;
    each row carries the commit that last changed the pages' folder."""
    commit = subprocess.run(["git", "-C", str(clone), "log", "-1", "--format=%H", "HEAD", "--", PAGES_DIR],
                            capture_output=True, text=True, check=True).stdout.strip()
    pages = (parse_weapon_page(text, path, commit) for path, text in saved_pages(clone, lambda n: bool(FILE.match(n))))
    return [p for p in pages if p]


def write_transcription(pages: list[tuple[WeaponNote, str]], tsv: Path) -> None:
    """The rows ``read_transcription`` reads (COLUMNS), sorted by path: a rerun on the same clone is identical."""
    tsv.parent.mkdir(parents=True, exist_ok=True)
    with tsv.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
        w.writerow(COLUMNS)
        for note, url in sorted(pages, key=lambda p: p[0].path):
            w.writerow([note.path, note.commit, url, note.slug, *(note.stats[c] for c in NOTE_COLUMNS)])


def read_transcription(tsv: Path) -> list[tuple[WeaponNote, str]]:
    """The transcribed rows as notes of this repository, with each page's URL."""
    with tsv.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [(WeaponNote(r["slug"], {c: r[c] for c in NOTE_COLUMNS}, r["path"], r["commit"], REPO), r["url"])
            for r in rows]


def missing_bases(notes: list[WeaponNote], pages: list[tuple[WeaponNote, str]]) -> list[WeaponNote]:
    """The pages' notes for weapons no vault note has (the vault's notes stay the one source of a base they
    cover, as they are the base weapon entries' own)."""
    have = {n.slug.replace("-", "") for n in notes}
    return [note for note, _ in pages if note.slug.replace("-", "") not in have]
