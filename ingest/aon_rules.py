"""The rules prose of Player Core and GM Core, section by section, from saved Archives of Nethys rules pages.

Why: the bundled corpus held the books' entries (feats, spells, actions ...) and 56 GM-screen summaries, but
not the rules chapters themselves (flanking, the multiple attack penalty, degrees of success, afflictions,
cover, the modes of play ...), so a question about a rule found only entries that mention it. The public
repository MihanEntalpo/pathfinder-2-ui keeps an offline copy of Archives of Nethys pages; its
``docs/aonprd/Rules.aspx-ID=N.htm`` pages print one rules section each (``Flanking``, with the source line
``Player Core pg. 425``), and a chapter's page (``Chapter 8: Playing the Game``) prints the whole chapter, every
section nested in its parent as ``<div class="rule">`` with an ``<hN class="title">`` heading that links to the
section's own ``Rules.aspx?ID=N`` page.

This module reads those pages into sections (the Archives of Nethys ID, title, book, printed page, parent
titles, text as plain markdown), one per ID across all pages: the text and parents of its fullest copy, the page
of its own source line when some page prints one, else the page printed nearest before it in the chapter (a
chapter page prints a source line on few of its sections). It keeps the sections of ``BOOKS`` only (the site's
legacy Core Rulebook and other books are skipped), and leaves out the setting prose that is Paizo's Reserved
Material (``SETTING``: not licensed by ORC) and the embedded action stat blocks (the corpus has the actions).
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass
from html.parser import HTMLParser
from pathlib import Path

from gmprep.ingest.aon_pages import PAGES_DIR, REPO, saved_pages
from gmprep.ingest.corpus import slug

# Book as the source line prints it -> the corpus's book name.
BOOKS = {"Player Core": "Pathfinder Player Core", "GM Core": "Pathfinder GM Core"}
# (book, title) of the sections of setting prose (the world, its nations and gods) or of the iconic characters'
# dialogue: Reserved Material under the ORC License (proper nouns, locations, characters, dialogue), left out
# with everything under them. GM Core's own "Religion" (building a world's religions) is rules, and stays.
SETTING = frozenset({("GM Core", "Chapter 3: Age of Lost Omens"), ("Player Core", "Golarion and the Inner Sea"),
                     ("Player Core", "Religion"), ("Player Core", "Example of Play")})
FILE = re.compile(r"^Rules\.aspx-ID=(\d+)(?:&NoRedirect=1|&Redirected=1)?\.htm$")
RULE_URL = re.compile(r"Rules\.aspx\?ID=(\d+)")
SOURCE = re.compile(r"^(.+?) pg\. ?(\d+)")
VOID = frozenset({"br", "img", "hr", "input", "meta", "link", "area", "base", "col", "source", "wbr", "embed"})
SKIP_CLASSES = frozenset({"calledAction", "image-mappings", "sibling-navigation", "hide-on-print"})
BLOCKS = frozenset({"div", "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table", "hr", "blockquote"})


@dataclass(eq=False)
class El:
    """An element of the parsed page: tag, attributes and children (elements or text); compared by identity."""

    tag: str
    attrs: dict[str, str]
    children: list[El | str]

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())


class _Tree(HTMLParser):
    """The page as ``El`` elements; an end tag closes up to its open element (unclosed ``<p>``/``<li>``)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = El("root", {}, [])
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        el = El(tag, {k: v or "" for k, v in attrs}, [])
        self.stack[-1].children.append(el)
        if tag not in VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(El(tag, {k: v or "" for k, v in attrs}, []))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse_html(text: str) -> El:
    tree = _Tree()
    tree.feed(re.sub(r"<(script|style)\b.*?</\1>", "", text, flags=re.S | re.I))
    tree.close()
    return tree.root


def _find(el: El, pred: Callable[[El], bool]) -> list[El]:
    """Outermost descendants of ``el`` that ``pred`` accepts."""
    out: list[El] = []
    for c in el.children:
        if isinstance(c, El):
            out += [c] if pred(c) else _find(c, pred)
    return out


def plain(el: El | str) -> str:
    """The element's text, spaces collapsed."""
    if isinstance(el, str):
        return re.sub(r"\s+", " ", el)
    return re.sub(r"\s+", " ", "".join(plain(c) for c in el.children)).strip()


def markdown(children: list[El | str]) -> str:
    """Plain markdown of the children: paragraphs, ``**bold**``, ``- `` lists, ``|`` tables."""
    out = "".join(_md(c) for c in children)
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in out.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _md(c: El | str) -> str:
    if isinstance(c, str):
        return re.sub(r"\s+", " ", c)
    if c.classes & SKIP_CLASSES or c.tag in ("img", "script", "style"):
        return ""
    if c.tag == "br":
        return "\n"
    if c.tag in ("b", "strong"):
        inner = "".join(_md(x) for x in c.children).strip()
        return f"**{inner}**" if inner else ""
    if c.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):  # a table's or sidebar's heading inside the text
        return f"\n\n**{plain(c)}**\n\n" if plain(c) else ""
    if c.tag == "li":
        return "\n- " + "".join(_md(x) for x in c.children).replace("\n", " ").strip() + "\n"
    if c.tag == "table":
        rows = [r for r in _find(c, lambda e: e.tag == "tr")]
        cells = [[plain(d) for d in r.children if isinstance(d, El) and d.tag in ("td", "th")] for r in rows]
        cells = [r for r in cells if any(r)]
        if not cells:
            return ""
        width = max(len(r) for r in cells)
        lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in cells]
        return "\n\n" + "\n".join([lines[0], "|" + "---|" * width, *lines[1:]]) + "\n\n"
    inner = "".join(_md(x) for x in c.children)
    return f"\n\n{inner}\n\n" if c.tag in BLOCKS else inner


@dataclass
class RulesSection:
    """One rules section of a saved page (``page`` is None where no line before it prints one)."""

    aon_id: int
    title: str
    book: str  # as the source line prints it: "Player Core"
    page: int | None
    page_printed: bool  # the section's own source line prints the page (else: the nearest before it)
    parents: list[str]  # chapter and enclosing section titles, outermost first
    text: str
    path: str  # the saved file it was read from
    commit: str
    order: int = 0  # position in its file (document order)

    @property
    def url(self) -> str:
        return f"https://2e.aonprd.com/Rules.aspx?ID={self.aon_id}"


def _is_rule(e: El) -> bool:
    return e.tag == "div" and "rule" in e.classes


def parse_rules_page(text: str, path: str, commit: str) -> list[RulesSection]:
    """Every section of a saved rules page in document order, nested sections after their parent. A section
    without a source line of its own belongs to the book of the section around it; pages of other books
    (the legacy Core Rulebook ...) give nothing."""
    root = parse_html(text)
    crumbs = _find(root, lambda e: e.tag == "div" and "rule-ancestors" in e.classes)
    trail = [plain(s) for s in _find(crumbs[0], lambda e: "rule-ancestor" in e.classes)] if crumbs else []
    out: list[RulesSection] = []

    def visit(div: El, parents: list[str], book: str | None) -> None:
        heads = [c for c in div.children if isinstance(c, El) and re.fullmatch(r"h[1-6]", c.tag) and "title" in c.classes]
        if not heads:
            return
        title = plain(heads[0])
        ident = RULE_URL.search(" ".join(a.attrs.get("tppabs", "") + a.attrs.get("href", "")
                                         for a in _find(heads[0], lambda e: e.tag == "a")))
        sources = [c for c in div.children if isinstance(c, El) and "sources" in c.classes]
        page = None
        links = _find(sources[0], lambda e: e.tag == "a") if sources else []
        m = SOURCE.match(plain(links[0])) if links else None  # the first source: "Player Core pg. 425"
        if m:
            book, page = m.group(1), int(m.group(2))
        if book not in BOOKS or SETTING & {(book, t) for t in (title, *parents)} or not ident:
            return
        skip = {id(heads[0]), *map(id, sources)}
        body = [c for c in div.children if not (isinstance(c, El) and (id(c) in skip or _is_rule(c)))]
        out.append(RulesSection(int(ident.group(1)), title, book, page, page is not None, list(parents),
                                markdown(body), path, commit, len(out)))
        for child in div.children:
            if isinstance(child, El) and _is_rule(child):
                visit(child, [*parents, title], book)

    # the breadcrumbs name the book first, then the chapter and the sections above the page's own
    book = trail[0] if trail else None
    for top in _find(root, _is_rule):
        visit(top, trail[1:], book)
    return out


def merge(sections: list[RulesSection]) -> list[RulesSection]:
    """One section per Archives of Nethys ID: the copy with the longest text (a chapter page and the section's
    own page print the same text; the chapter page's copy may lack what the own page adds), the page of a source
    line printed for it on any page, else the page printed nearest before it in the file with the most sections
    (its chapter). Sorted by book, page and ID."""
    by_id: dict[int, list[RulesSection]] = {}
    for s in sections:
        by_id.setdefault(s.aon_id, []).append(s)
    printed = {i: next(s.page for s in ss if s.page_printed) for i, ss in by_id.items() if any(s.page_printed for s in ss)}
    files: dict[str, list[RulesSection]] = {}
    for s in sections:
        files.setdefault(s.path, []).append(s)
    nearest: dict[tuple[str, int], int | None] = {}
    for path, ss in files.items():
        last: int | None = None
        for s in sorted(ss, key=lambda s: s.order):
            last = printed.get(s.aon_id, last)
            nearest[(path, s.aon_id)] = last
    out = []
    for i, ss in by_id.items():
        best = max(ss, key=lambda s: (len(s.text), len(s.parents), s.path))
        if i in printed:
            page, is_printed = printed[i], True
        else:
            home = max(ss, key=lambda s: (len(files[s.path]), s.path))
            page, is_printed = nearest[(home.path, i)], False
        out.append(RulesSection(i, best.title, best.book, page, is_printed, best.parents, best.text, best.path,
                                best.commit))
    return sorted(out, key=lambda s: (s.book, s.page or 0, s.aon_id))


def read_clone(clone: Path) -> list[RulesSection]:
    """The merged sections of every saved rules page of a MihanEntalpo/pathfinder-2-ui clone (at HEAD)."""
    commit = subprocess.run(["git", "-C", str(clone), "log", "-1", "--format=%H", "HEAD", "--", PAGES_DIR],
                            capture_output=True, text=True, check=True).stdout.strip()
    sections: list[RulesSection] = []
    for path, text in saved_pages(clone, lambda name: bool(FILE.match(name))):
        sections += parse_rules_page(text, path, commit)
    return merge(sections)


COLUMNS = ("path", "commit", "url", "aon_id", "title", "book", "page", "page_printed", "parents", "text")


def write_transcription(sections: list[RulesSection], out: Path) -> None:
    """One JSON line per section (COLUMNS), deterministic gzip (a rerun on the same clone is byte-identical)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    for s in sections:
        d = asdict(s)
        d.pop("order")
        d["url"] = s.url
        rows.append(json.dumps({k: d[k] for k in COLUMNS}, ensure_ascii=False, separators=(",", ":")))
    data = ("\n".join(rows) + "\n").encode()
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(data)


def read_transcription(path: Path) -> list[RulesSection]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [RulesSection(r["aon_id"], r["title"], r["book"], r["page"], r["page_printed"], r["parents"], r["text"],
                         r["path"], r["commit"]) for r in rows]


ID_PREFIX = "pf2e:rule:"


def entry_ids(sections: list[RulesSection]) -> dict[int, str]:
    """A corpus id per section, ``pf2e:rule:player-core--flanking``. A title can head several sections of one
    book (a chapter's summary of a rule and the rule itself, "Treasure" in three chapters): the section whose
    own page prints its source line, then the longest, gets the plain id, the others their parent's title
    before theirs, then their Archives of Nethys ID."""
    out: dict[int, str] = {}
    used: set[str] = set()
    for s in sorted(sections, key=lambda s: (not s.page_printed, -len(s.text), s.aon_id)):
        book = slug(s.book)
        tries = [f"{book}--{slug(s.title)}"]
        if s.parents:
            tries.append(f"{book}--{slug(s.parents[-1])}--{slug(s.title)}")
        tries.append(f"{book}--{slug(s.title)}-{s.aon_id}")
        ident = next(ID_PREFIX + t for t in tries if ID_PREFIX + t not in used)
        used.add(ident)
        out[s.aon_id] = ident
    return out


def is_prose_id(entry_id: str) -> bool:
    """Whether a corpus id is one of this module's sections (``pf2e:rule:player-core--...``)."""
    return entry_id.startswith(tuple(f"{ID_PREFIX}{slug(b)}--" for b in BOOKS))


def rules_entries(sections: list[RulesSection]) -> list[dict]:
    """The corpus entries of the sections with text (type ``rule``; ``section``: parents, title;
    ``fields.hover_name`` False: see ``kg/names.py``)."""
    ids = entry_ids(sections)
    out = []
    for s in sections:
        if not s.text:
            continue  # a heading with nothing under it but its subsections, which are entries themselves
        out.append({
            "id": ids[s.aon_id], "name": s.title, "type": "rule", "book": BOOKS[s.book],
            "page": str(s.page) if s.page is not None else None, "traits": [], "rarity": None, "level": None,
            "text": s.text, "links": [], "unresolved_links": [], "section": [*s.parents, s.title],
            "fields": {"aon_id": s.aon_id, "page_printed": s.page_printed, "hover_name": False},
            "source": {"repo": REPO, "commit": s.commit, "path": s.path, "url": s.url},
        })
    return out


def add_rules_prose(records: list[dict], sections: list[RulesSection]) -> tuple[list[dict], list[str]]:
    """The corpus with this module's entries replaced by the sections' (after every other entry, so that the
    other corpus scripts, which add nothing of type ``rule``, may run before or after); also the ids of
    sections left out because another entry already has their id."""
    kept = [r for r in records if not is_prose_id(str(r.get("id", "")))]
    taken = {r["id"] for r in kept}
    new = rules_entries(sections)
    clash = [e["id"] for e in new if e["id"] in taken]
    return [*kept, *(e for e in new if e["id"] not in taken)], clash
