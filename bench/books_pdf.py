"""Generated rulebook PDFs with known structure, and the ``gmprep books add`` benchmark.

    python bench/books_pdf.py make OUT.pdf [--pages 300] [--seed 7]      # write a book + OUT.truth.json
    python bench/books_pdf.py bench [--pages 300] [--store DIR]           # generate, ingest, score; JSON

The generator lays pages out itself (fpdf2, core fonts) so it knows exactly where every heading lands:
a title page and a contents page (page labels ``i``, ``ii``), then two-column body pages numbered from 1
(PDF page labels *and* a printed footer number), running headers (book title, chapter name), chapter
headings spanning both columns, section/subsection headings inside a column (optionally numbered
``3.2``), shaded and boxed sidebars, ruled tables and creature stat blocks. ``truth`` lists every heading
with its level (1 chapter, 2 section, 3 subsection) and printed page, and every sidebar with its page.

The benchmark measures, in one run: generating (the baseline: pure layout work on the same text), parsing
(``ingest.books.pdf``), the whole ``add_book`` into a fresh store (parse + graph + BM25 + vectors), the share
of headings at the right level and of sections whose page is right, and the machine's load average.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from fpdf import FPDF

PAGE_W, PAGE_H = 612.0, 792.0  # US letter, points
MARGIN_X, TOP, BOTTOM = 54.0, 66.0, 732.0
GUTTER = 22.0
COL_W = (PAGE_W - 2 * MARGIN_X - GUTTER) / 2
BODY = ("Times", "", 9.5)
LEAD = 11.5  # body line height
STYLES = {  # level -> (font, style, size): chapter, section, subsection
    1: ("Helvetica", "B", 20.0),
    2: ("Helvetica", "B", 13.0),
    3: ("Helvetica", "B", 10.5),
}

_WORDS = (
    "the creature you target ally enemy check saving throw round turn action reaction spell attack bonus "
    "penalty circumstance status item level degree success failure critical damage persistent fire cold "
    "rank feet range area burst emanation cone line effect duration until end start of your next a an "
    "to and or if it that gains loses must can cannot while within reach adjacent square move stride step "
    "strike shield hit points dying wounded unconscious hidden observed concealed senses perception "
    "stealth athletics acrobatics skill proficiency trained expert master legendary value"
).split()

# Rules sections whose names are bundled entries (pf2e:condition:*), so matching can be checked.
CONDITIONS = ["Blinded", "Clumsy", "Concealed", "Dazzled", "Deafened", "Drained", "Dying", "Enfeebled",
              "Fatigued", "Frightened", "Grabbed", "Hidden", "Off-Guard", "Prone", "Sickened", "Slowed",
              "Stunned", "Stupefied", "Unconscious", "Wounded"]


@dataclass
class Section:
    title: str
    level: int  # 2 section, 3 subsection
    paragraphs: int = 2
    sidebar: str | None = None
    table: bool = False
    statblock: str | None = None
    children: list[Section] = field(default_factory=list)


@dataclass
class Chapter:
    title: str
    sections: list[Section] = field(default_factory=list)


class _Writer:
    """Own two-column layout on top of fpdf2, recording the printed page of every heading."""

    def __init__(self, title: str, rng: random.Random, numbered: bool, metadata_title: bool, page_labels: bool):
        self.pdf = FPDF(unit="pt", format="letter")
        self.pdf.set_auto_page_break(False)
        if metadata_title:
            self.pdf.set_title(title)
        self.title, self.rng, self.numbered, self.page_labels = title, rng, numbered, page_labels
        self.truth: dict = {"title": title, "headings": [], "sidebars": [], "tables": [], "statblocks": []}
        self.chapter = ""
        self.col, self.y = 0, TOP
        self.col_top = TOP  # where columns start on this page (below a full-width chapter opening)
        self.body_page = 0

    # ----- pages ------------------------------------------------------------------------------------
    def front_matter(self, chapters: list[Chapter]) -> None:
        pdf = self.pdf
        pdf.add_page()
        if self.page_labels:
            pdf.set_page_label("r", None, 1)  # i, ii (a label range starts on the current page)
        pdf.set_font("Helvetica", "B", 30)
        pdf.text(MARGIN_X, 300, self.title)
        pdf.set_font("Helvetica", "", 12)
        pdf.text(MARGIN_X, 330, "A generated rulebook for tests")
        pdf.add_page()
        pdf.set_font("Helvetica", "", 9)
        y = TOP
        for i, ch in enumerate(chapters, 1):
            pdf.text(MARGIN_X, y, f"{i}. {ch.title}")
            y += 12
            if y > BOTTOM:
                break

    def new_page(self) -> None:
        pdf = self.pdf
        pdf.add_page()
        if self.body_page == 0 and self.page_labels:
            pdf.set_page_label("D", None, 1)
        self.body_page += 1
        self.col, self.y, self.col_top = 0, TOP, TOP
        # running header (book title left, chapter right) and footer (printed page number)
        pdf.set_font("Helvetica", "I", 8)
        pdf.text(MARGIN_X, 40, self.title)
        w = pdf.get_string_width(self.chapter)
        pdf.text(PAGE_W - MARGIN_X - w, 40, self.chapter)
        pdf.set_draw_color(120, 120, 120)
        pdf.line(MARGIN_X, 46, PAGE_W - MARGIN_X, 46)
        label = str(self.body_page)
        pdf.set_font("Helvetica", "", 8)
        pdf.text(PAGE_W / 2 - pdf.get_string_width(label) / 2, 760, label)

    def x(self) -> float:
        return MARGIN_X + self.col * (COL_W + GUTTER)

    def need(self, h: float) -> None:
        """Room for ``h`` points in the current column, else the next column or page."""
        if self.y + h <= BOTTOM:
            return
        if self.col == 0:
            self.col, self.y = 1, self.col_top
        else:
            self.new_page()

    # ----- blocks -----------------------------------------------------------------------------------
    def prose(self, words: int) -> str:
        out = [self.rng.choice(_WORDS) for _ in range(words)]
        out[0] = out[0].capitalize()
        text = " ".join(out)
        # sentences so the text looks like prose (and never looks like a heading)
        parts = text.split(" ")
        for i in range(9, len(parts), self.rng.randint(9, 16)):
            parts[i] = parts[i] + "."
        return " ".join(parts) + "."

    def paragraph(self, text: str, font=BODY, width: float | None = None, indent: float = 0.0) -> None:
        pdf = self.pdf
        pdf.set_font(*font)
        lines = pdf.multi_cell(width or COL_W, LEAD, text, dry_run=True, output="LINES")
        for line in lines:
            self.need(LEAD)
            pdf.set_font(*font)
            pdf.text(self.x() + indent, self.y + font[2], line)
            self.y += LEAD
        self.y += 4

    def heading(self, title: str, level: int, number: str) -> None:
        font, style, size = STYLES[level]
        shown = f"{number} {title}" if self.numbered and number else title
        self.need(size * 1.4 + 3 * LEAD)  # keep a heading with its first lines
        self.pdf.set_font(font, style, size)
        self.pdf.text(self.x(), self.y + size, shown)
        self.truth["headings"].append({"title": title, "level": level, "page": str(self.body_page)})
        self.y += size * 1.5

    def chapter_start(self, title: str, number: str) -> None:
        self.chapter = title
        self.new_page()
        font, style, size = STYLES[1]
        shown = f"Chapter {number}: {title}" if self.numbered else title
        self.pdf.set_font(font, style, size)
        self.pdf.text(MARGIN_X, self.y + size, shown)  # spans both columns
        self.truth["headings"].append({"title": title, "level": 1, "page": str(self.body_page)})
        self.y += size * 2
        intro = self.prose(60)
        self.truth["headings"][-1]["starts"] = intro[:60]
        self.paragraph(intro, width=PAGE_W - 2 * MARGIN_X)  # a full-width introduction
        self.y += 6
        self.col_top = self.y

    def sidebar(self, title: str) -> None:
        pdf = self.pdf
        body = self.prose(self.rng.randint(30, 60))
        pdf.set_font("Helvetica", "", 8.5)
        lines = pdf.multi_cell(COL_W - 12, 10.5, body, dry_run=True, output="LINES")
        h = 10 + 14 + len(lines) * 10.5 + 6
        self.need(h + 6)
        pdf.set_fill_color(230, 226, 210)
        pdf.set_draw_color(90, 70, 40)
        pdf.rect(self.x(), self.y, COL_W, h, style="DF")
        pdf.set_font("Helvetica", "B", 9.5)
        pdf.text(self.x() + 6, self.y + 16, title)
        yy = self.y + 16 + 12
        pdf.set_font("Helvetica", "", 8.5)
        for line in lines:
            pdf.text(self.x() + 6, yy, line)
            yy += 10.5
        self.truth["sidebars"].append({"title": title, "page": str(self.body_page), "text": body})
        self.y += h + 8

    def table(self, caption: str) -> None:
        pdf = self.pdf
        rows = [["Level", "DC", "Reward"]] + [
            [str(lv), str(14 + lv + lv // 3), f"{lv * 10} gp"] for lv in range(1, self.rng.randint(5, 9))
        ]
        self.need((len(rows) + 1) * 12 + 10)
        pdf.set_font("Helvetica", "B", 9)
        pdf.text(self.x(), self.y + 9, caption)
        self.y += 14
        cw = COL_W / 3
        for i, row in enumerate(rows):
            if i == 0:  # shaded header row
                pdf.set_fill_color(200, 200, 200)
                pdf.rect(self.x(), self.y, COL_W, 12, style="F")
            pdf.set_font("Helvetica", "B" if i == 0 else "", 8.5)
            for j, cell in enumerate(row):
                pdf.text(self.x() + j * cw + 3, self.y + 9, cell)
            pdf.set_draw_color(160, 160, 160)
            pdf.line(self.x(), self.y + 12, self.x() + COL_W, self.y + 12)
            self.y += 12
        self.truth["tables"].append({"caption": caption, "page": str(self.body_page), "rows": rows})
        self.y += 8

    def statblock(self, name: str) -> None:
        pdf = self.pdf
        level = self.rng.randint(1, 12)
        lines = [
            ("Perception", f" +{level + 6}; darkvision"),
            ("Skills", f" Athletics +{level + 5}, Stealth +{level + 4}"),
            ("Str", f" +{level // 3 + 1}, Dex +2, Con +1, Int -1, Wis +1, Cha 0"),
            ("AC", f" {level + 15}; Fort +{level + 6}, Ref +{level + 4}, Will +{level + 2}"),
            ("HP", f" {level * 16}"),
            ("Speed", " 25 feet"),
            ("Melee", f" jaws +{level + 8}, Damage 1d8+{level} piercing"),
        ]
        self.need(14 + len(lines) * LEAD + 6)
        pdf.set_font("Times", "B", 9.5)
        pdf.text(self.x(), self.y + 9.5, name.upper())
        tag = f"CREATURE {level}"
        pdf.text(self.x() + COL_W - pdf.get_string_width(tag), self.y + 9.5, tag)
        pdf.set_draw_color(0, 0, 0)
        pdf.line(self.x(), self.y + 12, self.x() + COL_W, self.y + 12)
        self.y += 14
        for lead, rest in lines:
            pdf.set_font("Times", "B", 9.5)
            pdf.text(self.x(), self.y + 9.5, lead)
            w = pdf.get_string_width(lead)
            pdf.set_font(*BODY)
            pdf.text(self.x() + w, self.y + 9.5, rest)
            self.y += LEAD
        self.truth["statblocks"].append({"name": name, "level": level, "page": str(self.body_page)})
        self.y += 6

    def section(self, sec: Section, number: str) -> None:
        self.heading(sec.title, sec.level, number)
        for i in range(sec.paragraphs):
            text = self.prose(self.rng.randint(50, 110))
            if i == 0:  # how the section's text must begin once read back in order
                self.truth["headings"][-1]["starts"] = text[:60]
            self.paragraph(text)
        if sec.table:
            self.table(f"Table: {sec.title} DCs")
        if sec.statblock:
            self.statblock(sec.statblock)
        if sec.sidebar:
            self.sidebar(sec.sidebar)
        for k, child in enumerate(sec.children, 1):
            self.section(child, f"{number}.{k}")


def write_book(path: Path, title: str, chapters: list[Chapter], seed: int = 7, numbered: bool = False,
               metadata_title: bool = True, page_labels: bool = True) -> dict:
    """Write ``chapters`` as a two-column PDF at ``path``; return the truth (headings, sidebars, pages).

    ``numbered`` writes "Chapter 1: ..." and "1.2 ..." headings; without ``metadata_title`` the title is only
    on the title page; without ``page_labels`` the printed numbers are only in the footers.
    """
    w = _Writer(title, random.Random(seed), numbered, metadata_title, page_labels)
    w.front_matter(chapters)
    for i, ch in enumerate(chapters, 1):
        w.chapter_start(ch.title, str(i))
        for j, sec in enumerate(ch.sections, 1):
            w.section(sec, f"{i}.{j}")
    w.pdf.output(str(path))
    w.truth["pages"] = w.body_page + 2
    return w.truth


def conditions_chapter(rng: random.Random) -> Chapter:
    """A "Conditions" chapter with one section per bundled condition."""
    return Chapter("Conditions", [Section(name, 2, paragraphs=rng.randint(1, 2)) for name in CONDITIONS])


def large_book(pages: int = 300, seed: int = 7) -> tuple[str, list[Chapter]]:
    """Chapters enough for about ``pages`` pages: sections, subsections, sidebars, tables, stat blocks."""
    rng = random.Random(seed)
    chapters = [conditions_chapter(rng)]
    n = 0
    # about 0.57 pages per section with its subsections, at the average block sizes used here (measured)
    target_sections = int(pages / 0.56)
    topics = ["Encounters", "Exploration", "Downtime", "Hazards", "Treasure", "Afflictions", "Creatures",
              "Vehicles", "Planes", "Rituals", "Settlements", "Chases", "Influence", "Research", "Duels",
              "Infiltration", "Reputation", "Victory Points", "Terrain", "Weather"]
    for topic in topics:
        sections = []
        for _ in range(max(1, target_sections // len(topics))):
            n += 1
            children = [Section(f"{topic} Option {n}-{k}", 3, paragraphs=rng.randint(1, 2),
                                table=rng.random() < 0.2) for k in range(1, rng.randint(1, 3) + 1)]
            sections.append(Section(
                f"{topic} Rule {n}", 2, paragraphs=rng.randint(1, 3),
                sidebar=f"Sidebar {n}: GM Advice" if rng.random() < 0.25 else None,
                table=rng.random() < 0.2,
                statblock=f"Sample Beast {n}" if rng.random() < 0.15 else None,
                children=children,
            ))
        chapters.append(Chapter(topic, sections))
    return "Pathfinder GM Core", chapters


def _score(tree, truth: dict) -> dict:
    """Headings found at the right level / with the right page, against the generator's truth."""
    found = [(s.title, s.level, s.page) for s in tree.walk() if s.kind == "heading"]
    want = [(h["title"], h["level"], h["page"]) for h in truth["headings"]]
    by_title = {t: (lv, pg) for t, lv, pg in found}
    level_ok = sum(1 for t, lv, _ in want if by_title.get(t, (None,))[0] == lv)
    page_ok = sum(1 for t, _, pg in want if t in by_title and by_title[t][1] == pg)
    return {"headings": len(want), "found": len(found), "right_level": level_ok,
            "right_level_share": round(level_ok / len(want), 4), "right_page": page_ok,
            "right_page_share": round(page_ok / len(want), 4),
            "extra_headings": len(set(by_title) - {t for t, _, _ in want})}


def _torch_threads() -> int | None:
    try:
        import torch

        return torch.get_num_threads()
    except Exception:
        return None


def run_bench(pages: int, workdir: Path, base_store: Path | None = None) -> dict:
    from gmprep.common.settings import Settings
    from gmprep.ingest.books.pdf import parse_pdf
    from gmprep.ingest.books.store import add_book

    load_before = os.getloadavg()
    title, chapters = large_book(pages)
    pdf_path = workdir / "bench-book.pdf"
    # wall seconds and this process's CPU seconds (all threads): on a shared machine the CPU figure
    # is the one that does not grow with other people's load
    t0, c0 = time.perf_counter(), time.process_time()
    truth = write_book(pdf_path, title, chapters)
    t_gen, c_gen = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    tree = parse_pdf(pdf_path)
    t_parse, c_parse = time.perf_counter() - t0, time.process_time() - c0
    if base_store is not None:  # a copy of a built store: matching against the bundled entries is measured too
        import shutil

        shutil.copytree(base_store, workdir / "store")
    settings = Settings(store_dir=workdir / "store")
    t0, c0 = time.perf_counter(), time.process_time()
    report = add_book(settings, pdf_path, progress=False)
    t_add, c_add = time.perf_counter() - t0, time.process_time() - c0
    return {
        "pages": truth["pages"], "pdf_mb": round(pdf_path.stat().st_size / 2**20, 2),
        "generate_s": round(t_gen, 1), "parse_s": round(t_parse, 1), "books_add_s": round(t_add, 1),
        "generate_cpu_s": round(c_gen, 1), "parse_cpu_s": round(c_parse, 1), "books_add_cpu_s": round(c_add, 1),
        "torch_threads": _torch_threads(),
        "books_add_nodes": report.nodes, "matched_entries": report.matched, "paged_entries": report.paged,
        "embedded": report.nodes_embedded,
        "score": _score(tree, truth), "cpus": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("out", type=Path)
    m.add_argument("--pages", type=int, default=300)
    m.add_argument("--seed", type=int, default=7)
    b = sub.add_parser("bench")
    b.add_argument("--pages", type=int, default=300)
    b.add_argument("--workdir", type=Path)
    b.add_argument("--store", type=Path, help="a built store to copy and add the book to (default: an empty one)")
    args = ap.parse_args(argv)
    if args.cmd == "make":
        title, chapters = large_book(args.pages, args.seed)
        truth = write_book(args.out, title, chapters, seed=args.seed)
        args.out.with_suffix(".truth.json").write_text(json.dumps(truth, indent=1))
        print(f"{args.out}: {truth['pages']} pages, {len(truth['headings'])} headings")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        out = run_bench(args.pages, args.workdir or Path(tmp), args.store)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
