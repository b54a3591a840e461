"""Printed page numbers of conditions, actions, feats, spells and items from saved Archives of Nethys pages.

Why: the vault the bundled entries come from keeps their book but not their page, so a hover or an answer
could not say "Player Core p. 444". The public repository MihanEntalpo/pathfinder-2-ui keeps an offline copy
of Archives of Nethys pages (``docs/aonprd/Conditions.aspx-ID=76.htm``, ``Actions.aspx-ID=2395.htm``,
``Feats.aspx-ID=4387.htm``, ``Spells.aspx-ID=1436.htm``, ``Equipment.aspx-ID=2810.htm``, list pages such as
``Activities.aspx-Category=1.htm`` or ``Archetypes.aspx-ID=177.htm``), each entry with its title and its
source line (``<b>Source</b> <a ...><i>Player Core pg. 444</i></a>``). This module reads those two things
(from a clone, or from the transcription of them kept in ``ingest/data/aon-transcribed/pages.tsv``), matches
a page to the corpus entry of the same type and name, and sets ``page`` when the page's book is the entry's
book (``Player Core`` for ``Pathfinder Player Core``). Nothing is written by hand: every page is a source line.
"""

from __future__ import annotations

import csv
import html
import re
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gmprep.ingest.creature_speed import with_source

REPO = "MihanEntalpo/pathfinder-2-ui"
PAGES_DIR = "docs/aonprd"
COLUMNS = ("path", "commit", "url", "title", "source")
# Saved pages whose condition and action entries are read in any book: one entry's own page, or a list of them
# (the exploration and downtime activities, the general skill actions); "&Redirected=1" copies duplicate
# another file.
FILE = re.compile(r"^(?:(?:Conditions|Actions)\.aspx-ID=\d+|Activities\.aspx-Category=\d+|Skills\.aspx-ID=\d+&General=true)\.htm$")
# Every other saved page (rules, classes, archetypes, feat, spell and item pages) adds its entries of the corpus's
# books only: the site's other books are thousands of rows no entry can use.
BOOKS = ("Player Core", "Player Core 2", "GM Core", "Monster Core")
KINDS = {"Conditions": "condition", "Actions": "action", "Feats": "feat", "Spells": "spell", "Rituals": "spell",
         "Equipment": "equipment"}
# Spell, ritual and item pages do not link their own heading: the page's file names the entry.
OWN_PAGE = re.compile(r"^(Spells|Rituals|Equipment)\.aspx-ID=(\d+)\.htm$")
HEADING = re.compile(r'<h([123]) class="title">(.*?)</h\1>', re.S)
LEVEL = re.compile(r'<span style="margin-left:auto[^"]*">.*?</span>', re.S)  # "Feat 1", "Spell 2", "Item 10"
SOURCE = re.compile(r"<b>Source</b>\s*(.*?)(?:<br|<hr)", re.S)
ITALIC = re.compile(r"<i>(.*?)</i>", re.S)
URL = re.compile(r'tppabs="(https://2e\.aonprd\.com/(Conditions|Actions|Feats)\.aspx\?ID=\d+)"')
ANY_URL = re.compile(r"^https://2e\.aonprd\.com/(\w+)\.aspx\?ID=\d+$")
BOOK_PAGE = re.compile(r"^(.+?) pg\. (\d+(?:[-–]\d+)?)$")


class PrintedSource:
    """A saved page whose ``source`` is its printed source line ("Player Core pg. 273")."""

    source: str

    @property
    def book_page(self) -> tuple[str, str] | None:
        """(book, page) of the source line, or None when it has no page."""
        m = BOOK_PAGE.match(self.source)
        return (m.group(1), m.group(2)) if m else None
GLYPH = re.compile(r"\s*\[(?:one-action|two-actions|three-actions|reaction|free-action)\]\s*$")



def with_printed_page(rec: dict, page: PrintedSource, own: bool, report) -> dict:
    """``rec`` with ``page``'s printed page when the saved page is the entry's own (``own``: not the page of a
    variant's parent) and its book is the entry's; a page of another book is only reported
    (``report.other_book``), an entry's existing page kept. ``report`` counts ``page_added``."""
    book_page = page.book_page if own else None
    if book_page and f"Pathfinder {book_page[0]}" == rec.get("book"):
        if not rec.get("page"):
            rec = {**rec, "page": book_page[1]}
            report.page_added += 1
    elif book_page:
        report.other_book.append(f"{rec['name']} ({page.source}; entry: {rec.get('book')})")
    return rec

@dataclass(frozen=True)
class AonPage(PrintedSource):
    """One saved page's title and first source line, with where it was read."""

    kind: str  # corpus type: "condition", "action", "feat", "spell" or "equipment"
    title: str  # the h1 text as shown, tags removed ("Demoralize [one-action]")
    source: str  # the first source line as shown ("Player Core pg. 240")
    url: str
    path: str
    commit: str

    @property
    def name(self) -> str:
        return GLYPH.sub("", self.title)


@dataclass
class PageReport:
    """What ``add_pages`` changed and what it could not match."""

    pages: int = 0
    page_added: int = 0
    other_book: list[str] = field(default_factory=list)  # matched, but the page's book is not the entry's
    unused: list[str] = field(default_factory=list)  # saved pages no corpus entry matched
    unmatched: list[str] = field(default_factory=list)  # conditions and actions still without a page


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


def parse_aon_page(text: str, path: str, commit: str) -> list[AonPage]:
    """Each entry heading of a saved page with the first source line under it: a heading that links to its own
    ``Conditions.aspx?ID=``/``Actions.aspx?ID=``/``Feats.aspx?ID=`` page, and the title of a spell, ritual or
    item's own page. Outside FILE's pages, only entries of BOOKS."""
    name = Path(path).name
    listed = bool(FILE.match(name))
    own = OWN_PAGE.match(name)
    headings = list(HEADING.finditer(text))
    out = []
    own_title = None  # the own page's entry, whose variants ("Lion's Armor (Greater)") follow in h2 headings
    for i, heading in enumerate(headings):
        url = URL.search(heading.group(2))
        title = _text(LEVEL.sub("", heading.group(2)))
        if url:
            kind, address = KINDS[url.group(2)], url.group(1)
        elif own and (own_title is None and heading.group(1) == "1"
                      or own_title is not None and title.startswith(f"{own_title} (")):
            kind, address = KINDS[own.group(1)], f"https://2e.aonprd.com/{own.group(1)}.aspx?ID={own.group(2)}"
        else:
            continue  # the site's index headings, skill pages' own headings, an item page's other sections
        end = headings[i + 1].start() if i + 1 < len(headings) else len(text)
        source = SOURCE.search(text, heading.end(), end)
        books = ITALIC.findall(source.group(1)) if source else []
        if not books:
            continue
        page = AonPage(kind, title, _text(books[0]), address, path, commit)
        if not url and own_title is None:
            own_title = GLYPH.sub("", title)
        if listed or (page.book_page and page.book_page[0] in BOOKS):
            out.append(page)
    return out


def read_clone(clone: Path) -> list[AonPage]:
    """Every saved page of a MihanEntalpo/pathfinder-2-ui clone (bare or not), read with git at HEAD; each
    row carries the commit that last changed the pages' folder."""
    commit = subprocess.run(["git", "-C", str(clone), "log", "-1", "--format=%H", "HEAD", "--", PAGES_DIR],
                            capture_output=True, text=True, check=True).stdout.strip()
    pages = []
    for path, text in saved_pages(clone, lambda name: name.endswith(".htm") and "Redirect" not in name):
        pages += parse_aon_page(text, path, commit)
    return pages


def saved_pages(clone: Path, wanted: Callable[[str], bool]) -> Iterator[tuple[str, str]]:
    """``(path, text)`` of each file under PAGES_DIR at HEAD whose name ``wanted`` accepts, sorted by path;
    read through one ``git cat-file --batch`` (thousands of files: one git process each is minutes)."""
    listing = subprocess.run(["git", "-C", str(clone), "ls-tree", "-r", "HEAD", PAGES_DIR], capture_output=True,
                             text=True, check=True).stdout
    blobs = sorted((line.split("\t", 1)[1], line.split()[2]) for line in listing.splitlines()
                   if line.split()[1] == "blob" and wanted(Path(line.split("\t", 1)[1]).name))
    with subprocess.Popen(["git", "-C", str(clone), "cat-file", "--batch"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) as git:
        assert git.stdin is not None and git.stdout is not None
        for path, sha in blobs:
            git.stdin.write(f"{sha}\n".encode())
            git.stdin.flush()
            size = int(git.stdout.readline().split()[2])
            data = git.stdout.read(size)
            git.stdout.read(1)  # the newline after each object
            yield path, data.decode("utf-8", "replace")
        git.stdin.close()


def read_transcription(tsv: Path) -> list[AonPage]:
    """The transcribed rows (COLUMNS; ``path`` relative to the repository root)."""
    with tsv.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [AonPage(_kind(r["url"]), r["title"], r["source"], r["url"], r["path"], r["commit"]) for r in rows]


def _kind(url: str) -> str:
    """The corpus type from the entry's Archives of Nethys address (``Feats.aspx?ID=4387``: ``feat``)."""
    m = ANY_URL.match(url)
    if not m or m.group(1) not in KINDS:
        raise ValueError(f"not a condition, action, feat, spell or item page: {url}")
    return KINDS[m.group(1)]


def write_transcription(pages: list[AonPage], tsv: Path) -> None:
    """The rows ``read_transcription`` reads, sorted by path (a rerun on the same clone is byte-identical)."""
    tsv.parent.mkdir(parents=True, exist_ok=True)
    with tsv.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
        w.writerow(COLUMNS)
        for p in sorted(pages, key=lambda p: (p.path, p.url)):
            w.writerow([p.path, p.commit, p.url, p.title, p.source])


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", name.lower()).strip()


def add_pages(records: Iterable[dict], pages: list[AonPage]) -> tuple[list[dict], PageReport]:
    """Conditions, actions, feats, spells and items whose name is a saved page's title (same kind) gain its
    page when the page's book is the entry's; entries with a page keep it. ``unmatched`` lists the conditions
    and actions still without one (the other types are counted by the caller)."""
    report = PageReport(pages=len(pages))
    by_key: dict[tuple[str, str], list[AonPage]] = {}
    for p in sorted(pages, key=lambda p: (p.path, p.url)):
        by_key.setdefault((p.kind, _key(p.name)), []).append(p)
    used: set[tuple[str, str]] = set()
    out = []
    for rec in records:
        kind = str(rec.get("type") or "")
        found = by_key.get((kind, _key(rec.get("name") or "")), []) if kind in KINDS.values() else []
        if found:
            used.add((kind, _key(rec["name"])))
            # a name can have a legacy and a remaster page (Pursue a Lead); the entry's book decides
            same = [p for p in found if p.book_page and f"Pathfinder {p.book_page[0]}" == rec.get("book")]
            if not same:
                report.other_book.append(f"{rec['name']} ({found[0].source}; entry: {rec.get('book')})")
            elif not rec.get("page"):
                page = same[0]
                rec = {**rec, "page": page.book_page[1] if page.book_page else None}
                rec = with_source(rec, {"repo": REPO, "commit": page.commit, "path": page.path})
                report.page_added += 1
        if kind in ("condition", "action") and not rec.get("page"):
            report.unmatched.append(f"{kind}: {rec['name']} ({rec.get('book')})")
        out.append(rec)
    report.unused = sorted({f"{p.kind}: {p.title} ({p.source})" for p in pages
                            if (p.kind, _key(p.name)) not in used})
    return out, report
