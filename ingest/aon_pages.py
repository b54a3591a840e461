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
# Saved pages that hold condition or action entries: one entry's own page, or a list of them (the exploration
# and downtime activities, the general skill actions); "&Redirected=1" copies duplicate another file.
FILE = re.compile(r"^(?:(?:Conditions|Actions)\.aspx-ID=\d+|Activities\.aspx-Category=\d+|Skills\.aspx-ID=\d+&General=true)\.htm$")
KINDS = {"Conditions": "condition", "Actions": "action"}
HEADING = re.compile(r'<h([12]) class="title">(.*?)</h\1>', re.S)
SOURCE = re.compile(r"<b>Source</b>\s*(.*?)(?:<br|<hr)", re.S)
ITALIC = re.compile(r"<i>(.*?)</i>", re.S)
URL = re.compile(r'tppabs="(https://2e\.aonprd\.com/(Conditions|Actions)\.aspx\?ID=\d+)"')
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


def parse_aon_page(text: str, path: str, commit: str) -> list[AonPage]:
    """Each condition or action heading of a saved page (a heading that links to its own
    ``Conditions.aspx?ID=``/``Actions.aspx?ID=`` page) with the first source line under it."""
    if not FILE.match(Path(path).name):
        return []
    headings = list(HEADING.finditer(text))
    out = []
    for i, heading in enumerate(headings):
        url = URL.search(heading.group(2))
        if not url:
            continue  # the site's index headings, skill pages' own headings
        end = headings[i + 1].start() if i + 1 < len(headings) else len(text)
        source = SOURCE.search(text, heading.end(), end)
        books = ITALIC.findall(source.group(1)) if source else []
        if books:
            out.append(AonPage(KINDS[url.group(2)], _text(heading.group(2)), _text(books[0]), url.group(1), path,
                               commit))
    return out


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
            pages += parse_aon_page(git("show", f"HEAD:{path}"), path, commit)
    return pages


def read_transcription(tsv: Path) -> list[AonPage]:
    """The transcribed rows (COLUMNS; ``path`` relative to the repository root)."""
    with tsv.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [AonPage(_kind(r["url"]), r["title"], r["source"], r["url"], r["path"], r["commit"]) for r in rows]


def _kind(url: str) -> str:
    """``condition`` or ``action`` from the entry's Archives of Nethys address."""
    m = URL.search(f'tppabs="{url}"')
    if not m:
        raise ValueError(f"not a condition or action page: {url}")
    return KINDS[m.group(2)]


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
    """Conditions and actions whose name is a saved page's title (same kind) gain its page when the page's
    book is the entry's; entries with a page keep it."""
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
        if kind in KINDS.values() and not rec.get("page"):
            report.unmatched.append(f"{kind}: {rec['name']} ({rec.get('book')})")
        out.append(rec)
    report.unused = sorted({f"{p.kind}: {p.title} ({p.source})" for p in pages
                            if (p.kind, _key(p.name)) not in used})
    return out, report
