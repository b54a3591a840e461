"""Specific magic weapons' base weapon and its statistics from saved Archives of Nethys item pages.

Why: the base weapons carry their damage die, hands, group and category (``ingest/weapon_stats.py``), but a
specific magic weapon (GM Core's Dagger of Venom, a +1 striking *dagger*) had none: a hover on it could not say
what die it rolls. Each specific weapon's saved Archives of Nethys page in MihanEntalpo/pathfinder-2-ui
(``docs/aonprd/Equipment.aspx-ID=N.htm``) prints its base (``<b>Base Weapon</b> <u><a ...>Dagger</a></u>``).
This module reads those lines (from a clone, or from ``ingest/data/aon-transcribed/weapons.tsv``), matches a page
to the corpus equipment of its name and gives the entry ``base_weapon`` and its base's statistics as the base
weapon's note prints them (damage, hands, range, reload, category, group; not the base's price, bulk or level,
which are the item's own), the ``**Base Weapon** dagger; **Damage** 1d4 piercing; ...`` stat text after its
Price line, and its page when missing. Nothing is written by hand: every value is a printed line.

Items whose page prints no base line, or that have no saved page, find their base in what is printed too: a
held item's first paragraph names it as a magic weapon (Tiger Fork "is a *+1 trident*", Blackaxe "a *+4
greater corrosive major striking obsidian greataxe*": the formula's last words that are a base weapon's name),
else a rule of the books gives the items of one trait a base (GM Core's *Attacking with a Staff*: "Staves are
also staff weapons", read from the rules section in ``ingest/data/aon-transcribed/rules.jsonl.gz``). A base the
vault has no note of (the fist) takes the statistics of its saved weapon page (``ingest/aon_weapons.py``).
"""

from __future__ import annotations

import csv
import re
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gmprep.ingest.aon_pages import PAGES_DIR, REPO, PrintedSource, saved_pages, with_printed_page
from gmprep.ingest.aon_rules import RulesSection
from gmprep.ingest.armor_stats import ITALIC, ITEM_FILE, ITEM_TITLE, LEVEL, SOURCE, VARIANT, _text
from gmprep.ingest.creature_speed import with_source
from gmprep.ingest.weapon_stats import WeaponNote, stat_line, weapon_fields

COLUMNS = ("path", "commit", "url", "name", "source", "base")
BASE = re.compile(r"<b>Base Weapon</b>\s*(?:<u>)?<a [^>]*>(.*?)</a>", re.S)
PRICE = re.compile(r"^\*\*Price\*\*.*$", re.M)
FORMULA = re.compile(r"\*(\+\d[^*\n]*)\*")  # a magic weapon as the books write one: "*+1 striking dagger*"
# the trait whose items a rules section makes weapons, and that section (book, title); its text names the base
TRAIT_RULES = {"staff": ("GM Core", "Attacking with a Staff")}
ALSO = re.compile(r"\bare also (.+?) weapons\b")  # "Staves are also staff weapons."


@dataclass(frozen=True)
class WeaponItemPage(PrintedSource):
    """One saved specific-weapon page's name, source line and base weapon as printed, with where it was read."""

    name: str
    source: str  # "GM Core pg. 227"
    base: str  # "Dagger"
    url: str
    path: str
    commit: str


@dataclass
class MagicWeaponReport:
    """What ``add_magic_weapon_stats`` changed and what it could not match."""

    pages: int = 0
    stats_added: int = 0
    page_added: int = 0
    other_book: list[str] = field(default_factory=list)  # matched, but the page's book is not the entry's
    unused: list[str] = field(default_factory=list)  # saved pages no corpus entry matched
    no_base: list[str] = field(default_factory=list)  # matched, but no base weapon note of the printed base
    from_text: list[str] = field(default_factory=list)  # base named by the item's own magic weapon formula
    from_rule: list[str] = field(default_factory=list)  # base given by a trait's rule (TRAIT_RULES)


@dataclass(frozen=True)
class TraitRule:
    """A rules section that makes the items of a trait weapons of one base: GM Core's Attacking with a Staff."""

    trait: str
    base: str  # as the section prints it, lower case: "staff"
    source: dict  # the section's repo, commit, path and url (as its rule entry cites them)


def trait_rules(sections: list[RulesSection]) -> list[TraitRule]:
    """TRAIT_RULES' sections found among the transcribed rules sections and whose text names a base
    (``... are also staff weapons``); a trait whose section is missing gets no rule (and its items no base)."""
    out = []
    for trait, (book, title) in TRAIT_RULES.items():
        section = next((s for s in sections if (s.book, s.title) == (book, title)), None)
        m = ALSO.search(section.text) if section else None
        if section and m:
            out.append(TraitRule(trait, m.group(1).lower(), {"repo": REPO, "commit": section.commit,
                                                             "path": section.path, "url": section.url}))
    return out


def base_in_text(rec: dict, notes: dict[str, WeaponNote]) -> str | None:
    """The base weapon a held item's first paragraph names as what it is (``is a *+1 trident*``): the longest
    last words of a magic weapon formula that are a base's name (``hand crossbow`` before ``crossbow``); None for
    an item not held in the hands, an armor or shield (``item_type``), or a paragraph naming no base.
    ``notes`` are keyed by ``_key`` of their slug."""
    fields = rec.get("fields") or {}
    if not str(fields.get("usage", "")).startswith("held") or fields.get("item_type"):
        return None
    text = rec.get("text") or ""
    m = PRICE.search(text)
    first = text[m.end():].strip().split("\n\n")[0] if m else ""
    for formula in FORMULA.finditer(first):
        words = _text(formula.group(1)).lower().split()[1:]  # without the "+1"
        for n in range(len(words), 0, -1):
            name = " ".join(words[-n:])
            if _key(name) in notes:
                return name
    return None


def parse_weapon_item_page(text: str, path: str, commit: str) -> WeaponItemPage | None:
    """A saved ``Equipment.aspx-ID=N`` page's title, first source line and base weapon; None for other files
    and for an item page that prints no base weapon."""
    item = ITEM_FILE.match(Path(path).name)
    title = ITEM_TITLE.search(text) if item else None
    base = BASE.search(text, title.end()) if title else None
    if not item or not title or not base:
        return None
    source = SOURCE.search(text, title.end())
    books = ITALIC.findall(source.group(1)) if source else []
    return WeaponItemPage(_text(LEVEL.sub("", title.group(1))), _text(books[0]) if books else "",
                          _text(base.group(1)), f"https://2e.aonprd.com/Equipment.aspx?ID={item.group(1)}", path,
                          commit)


def read_clone(clone: Path) -> list[WeaponItemPage]:
    """Every saved item page with a base weapon of a MihanEntalpo/pathfinder-2-ui clone (bare or not), read with
    git at HEAD; each row carries the commit that last changed the pages' folder."""
    commit = subprocess.run(["git", "-C", str(clone), "log", "-1", "--format=%H", "HEAD", "--", PAGES_DIR],
                            capture_output=True, text=True, check=True).stdout.strip()
    pages = []
    for path, text in saved_pages(clone, lambda name: bool(ITEM_FILE.match(name))):
        if "<b>Base Weapon</b>" in text:  # most item pages are not weapons: skip the parse
            page = parse_weapon_item_page(text, path, commit)
            if page:
                pages.append(page)
    return pages


def read_transcription(tsv: Path) -> list[WeaponItemPage]:
    """The transcribed rows (COLUMNS; ``path`` relative to the repository root)."""
    with tsv.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [WeaponItemPage(r["name"], r["source"], r["base"], r["url"], r["path"], r["commit"]) for r in rows]


def write_transcription(pages: list[WeaponItemPage], tsv: Path) -> None:
    """The rows ``read_transcription`` reads, sorted by path (a rerun on the same clone is byte-identical)."""
    tsv.parent.mkdir(parents=True, exist_ok=True)
    with tsv.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
        w.writerow(COLUMNS)
        for p in sorted(pages, key=lambda p: p.path):
            w.writerow([p.path, p.commit, p.url, p.name, p.source, p.base])


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", name.lower())


def specific_weapon_fields(base: str, note: WeaponNote) -> dict:
    """The base weapon's statistics (``weapon_fields``: damage, hands, range, reload, category, group) and
    ``base_weapon`` in lower case; never the base's price, bulk or level."""
    return {"base_weapon": base.lower(), **weapon_fields(note.stats)}


def with_specific_weapon_stats(rec: dict, fields: dict) -> dict:
    """The entry with the fields it lacks, and ``**Base Weapon** x; **Damage** ...`` after its Price line."""
    have = rec.get("fields") or {}
    rec = {**rec, "fields": {**have, **{k: v for k, v in fields.items() if k not in have}}}
    text = rec.get("text") or ""
    line = f"**Base Weapon** {rec['fields']['base_weapon']}; {stat_line(rec['fields'])}"
    m = re.search(r"^\*\*Price\*\*.*$", text, flags=re.M)
    rec["text"] = f"{text[:m.end()]}; {line}{text[m.end():]}" if m else f"{line}\n\n{text}"
    return rec


def add_magic_weapon_stats(records: Iterable[dict], pages: list[WeaponItemPage], notes: list[WeaponNote],
                           rules: Sequence[TraitRule] = ()) -> tuple[list[dict], MagicWeaponReport]:
    """Equipment whose name is a saved item page's (case and punctuation aside, or with a variant:
    ``Dagger of Venom (Greater)``) gains the base weapon's statistics from its note (matched by the note's slug,
    ``composite-shortbow`` for ``Composite Shortbow``); entries with a ``damage`` or ``base_weapon`` keep theirs.
    The page is set when the page is the entry's own and its book is the entry's (entries with a page keep it).
    Equipment still without either takes the base its own first paragraph names (``base_in_text``), else the
    base of a trait it has (``rules``)."""
    report = MagicWeaponReport(pages=len(pages))
    by_slug = {_key(n.slug): n for n in notes}
    items = {_key(p.name): p for p in sorted(pages, key=lambda p: p.path)}
    used: set[str] = set()
    out = []
    for rec in records:
        name = rec.get("name") or "" if rec.get("type") == "equipment" else ""
        page = items.get(_key(name)) or items.get(_key(VARIANT.sub("", name))) if name else None
        if page is not None:
            used.add(_key(page.name))
            rec = _with_page_base(rec, page, by_slug, _key(page.name) == _key(name), report)
        if name and "damage" not in rec["fields"] and "base_weapon" not in rec["fields"]:
            rec = _with_printed_base(rec, by_slug, rules, report)
        out.append(rec)
    report.unused = sorted(f"{p.name} ({p.source})" for p in pages if _key(p.name) not in used)
    return out, report


def _with_page_base(rec: dict, page: WeaponItemPage, by_slug: dict[str, WeaponNote], own: bool,
                    report: MagicWeaponReport) -> dict:
    """The entry with its saved page's base weapon statistics and page (``own``: the page is the entry's)."""
    before = rec
    note = by_slug.get(_key(page.base))
    have = rec.get("fields") or {}
    if note is None:
        report.no_base.append(f"{rec['name']} (base {page.base})")
    elif "damage" not in have and "base_weapon" not in have:
        rec = with_specific_weapon_stats(rec, specific_weapon_fields(page.base, note))
        report.stats_added += 1
    rec = with_printed_page(rec, page, own, report)
    if rec is not before:
        # the page first: scripts/add_pages.py adds the same one, so either order gives one list
        rec = with_source(rec, {"repo": REPO, "commit": page.commit, "path": page.path})
        if "base_weapon" in rec["fields"] and note is not None:
            rec = with_source(rec, _note_source(note))
    return rec


def _with_printed_base(rec: dict, by_slug: dict[str, WeaponNote], rules: Sequence[TraitRule],
                       report: MagicWeaponReport) -> dict:
    """The entry with the base its text names, else its trait's rule gives, and that base's statistics; the
    rule's section and the base's note become sources (the text is the entry's own source already)."""
    base = base_in_text(rec, by_slug)
    rule = None if base else next((r for r in rules if r.trait in (rec.get("traits") or [])), None)
    base = base or (rule.base if rule else None)
    note = by_slug.get(_key(base)) if base else None
    if note is None:
        return rec
    rec = with_specific_weapon_stats(rec, specific_weapon_fields(base or "", note))
    (report.from_rule if rule else report.from_text).append(rec["name"])
    report.stats_added += 1
    if rule:
        rec = with_source(rec, rule.source)
    return with_source(rec, _note_source(note))


def _note_source(note: WeaponNote) -> dict:
    return {"repo": note.repo, "commit": note.commit, "path": note.path}
