"""What other Pathfinder 2e books contain, by name: the entry lists of Archives of Nethys source pages.

Why: a question about a rule of a book gmprep does not hold ("Can I Unleash Psyche twice?", "does a moth
companion fly?") gets the closest passages of the books it does hold, which are tangents. Knowing the names
of other books' feats, spells, items, archetypes, classes, ancestries ... lets the answer say "that is from Dark
Archive, which gmprep does not hold" (core/agents/otherbooks.py). Archives of Nethys keeps one page per book
listing its entries by category (``Sources.aspx?ID=293``: "## Feats [231]" then the names); the public
repository MihanEntalpo/pathfinder-2-ui keeps saved copies of them (``knowledge/Source/Sources.aspx-ID=N.md``).
Only names, categories and book titles are kept: no rules text of those books.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = "MihanEntalpo/pathfinder-2-ui"
SOURCE_DIR = "knowledge/Source"
FILE = re.compile(r"^Sources\.aspx-ID=\d+\.md$")
COLUMNS = ("book", "line", "category", "name", "path", "commit")
# Categories that name a rule element a question can ask about. Left out: people, creatures and places (an
# adventure's NPCs and monsters are what a GM's own campaign names), setting articles, languages, deities,
# traits (the bundled trait glossary already defines every book's traits), rules sections (their titles are
# ordinary words: "Afflictions") and build advice (sample builds, class kits).
SKIP_CATEGORIES = frozenset({
    "Monsters", "NPCs", "Setting Articles", "Languages", "Deities", "Traits", "Rules", "Class Sample Builds",
    "Class Kits", "Domains", "Skills (General)", "Familiars (Specific)", "Monster Families", "Planes",
    "Organizations", "Nations", "Settlements", "Ethnicities",
})
_TITLE = re.compile(r"^# \[(.+?)\]\(\./Sources\.aspx-ID=\d+\.md\)\s*$", re.M)
_LINE = re.compile(r"^Product Line (.+?)\s*$", re.M)
_SECTION = re.compile(r"^## (.+?) \[\d+\]\s*$", re.M)
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")


@dataclass(frozen=True)
class Listed:
    """One entry a book lists: its book, the book's product line, the category and the entry's name."""

    book: str
    line: str
    category: str
    name: str
    path: str = ""
    commit: str = ""


def parse_source_page(text: str, path: str = "", commit: str = "") -> list[Listed]:
    """The entries one saved source page lists (names as the page writes them, links unwrapped)."""
    title = _TITLE.search(text)
    if not title:
        return []
    line = _LINE.search(text)
    book, product = title.group(1).strip(), (line.group(1).strip() if line else "")
    heads = list(_SECTION.finditer(text))
    out: list[Listed] = []
    for i, head in enumerate(heads):
        category = head.group(1).strip()
        if category in SKIP_CATEGORIES:
            continue
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body = text[head.end():end].strip().split("\n\n")[0]  # the names paragraph; notes may follow
        body = _LINK.sub(r"\1", body)
        body = re.sub(r"\+\d+ with potential spoilers.*$", "", body)
        for name in body.split(", "):
            name = name.strip().strip(".")
            if name and not name.startswith("#") and len(name) <= 80:
                out.append(Listed(book, product, category, name, path, commit))
    return out


CLASS_DIR = "knowledge/Class"
CLASS_FILE = re.compile(r"^Classes\.aspx-ID=\d+\.md$")
_CLASS_TITLE = re.compile(r"^# (.+?) - Classes - Archives of Nethys", re.M)
_CLASS_SOURCE = re.compile(r"Source \[(.+?) pg\. \d+")
_FEATURE = re.compile(r"^#{2,3} (.+?)\s*$", re.M)
_FEATURE_TAIL = re.compile(r"(?:\s*\[[a-z-]+\])+$|Level \d+$")


def parse_class_page(text: str, path: str = "", commit: str = "") -> list[Listed]:
    """The class features a saved class page lists (its headings after "Class Features"; source pages list a
    book's classes but not their features: Unleash Psyche, Implement's Empowerment)."""
    title, source = _CLASS_TITLE.search(text), _CLASS_SOURCE.search(text)
    start = text.find("\n# Class Features")
    if not title or not source or start < 0:
        return []
    out: list[Listed] = []
    for m in _FEATURE.finditer(text, start):
        name = _FEATURE_TAIL.sub("", m.group(1)).strip()
        name = _LINK.sub(r"\1", name).strip()
        if name and len(name) <= 60 and not name.startswith(("[", "#")):
            out.append(Listed(source.group(1).strip(), "Rulebooks", "Class Features", name, path, commit))
    return out


# ----- the publications themselves ------------------------------------------------------------------------------------
# A question names a book as often as one of its entries ("running the circus in Extinction Curse", "the undead
# archetypes from Book of the Dead"). The source pages give each book's title, product line and source group (the
# Adventure Path a volume belongs to: "Source Group [Extinction Curse](...)"), and AoN's Adventures page names every
# adventure group, including those with no saved source page (Kingmaker, Rusthenge). Titles only: no rules text.
PUBLICATION_COLUMNS = ("title", "line", "group", "path", "commit")
_GROUP = re.compile(r"^Source Group (.+?)\s*$", re.M)
ADVENTURES_PAGE = "knowledge/Setting/Setting.aspx-Adventure=true.md"
_ADVENTURE_GROUPS = re.compile(r"^## (\[.+)$", re.M)


@dataclass(frozen=True)
class Publication:
    """One Paizo publication (or adventure group): its title, product line and the group it belongs to."""

    title: str
    line: str = ""
    group: str = ""
    path: str = ""
    commit: str = ""


def parse_publication(text: str, path: str = "", commit: str = "") -> Publication | None:
    """The publication a saved source page is about (title, product line, source group), or None."""
    title = _TITLE.search(text)
    if not title:
        return None
    line, group = _LINE.search(text), _GROUP.search(text)
    return Publication(title.group(1).strip(), line.group(1).strip() if line else "",
                       _LINK.sub(r"\1", group.group(1)).strip() if group else "", path, commit)


def parse_adventure_groups(text: str, path: str = "", commit: str = "") -> list[Publication]:
    """The adventure groups AoN's Adventures page names ("## [Abomination Vaults](...) | [Age of Ashes](...)")."""
    m = _ADVENTURE_GROUPS.search(text)
    if not m:
        return []
    names = [n.strip() for n in re.findall(r"\[([^\]]+)\]", m.group(1))]
    # no product line: the page mixes Adventure Paths with the books their groups are named for (Book of the Dead)
    return [Publication(n, "", n, path, commit) for n in names if n]


def read_publications(git_dir: Path) -> list[Publication]:
    """The publications of a clone of MihanEntalpo/pathfinder-2-ui: every source page's, then the adventure groups."""
    def git(*args: str) -> str:
        return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True,
                              text=True).stdout
    commit = git("rev-parse", "HEAD").strip()
    out: list[Publication] = []
    for path in git("ls-tree", "-r", "--name-only", "HEAD", SOURCE_DIR).split():
        if FILE.match(path.rsplit("/", 1)[-1]):
            pub = parse_publication(git("show", f"HEAD:{path}"), path, commit)
            if pub is not None:
                out.append(pub)
    out += parse_adventure_groups(git("show", f"HEAD:{ADVENTURES_PAGE}"), ADVENTURES_PAGE, commit)
    return out


def write_publications(rows: Iterable[Publication], path: Path) -> int:
    """Write the publications (plain TSV, sorted, one row each); returns the row count."""
    unique = sorted({(r.title, r.line, r.group, r.path, r.commit) for r in rows})
    buf = io.StringIO()
    w = csv.writer(buf, delimiter="\t", lineterminator="\n")
    w.writerow(PUBLICATION_COLUMNS)
    w.writerows(unique)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(buf.getvalue(), encoding="utf-8")
    return len(unique)


def read_publications_tsv(path: Path) -> list[Publication]:
    """The publications written by ``write_publications``."""
    with path.open(encoding="utf-8") as f:
        return [Publication(**row) for row in csv.DictReader(f, delimiter="\t")]


def read_clone(git_dir: Path) -> Iterator[Listed]:
    """Every saved source page of a clone (a bare mirror or a checkout) of MihanEntalpo/pathfinder-2-ui."""
    def git(*args: str) -> str:
        return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True,
                              text=True).stdout
    commit = git("rev-parse", "HEAD").strip()
    for path in git("ls-tree", "-r", "--name-only", "HEAD", SOURCE_DIR).split():
        if FILE.match(path.rsplit("/", 1)[-1]):
            yield from parse_source_page(git("show", f"HEAD:{path}"), path, commit)
    for path in git("ls-tree", "-r", "--name-only", "HEAD", CLASS_DIR).split():
        if CLASS_FILE.match(path.rsplit("/", 1)[-1]):
            yield from parse_class_page(git("show", f"HEAD:{path}"), path, commit)


# ----- other books' rules sections ------------------------------------------------------------------------------------
# A question about another book's rules prose names its section, not an entry: the Gamemastery Guide's "Dual-Class PCs"
# (a variant rule GM Core did not reprint), the Core Rulebook's "Alignment Damage" (dropped by the Remaster), Guns &
# Gears' siege weapons. The source pages list no rules sections (their "Rules" category is the chapters), so the saved
# rules pages give them: each page's headings, under the book of the nearest "Source" line above them. Headings only,
# no rules text. Read by ``core/agents/otherbooks.section_vocabulary`` for the word rule (``stated.unstated_terms``),
# never as names: section titles are ordinary words ("Afflictions"), so the word rule's conditions decide.
RULES_DIR = "knowledge/Rules"
RULES_FILE = re.compile(r"^Rules\.aspx-ID=\d+(?:&NoRedirect=1)?\.md$")
SECTION_CATEGORY = "Rules Sections"
_RULES_SOURCE = re.compile(r"^Source \[?([^\]\n]+?) pg\. \d+", re.M)
_RULES_HEADING = re.compile(r"^#{1,3} (.+?)\s*$", re.M)


def parse_rules_page(text: str, path: str = "", commit: str = "") -> list[Listed]:
    """The rules sections a saved rules page heads (its "#" to "###" headings), each under the book of the nearest
    "Source" line above it (the page's title under the first one)."""
    sources = list(_RULES_SOURCE.finditer(text))
    if not sources:
        return []
    out: list[Listed] = []
    for m in _RULES_HEADING.finditer(text):
        if "](" in m.group(1) and " | " in m.group(1):
            continue  # the page's navigation: "[Rules Index](...) | [GM Screen](...)"
        name = _LINK.sub(r"\1", m.group(1)).strip()
        if not name or name.startswith(("[", "#")) or "Archives of Nethys" in name or len(name) > 60:
            continue  # its "... - Rules - Archives of Nethys" title line
        above = [s for s in sources if s.start() < m.start()]
        book = (above[-1] if above else sources[0]).group(1).strip()
        out.append(Listed(book, "", SECTION_CATEGORY, name, path, commit))
    return out


def read_rules_sections(git_dir: Path) -> Iterator[Listed]:
    """Every saved rules page's sections, of a clone of MihanEntalpo/pathfinder-2-ui."""
    def git(*args: str) -> str:
        return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True,
                              text=True).stdout
    commit = git("rev-parse", "HEAD").strip()
    for path in git("ls-tree", "-r", "--name-only", "HEAD", RULES_DIR).split("\n"):
        if RULES_FILE.match(path.rsplit("/", 1)[-1]):
            yield from parse_rules_page(git("show", f"HEAD:{path}"), path, commit)


def write_tsv(rows: Iterable[Listed], path: Path) -> int:
    """Write the catalogue (gzip TSV, sorted, one row per book/category/name); returns the row count."""
    unique = sorted({(r.book, r.line, r.category, r.name, r.path, r.commit) for r in rows})
    buf = io.StringIO()
    w = csv.writer(buf, delimiter="\t", lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows(unique)
    path.parent.mkdir(parents=True, exist_ok=True)
    # no file name or time in the gzip header: the same rows give the same bytes
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
        f.write(buf.getvalue().encode("utf-8"))
    return len(unique)


def read_tsv(path: Path) -> list[Listed]:
    """The catalogue written by ``write_tsv``."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [Listed(**row) for row in csv.DictReader(f, delimiter="\t")]
