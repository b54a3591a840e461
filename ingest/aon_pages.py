"""Printed page numbers of conditions and actions from saved Archives of Nethys pages.

Why: the vault the bundled conditions and actions come from keeps their book but not their page, so a hover
or an answer could not say "Player Core p. 444". The public repository MihanEntalpo/pathfinder-2-ui keeps
an offline copy of Archives of Nethys pages (``docs/aonprd/Conditions.aspx-ID=76.htm``,
``docs/aonprd/Actions.aspx-ID=2395.htm``, ...), each with the entry's title and its source line
(``<b>Source</b> <a ...><i>Player Core pg. 444</i></a>``). This module reads those two things (from a
clone, or from the transcription of them kept in ``ingest/data/aon-transcribed/pages.tsv``), matches a page
to the corpus entry of the same type and name, and sets ``page`` when the page's book is the entry's book
(``Player Core`` for ``Pathfinder Player Core``). Nothing is written by hand: every page is a source line.
"""

from __future__ import annotations

import csv
import html
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gmprep.ingest.creature_speed import with_source

REPO = "MihanEntalpo/pathfinder-2-ui"
PAGES_DIR = "docs/aonprd"
COLUMNS = ("path", "commit", "url", "title", "source")
# The saved file name says which kind of entry it holds; "&Redirected=1" copies duplicate another file.
KINDS = {"Conditions": "condition", "Actions": "action"}
FILE = re.compile(r"^(Conditions|Actions)\.aspx-ID=(\d+)\.htm$")
TITLE = re.compile(r'<h1 class="title">(.*?)</h1>', re.S)
SOURCE = re.compile(r"<b>Source</b>\s*(.*?)(?:<br|<hr)", re.S)
ITALIC = re.compile(r"<i>(.*?)</i>", re.S)
URL = re.compile(r'tppabs="(https://2e\.aonprd\.com/(?:Conditions|Actions)\.aspx\?ID=\d+)"')
BOOK_PAGE = re.compile(r"^(.+?) pg\. (\d+(?:[-–]\d+)?)$")
GLYPH = re.compile(r"\s*\[(?:one-action|two-actions|three-actions|reaction|free-action)\]\s*$")


@dataclass(frozen=True)
class AonPage:
    """One saved page's title and first source line, with where it was read."""

    kind: str  # corpus type: "condition" or "action"
    title: str  # the h1 text as shown, tags removed ("Demoralize [one-action]")
    source: str  # the first source line as shown ("Player Core pg. 240")
    url: str
    path: str
    commit: str

    @property
    def name(self) -> str:
        return GLYPH.sub("", self.title)

    @property
    def book_page(self) -> tuple[str, str] | None:
        m = BOOK_PAGE.match(self.source)
        return (m.group(1), m.group(2)) if m else None


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


def parse_aon_page(text: str, path: str, commit: str) -> AonPage | None:
    """The entry title and first source line of a saved ``Conditions``/``Actions`` page, or None."""
    m = FILE.match(Path(path).name)
    if not m:
        return None
    for title in TITLE.finditer(text):
        url = URL.search(title.group(1))
        if not url or not url.group(1).endswith(f"ID={m.group(2)}"):
            continue  # a heading of the site's menus, not the entry's own
        source = SOURCE.search(text, title.end())
        books = ITALIC.findall(source.group(1)) if source else []
        if not books:
            return None
        return AonPage(KINDS[m.group(1)], _text(title.group(1)), _text(books[0]), url.group(1), path, commit)
    return None


def read_clone(clone: Path) -> list[AonPage]:
    """Every saved condition and action page of a MihanEntalpo/pathfinder-2-ui clone (bare or not), read
    with git at HEAD; each row carries the commit that last changed the pages' folder."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(clone), *args], capture_output=True, text=True,
                              check=True).stdout

    commit = git("log", "-1", "--format=%H", "HEAD", "--", PAGES_DIR).strip()
    pages = []
    for path in sorted(git("ls-tree", "-r", "--name-only", "HEAD", PAGES_DIR).splitlines()):
        if FILE.match(Path(path).name):
            page = parse_aon_page(git("show", f"HEAD:{path}"), path, commit)
            if page:
                pages.append(page)
    return pages


def read_transcription(tsv: Path) -> list[AonPage]:
    """The transcribed rows (COLUMNS; ``path`` relative to the repository root)."""
    with tsv.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    out = []
    for row in rows:
        m = FILE.match(Path(row["path"]).name)
        if m:
            out.append(AonPage(KINDS[m.group(1)], row["title"], row["source"], row["url"], row["path"],
                               row["commit"]))
    return out


def write_transcription(pages: list[AonPage], tsv: Path) -> None:
    """The rows ``read_transcription`` reads, sorted by path (a rerun on the same clone is byte-identical)."""
    tsv.parent.mkdir(parents=True, exist_ok=True)
    with tsv.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
        w.writerow(COLUMNS)
        for p in sorted(pages, key=lambda p: p.path):
            w.writerow([p.path, p.commit, p.url, p.title, p.source])


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", name.lower()).strip()


def add_pages(records: Iterable[dict], pages: list[AonPage]) -> tuple[list[dict], PageReport]:
    """Conditions and actions whose name is a saved page's title (same kind) gain its page when the page's
    book is the entry's; entries with a page keep it."""
    report = PageReport(pages=len(pages))
    by_key: dict[tuple[str, str], AonPage] = {}
    for p in sorted(pages, key=lambda p: p.path):
        by_key.setdefault((p.kind, _key(p.name)), p)  # "&Redirected=1" copies are skipped by FILE already
    used: set[tuple[str, str]] = set()
    out = []
    for rec in records:
        kind = str(rec.get("type") or "")
        page = by_key.get((kind, _key(rec.get("name") or ""))) if kind in KINDS.values() else None
        if page is not None:
            used.add((page.kind, _key(page.name)))
            book_page = page.book_page
            if book_page and f"Pathfinder {book_page[0]}" == rec.get("book"):
                if not rec.get("page"):
                    rec = {**rec, "page": book_page[1]}
                    rec = with_source(rec, {"repo": REPO, "commit": page.commit, "path": page.path})
                    report.page_added += 1
            else:
                report.other_book.append(f"{rec['name']} ({page.source}; entry: {rec.get('book')})")
        if kind in KINDS.values() and not rec.get("page"):
            report.unmatched.append(f"{kind}: {rec['name']} ({rec.get('book')})")
        out.append(rec)
    report.unused = sorted(f"{p.kind}: {p.title} ({p.source})" for p in pages
                           if (p.kind, _key(p.name)) not in used)
    return out, report
