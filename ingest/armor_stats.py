"""Armor and shield statistics and pages from saved Archives of Nethys pages.

Why: the vault the bundled equipment comes from keeps an armor's price, bulk and traits but not its AC
bonus, Dex cap, penalties, Strength, category or group, nor a shield's Hardness and HP, and no page; a hover
on "full plate" could not say what it gives. The public repository MihanEntalpo/pathfinder-2-ui keeps an
offline copy of Archives of Nethys pages, among them one per base armor (``docs/aonprd/Armor.aspx-ID=50.htm``)
and base shield (``Shields.aspx-ID=19.htm``): the name, the source line (``Player Core pg. 273``) and the
stat block (``<b>AC Bonus</b> +6; <b>Dex Cap</b> +0; ... <b>Group</b> Plate``, shields ``<b>Hardness</b> 5;
<b>HP (BT)</b> 20 (10)``). This module reads those (from a clone, or from the transcription of them kept in
``ingest/data/aon-transcribed/armor.tsv``), matches a page to the corpus equipment of the same name and adds
the fields the Foundry build gives an armor (``ac_bonus``, ``dex_cap``, ``check_penalty``, ``speed_penalty``,
``strength``, ``category``, ``group``, ``item_type``; shields ``hardness``, ``hp``, ``bt``), the same stat text
after the ``**Price**`` line, and ``page`` when the page's book is the entry's. A specific armor or shield
(``Equipment.aspx-ID=2810.htm``, Tideplate: ``<b>Base Armor</b> Full Plate``) gets its base's statistics and
``base_armor``/``base_shield``; a shield's Hardness, HP and BT are its own, as its text prints them
(``steel shield (Hardness 6, HP 36, BT 18)``), not its base's. Nothing is written by hand: every value is a
printed stat.
"""

from __future__ import annotations

import csv
import html
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gmprep.ingest.aon_pages import PAGES_DIR, REPO, PrintedSource, saved_pages, with_printed_page
from gmprep.ingest.creature_speed import with_source

FILE = re.compile(r"^(?:Armor|Shields)\.aspx-ID=\d+\.htm$")
ITEM_FILE = re.compile(r"^Equipment\.aspx-ID=(\d+)\.htm$")  # specific items: only those with a base armor or shield
# printed label -> transcription column
LABELS = {"Price": "price", "AC Bonus": "ac_bonus", "Dex Cap": "dex_cap", "Check Penalty": "check_penalty",
          "Speed Penalty": "speed_penalty", "Strength": "strength", "Bulk": "bulk", "Category": "category",
          "Group": "group", "Hardness": "hardness", "HP (BT)": "hp_bt"}
COLUMNS = ("path", "commit", "url", "name", "source", *LABELS.values(), "base")
TITLE = re.compile(r'<h1 class="title">.*?<a href="(?:Armor|Shields)\.aspx-ID=\d+\.htm" '
                   r'tppabs="(https://2e\.aonprd\.com/(?:Armor|Shields)\.aspx\?ID=\d+)">(.*?)</a>.*?</h1>', re.S)
SOURCE = re.compile(r"<b>Source</b>\s*(.*?)<br />(.*?)<hr", re.S)
ITALIC = re.compile(r"<i>(.*?)</i>", re.S)
ITEM_TITLE = re.compile(r'<h1 class="title">(.*?)</h1>', re.S)
LEVEL = re.compile(r'<span style="margin-left:auto[^"]*">.*?</span>', re.S)  # "Item 12+"
BASE = re.compile(r"<b>Base (?:Armor|Shield)</b>\s*(?:<u>)?<a [^>]*>(.*?)</a>", re.S)
# a specific shield's own durability in its text: "(Hardness 6, HP 36, BT 18)", "Hardness 8, HP 64, and BT 32",
# "(Hardness 17, HP 136)"
DURABILITY = re.compile(r"Hardness (\d+), HP (\d+)(?:,? (?:and )?BT (\d+))?")
STAT = re.compile(r"<b>([^<]+)</b>\s*(.*?)(?=<b>|$)", re.S)
SUP = re.compile(r"<sup>.*?</sup>", re.S)  # footnote marks ("+2 (+4<sup>2</sup>)")
NUMBER = re.compile(r"^([+-]?\d+)")
NONE = "—"
VARIANT = re.compile(r" \([^)]*\)$")  # "Sturdy Shield (Minor)" is printed under "Sturdy Shield"


@dataclass(frozen=True)
class ArmorPage(PrintedSource):
    """One saved armor or shield page's name, source line and stats as printed, with where it was read."""

    name: str
    source: str  # "Player Core pg. 273"
    stats: dict[str, str]  # LABELS' columns -> the printed value ("" when the page has no such stat)
    url: str
    path: str
    commit: str
    base: str = ""  # a specific item's base armor or shield as printed ("Full Plate"); "" on a base's own page


@dataclass
class ArmorReport:
    """What ``add_armor_stats`` changed and what it could not match."""

    pages: int = 0
    stats_added: int = 0
    page_added: int = 0
    other_book: list[str] = field(default_factory=list)  # matched, but the page's book is not the entry's
    unused: list[str] = field(default_factory=list)  # saved pages no corpus entry matched


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", SUP.sub("", fragment)))).strip()


def parse_armor_page(text: str, path: str, commit: str) -> ArmorPage | None:
    """The name, first source line and stat block of a saved ``Armor.aspx-ID=N`` or ``Shields.aspx-ID=N``
    page; None for other files and for a page without a stat block."""
    item = ITEM_FILE.match(Path(path).name)
    if item:
        return _parse_item_page(text, path, commit, item.group(1))
    if not FILE.match(Path(path).name):
        return None
    title = TITLE.search(text)
    source = SOURCE.search(text, title.end()) if title else None
    if not title or not source:
        return None
    books = ITALIC.findall(source.group(1))
    stats = {col: "" for col in LABELS.values()}
    for label, value in STAT.findall(source.group(2)):
        col = LABELS.get(_text(label))
        if col:
            stats[col] = _text(value).rstrip(";").strip()
    if not stats["ac_bonus"]:
        return None
    return ArmorPage(_text(title.group(2)), _text(books[0]) if books else "", stats, title.group(1), path, commit)


def _parse_item_page(text: str, path: str, commit: str, item_id: str) -> ArmorPage | None:
    """A specific item's own page (``Equipment.aspx-ID=N``): its title, source line and base armor or shield;
    None when it prints no base."""
    title = ITEM_TITLE.search(text)
    base = BASE.search(text, title.end()) if title else None
    source = SOURCE.search(text, title.end()) if title else None
    if not title or not base:
        return None
    books = ITALIC.findall(source.group(1)) if source else []
    return ArmorPage(_text(LEVEL.sub("", title.group(1))), _text(books[0]) if books else "",
                     {col: "" for col in LABELS.values()}, f"https://2e.aonprd.com/Equipment.aspx?ID={item_id}",
                     path, commit, _text(base.group(1)))


def read_clone(clone: Path) -> list[ArmorPage]:
    """Every saved armor and shield page, and item page with a base armor or shield, of a
    MihanEntalpo/pathfinder-2-ui clone (bare or not), read with git at HEAD; each row carries the commit that
    last changed the pages' folder."""
    commit = subprocess.run(["git", "-C", str(clone), "log", "-1", "--format=%H", "HEAD", "--", PAGES_DIR],
                            capture_output=True, text=True, check=True).stdout.strip()
    pages = []
    for path, text in saved_pages(clone, lambda name: bool(FILE.match(name) or ITEM_FILE.match(name))):
        page = parse_armor_page(text, path, commit)
        if page:
            pages.append(page)
    return pages


def read_transcription(tsv: Path) -> list[ArmorPage]:
    """The transcribed rows (COLUMNS; ``path`` relative to the repository root)."""
    with tsv.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [ArmorPage(r["name"], r["source"], {c: r[c] for c in LABELS.values()}, r["url"], r["path"], r["commit"],
                      r["base"]) for r in rows]


def write_transcription(pages: list[ArmorPage], tsv: Path) -> None:
    """The rows ``read_transcription`` reads, sorted by path (a rerun on the same clone is byte-identical)."""
    tsv.parent.mkdir(parents=True, exist_ok=True)
    with tsv.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
        w.writerow(COLUMNS)
        for p in sorted(pages, key=lambda p: p.path):
            w.writerow([p.path, p.commit, p.url, p.name, p.source, *(p.stats[c] for c in LABELS.values()), p.base])


def _number(value: str) -> int | None:
    """``+3`` -> 3, ``-5 ft.`` -> -5, ``—`` -> None."""
    m = NUMBER.match(value.strip())
    return int(m.group(1)) if m else None


def armor_fields(stats: dict[str, str]) -> dict:
    """The printed stats as the Foundry build's fields: numbers for bonuses and penalties (a ``—`` penalty is 0,
    as the packs store it; a ``—`` Dex cap or Strength is left out), lower-case category and group; shields
    (a Hardness) ``hardness``, ``hp``, ``bt`` and ``item_type`` ``shield``, armor ``item_type`` ``armor``."""
    out: dict = {"ac_bonus": _number(stats.get("ac_bonus", ""))}
    raised = re.search(r"\(([+-]\d+)\)", stats.get("ac_bonus", ""))  # the tower shield's "+2 (+4)"
    if raised:
        out["ac_bonus_max"] = int(raised.group(1))
    if stats.get("hardness"):
        hp_bt = re.match(r"^(\d+) \((\d+)\)$", stats.get("hp_bt", ""))
        out.update({"speed_penalty": _number(stats.get("speed_penalty", "")) or 0,
                    "hardness": _number(stats["hardness"])})
        if hp_bt:
            out.update({"hp": int(hp_bt.group(1)), "bt": int(hp_bt.group(2))})
        out["item_type"] = "shield"
        return {k: v for k, v in out.items() if v is not None}
    out.update({"dex_cap": _number(stats.get("dex_cap", "")),
                "check_penalty": _number(stats.get("check_penalty", "")) or 0,
                "speed_penalty": _number(stats.get("speed_penalty", "")) or 0,
                "strength": _number(stats.get("strength", ""))})
    for key in ("category", "group"):
        value = stats.get(key, "")
        out[key] = value.lower() if value and value != NONE else None
    out["item_type"] = "armor"
    return {k: v for k, v in out.items() if v is not None}


def _signed(n: int | None) -> str:
    return NONE if n is None else f"+{n}" if n >= 0 else str(n)


def _penalty(n: int | None, unit: str = "") -> str:
    return f"{n}{unit}" if n else NONE


def armor_stat_line(fields: dict) -> str:
    """``**AC Bonus** +6; **Dex Cap** +0; **Check Penalty** -3; **Speed Penalty** -10 ft.; **Strength** +4;
    **Category** heavy; **Group** plate`` in the book's order (the Foundry build writes the same)."""
    ac = _signed(fields.get("ac_bonus"))
    if fields.get("ac_bonus_max") is not None:
        ac += f" ({_signed(fields['ac_bonus_max'])})"
    base = [f"**Base {kind.title()}** {fields[f'base_{kind}']}" for kind in ("armor", "shield")
            if fields.get(f"base_{kind}")]
    if fields.get("item_type") == "shield":
        parts = [*base, f"**AC Bonus** {ac}", f"**Speed Penalty** {_penalty(fields.get('speed_penalty'), ' ft.')}"]
        if "hardness" in fields:
            parts.append(f"**Hardness** {fields['hardness']}")
        if "hp" in fields:
            parts.append(f"**HP (BT)** {fields['hp']} ({fields.get('bt', NONE)})" if "bt" in fields
                         else f"**HP** {fields['hp']}")
        return "; ".join(parts)
    return "; ".join([
        *base, f"**AC Bonus** {ac}", f"**Dex Cap** {_signed(fields.get('dex_cap'))}",
        f"**Check Penalty** {_penalty(fields.get('check_penalty'))}",
        f"**Speed Penalty** {_penalty(fields.get('speed_penalty'), ' ft.')}",
        f"**Strength** {_signed(fields.get('strength'))}",
        f"**Category** {fields.get('category') or NONE}", f"**Group** {fields.get('group') or NONE}",
    ])


def with_armor_stats(rec: dict, fields: dict) -> dict:
    """The entry with the fields it lacks and their stat text appended to its ``**Price**`` line."""
    have = rec.get("fields") or {}
    rec = {**rec, "fields": {**have, **{k: v for k, v in fields.items() if k not in have}}}
    text = rec.get("text") or ""
    line = armor_stat_line(rec["fields"])
    m = re.search(r"^\*\*Price\*\*.*$", text, flags=re.M)
    rec["text"] = f"{text[:m.end()]}; {line}{text[m.end():]}" if m else f"{line}\n\n{text}"
    return rec


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", name.lower())


def specific_fields(base: ArmorPage, text: str) -> dict:
    """A specific armor's or shield's fields: its base's statistics and name (``base_armor: full plate``); a
    shield's Hardness, HP and BT are those its own text prints, if any, not the base's."""
    fields = armor_fields(base.stats)
    if fields["item_type"] != "shield":
        return {**fields, "base_armor": base.name.lower()}
    fields = {k: v for k, v in fields.items() if k not in ("hardness", "hp", "bt")}
    m = DURABILITY.search(text)
    if m:
        fields.update({k: int(v) for k, v in zip(("hardness", "hp", "bt"), m.groups(), strict=True) if v})
    return {**fields, "base_shield": base.name.lower()}


def add_armor_stats(records: Iterable[dict], pages: list[ArmorPage]) -> tuple[list[dict], ArmorReport]:
    """Equipment whose name is a saved armor or shield page's (case and punctuation aside) gains its stats;
    equipment whose name is a specific item page's (or is it with a variant: ``Sturdy Shield (Minor)``) gains
    its base's (``specific_fields``). Entries with an ``ac_bonus`` keep theirs; the page is set when the page is
    the entry's own (not a variant's parent) and its book, ``Player Core``, is the entry's, ``Pathfinder Player
    Core`` (entries with a page keep it)."""
    report = ArmorReport(pages=len(pages))
    ordered = sorted(pages, key=lambda p: p.path)
    bases = {_key(p.name): p for p in ordered if not p.base}
    items = {_key(p.name): p for p in ordered if p.base and _key(p.base) in bases}
    used: set[str] = set()
    out = []
    for rec in records:
        name = rec.get("name") or "" if rec.get("type") == "equipment" else ""
        page = bases.get(_key(name)) or items.get(_key(name)) or items.get(_key(VARIANT.sub("", name)))
        if not name or page is None:
            out.append(rec)
            continue
        used.add(_key(page.name))
        before = rec
        if "ac_bonus" not in (rec.get("fields") or {}):
            fields = (specific_fields(bases[_key(page.base)], rec.get("text") or "") if page.base
                      else armor_fields(page.stats))
            rec = with_armor_stats(rec, fields)
            report.stats_added += 1
        # a variant ("Sturdy Shield (Minor)") is printed on a page of its own: the parent's is not its page
        rec = with_printed_page(rec, page, _key(page.name) == _key(name), report)
        if rec is not before:
            rec = with_source(rec, {"repo": REPO, "commit": page.commit, "path": page.path})
        out.append(rec)
    report.unused = sorted(f"{p.name} ({p.source})" for p in pages if _key(p.name) not in used)
    return out, report
