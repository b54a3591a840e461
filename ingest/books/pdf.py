"""A rulebook PDF -> ``BookTree`` (pdfminer.six, MIT): hierarchy from fonts, pages from labels.

Steps, each a function below:

1. ``_page_rows``: the characters of each page (no pdfminer layout analysis: it is slow and merges
   columns) grouped into rows by baseline and split into fragments at wide gaps, so the two columns of a
   row, or the cells of a table row, are separate fragments. Boxes (filled or stroked rectangles) are kept.
2. ``_running_lines``: running headers and footers are the fragments that are the top-most or
   bottom-most of their page at the same height on many pages, or repeat word for word (digits aside)
   at the same height; they are dropped, and a number among them is the printed page number.
3. ``_reading_order``: per page, the gutter is the least covered vertical strip near the middle; rows
   crossing it (a chapter introduction) cut the page into bands read top to bottom, each band left
   column then right column. Text inside a box that holds several rows is a sidebar.
4. ``_heading_styles``: the body size is the most common size by characters; heading-like rows are larger
   (or bold and numbered); their sizes are clustered (a new cluster where the next size is clearly
   larger) and (size cluster, boldness) styles ranked, largest first: rank 1 = chapter, 2 = section ...
   Numbering (``Chapter 3``, ``3.2``) states the level outright when present.

Page numbers: the PDF's page labels when it has them, else the printed numbers found in running
footers/headers (when they agree with a constant offset), else the physical page.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from gmprep.common.errors import GmprepError
from gmprep.ingest.books.tree import BookTree, Section, nest, number_depth, split_number

log = logging.getLogger(__name__)


@dataclass
class Frag:
    """A run of characters on one baseline, without a wide gap: one line of one column (or one cell)."""

    text: str
    x0: float
    x1: float
    bottom: float  # PDF coordinates: y grows upwards
    top: float
    size: float  # the dominant font size (by characters)
    bold: bool  # (nearly) every character in a bold face
    page: int  # 0-based physical page

    @property
    def mid(self) -> float:
        return (self.top + self.bottom) / 2


@dataclass
class Row:
    """One line of the reading flow (a table row's cells joined with `` | ``)."""

    text: str
    size: float
    bold: bool
    page: int
    top: float
    gap_before: float = 0.0  # vertical distance to the previous row of the same column (0 at a column top)


@dataclass
class Sidebar:
    """The rows inside one box."""

    rows: list[Row]
    page: int
    top: float


@dataclass
class _Page:
    width: float
    height: float
    frags: list[Frag] = field(default_factory=list)
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)


def _is_bold(fontname: str) -> bool:
    name = fontname.split("+")[-1].lower()
    return any(w in name for w in ("bold", "black", "heavy", "semibold", "demi"))


def _page_rows(layout, page_no: int) -> _Page:
    """Characters -> fragments (``Frag``) and boxes of one pdfminer page."""
    from pdfminer.layout import LTChar, LTCurve, LTFigure

    x0, y0, x1, y1 = layout.bbox
    page = _Page(width=x1 - x0, height=y1 - y0)
    chars: list = []
    stack = [layout]
    while stack:  # text and shapes may sit inside form XObjects (LTFigure)
        for obj in stack.pop():
            if isinstance(obj, LTChar):
                chars.append(obj)
            elif isinstance(obj, LTFigure):
                stack.append(obj)
            elif isinstance(obj, LTCurve) and (obj.fill or obj.stroke):  # LTRect is an LTCurve
                w, h = obj.x1 - obj.x0, obj.y1 - obj.y0
                if w > 2 and h > 2:  # rules and hairlines are not boxes
                    page.boxes.append((obj.x0, obj.y0, obj.x1, obj.y1))
    # rows: characters sorted by vertical middle; a row takes characters within a third of its size
    chars.sort(key=lambda c: -(c.y0 + c.y1) / 2)
    rows: list[list] = []
    for c in chars:
        mid = (c.y0 + c.y1) / 2
        if rows:
            r0 = rows[-1][0]
            if abs((r0.y0 + r0.y1) / 2 - mid) <= 0.35 * max(r0.size, c.size):
                rows[-1].append(c)
                continue
        rows.append([c])
    for row in rows:
        row.sort(key=lambda c: c.x0)
        frag: list = []
        for c in row:
            if frag:
                prev = frag[-1]
                gap = c.x0 - prev.x1
                if gap > 0.9 * max(prev.size, c.size) and not (prev.get_text() == " " and gap < 2 * c.size):
                    page.frags.append(_frag(frag, page_no))
                    frag = []
            frag.append(c)
        if frag:
            page.frags.append(_frag(frag, page_no))
    page.frags = [f for f in page.frags if f.text]
    return page


def _frag(chars: list, page_no: int) -> Frag:
    parts: list[str] = []
    prev = None
    for c in chars:
        t = c.get_text()
        # PDFs without space characters: a gap wider than a fifth of the size is a word break
        if prev is not None and t != " " and parts and parts[-1] != " " and c.x0 - prev.x1 > 0.2 * c.size:
            parts.append(" ")
        parts.append(t)
        prev = c
    text = " ".join("".join(parts).split())
    visible = [c for c in chars if not c.get_text().isspace()] or chars
    sizes = Counter(round(c.size, 1) for c in visible)
    bold = sum(_is_bold(c.fontname) for c in visible) >= 0.9 * len(visible)
    return Frag(
        text=text, x0=min(c.x0 for c in chars), x1=max(c.x1 for c in chars),
        bottom=min(c.y0 for c in chars), top=max(c.y1 for c in chars),
        size=sizes.most_common(1)[0][0], bold=bold, page=page_no,
    )


def _running_lines(pages: list[_Page]) -> tuple[set[int], dict[int, int]]:
    """Ids of the running header/footer fragments, and printed page numbers found in them per page."""
    n = len(pages)
    need = max(3, n // 4)
    top_band: Counter = Counter()
    bottom_band: Counter = Counter()
    text_at: Counter = Counter()
    for p in pages:
        if not p.frags:
            continue
        top = max(f.mid for f in p.frags)
        bottom = min(f.mid for f in p.frags)
        top_band[round(top / 2)] += 1
        bottom_band[round(bottom / 2)] += 1
        for key in {(round(f.mid / 2), f.text.lower()) for f in p.frags}:
            text_at[key] += 1
    heads = {b for b, c in top_band.items() if c >= need}
    foots = {b for b, c in bottom_band.items() if c >= need}
    running: set[int] = set()
    numbers: dict[int, int] = {}
    for i, p in enumerate(pages):
        if not p.frags:
            continue
        top = round(max(f.mid for f in p.frags) / 2)
        bottom = round(min(f.mid for f in p.frags) / 2)
        for f in p.frags:
            band = round(f.mid / 2)
            edge = (band == top and band in heads) or (band == bottom and band in foots)
            # at a page edge: a running line; elsewhere only the very same text repeated at the same height
            # on many pages (a watermark, a repeated label) is one
            if edge or text_at[(band, f.text.lower())] >= need:
                running.add(id(f))
                last = f.text.split()[-1] if f.text.split() else ""
                first = f.text.split()[0] if f.text.split() else ""
                for word in (last, first):
                    if word.isdigit():
                        numbers.setdefault(i, int(word))
                        break
    return running, numbers


def _page_labels(doc, n: int, printed: dict[int, int]) -> list[str]:
    """Printed page labels: the PDF's /PageLabels, else footer numbers at a constant offset, else physical."""
    from pdfminer.pdfdocument import PDFNoPageLabels

    try:
        # get_page_labels() never ends (it continues the last range): take one per page
        return [str(x) for x in itertools.islice(doc.get_page_labels(), n)]
    except (PDFNoPageLabels, Exception):  # a malformed label tree: fall back, never fail the book
        pass
    offsets = Counter(num - i for i, num in printed.items())
    if offsets:
        off, count = offsets.most_common(1)[0]
        if count >= max(2, len(printed) // 2):
            return [str(i + off) if i + off >= 1 else str(i + 1) for i in range(n)]
    return [str(i + 1) for i in range(n)]


def _gutter(p: _Page, frags: list[Frag]) -> float | None:
    """The x of the gutter between two columns, or None for a one-column page."""
    if len(frags) < 6:
        return None
    w = int(p.width) + 1
    diff = [0] * (w + 2)
    for f in frags:  # coverage by a difference array: linear in fragments + width
        diff[max(0, int(f.x0))] += 1
        diff[min(w, int(f.x1) + 1)] -= 1
    cover, run = [], 0
    for x in range(w):
        run += diff[x]
        cover.append(run)
    lo, hi = int(0.3 * w), int(0.7 * w)
    least = min(cover[lo:hi])
    if least > 0.2 * len(frags):
        return None
    best, start, best_run = None, None, 0
    for x in range(lo, hi + 1):
        if x < hi and cover[x] == least:
            start = x if start is None else start
        elif start is not None:
            if x - start > best_run:
                best, best_run = (start + x) / 2, x - start
            start = None
    if best is None or best_run < 0.01 * w:  # a gutter is wider than a word space
        return None
    left = sum(1 for f in frags if f.x1 <= best)
    right = sum(1 for f in frags if f.x0 >= best)
    # a short last column (a chapter ending) still makes a two-column page
    return best if left >= 1 and right >= 1 and left + right >= 3 else None


def _rows_of(frags: list[Frag]) -> list[Row]:
    """Fragments of one column, top to bottom; fragments on one baseline (table cells) join with ``|``."""
    frags = sorted(frags, key=lambda f: (-f.mid, f.x0))
    rows: list[Row] = []
    group: list[Frag] = []

    def flush() -> None:
        if not group:
            return
        group.sort(key=lambda f: f.x0)
        chars = sum(len(f.text) for f in group)
        size = max(group, key=lambda f: len(f.text)).size
        bold = sum(len(f.text) for f in group if f.bold) >= 0.9 * chars
        rows.append(Row(" | ".join(f.text for f in group), size, bold, group[0].page, max(f.top for f in group)))
        group.clear()

    for f in frags:
        if group and abs(group[0].mid - f.mid) > 0.35 * max(group[0].size, f.size):
            flush()
        group.append(f)
    flush()
    for prev, row in zip(rows, rows[1:], strict=False):
        row.gap_before = prev.top - row.top
    return rows


def _reading_order(p: _Page, running: set[int]) -> list[Row | Sidebar]:
    """One page's rows (and sidebars) in reading order."""
    frags = [f for f in p.frags if id(f) not in running]
    # boxes holding two rows or more are sidebars; a page-sized background is not a box
    inside: dict[int, list[Frag]] = defaultdict(list)
    boxes = [b for b in p.boxes if (b[2] - b[0]) * (b[3] - b[1]) < 0.5 * p.width * p.height]
    boxes.sort(key=lambda b: (b[2] - b[0]) * (b[3] - b[1]), reverse=True)  # outermost first
    taken: set[int] = set()
    for bi, (bx0, by0, bx1, by1) in enumerate(boxes):
        hit = [f for f in frags if id(f) not in taken and bx0 - 1 <= f.x0 and f.x1 <= bx1 + 1 and by0 - 1 <= f.mid <= by1 + 1]
        if len({round(f.mid) for f in hit}) >= 2:
            inside[bi] = hit
            taken.update(id(f) for f in hit)
    flow = [f for f in frags if id(f) not in taken]
    gutter = _gutter(p, flow)
    items: list[tuple[int, int, float, Row | Sidebar]] = []  # (band, column, -top, item)
    # rows across the gutter (a chapter's full-width opening) cut the page into bands, each read left
    # column then right column; a run of such rows is one band, so its paragraph stays whole
    band_at: list[tuple[float, int]] = []  # (mid, band) top to bottom
    band, spanning = 0, None
    for f in sorted(flow, key=lambda f: -f.mid):
        crosses = gutter is not None and f.x0 < gutter < f.x1
        if spanning is not None and crosses != spanning:
            band += 1
        spanning = crosses
        band_at.append((f.mid, band))

    def band_of(y: float) -> int:
        best = 0
        for mid, b in band_at:  # the band of the nearest row above (or the first)
            if mid + 0.01 >= y:
                best = b
            else:
                break
        return best

    def column_of(x0: float, x1: float) -> int:
        if gutter is None or (x0 < gutter < x1):
            return 0
        return 0 if x1 <= gutter else 1

    by_place: dict[tuple[int, int], list[Frag]] = defaultdict(list)
    for f in flow:
        by_place[(band_of(f.mid), column_of(f.x0, f.x1))].append(f)
    for (band, col), group in by_place.items():
        for row in _rows_of(group):
            items.append((band, col, -row.top, row))
    for bi, hit in inside.items():
        bx0, by0, bx1, by1 = boxes[bi]
        side = Sidebar(rows=_rows_of(hit), page=p.frags[0].page, top=by1)
        items.append((band_of((by0 + by1) / 2), column_of(bx0, bx1), -by1, side))
    items.sort(key=lambda t: (t[0], t[1], t[2]))
    return [it for *_, it in items]


def _heading_styles(rows: list[Row]) -> tuple[dict[tuple[int, bool], int], dict[float, int]]:
    """``(size cluster, bold) -> level rank`` and ``size -> cluster``; a new cluster starts where the next
    size is more than 5% larger (sizes of one style drift a little between fonts and exports)."""
    sizes = sorted({r.size for r in rows})
    clusters: dict[float, int] = {}
    cid, prev = 0, None
    for s in sizes:
        if prev is not None and s > prev * 1.05:
            cid += 1
        clusters[s] = cid
        prev = s
    styles = sorted({(clusters[r.size], r.bold) for r in rows}, key=lambda k: (-k[0], not k[1]))
    return {st: i + 1 for i, st in enumerate(styles)}, clusters


def parse_pdf(path: Path, title: str | None = None) -> BookTree:
    """Read ``path`` into a ``BookTree``. A file that is not a readable PDF raises ``GmprepError``."""
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser, PDFSyntaxError

    raw = Path(path).read_bytes()
    digest = hashlib.sha256(raw).hexdigest()[:16]
    pages: list[_Page] = []
    try:
        with open(path, "rb") as fh:
            doc = PDFDocument(PDFParser(fh))
            if not doc.is_extractable:
                raise GmprepError(f"{Path(path).name}: the PDF forbids text extraction")
            rm = PDFResourceManager(caching=True)
            device = PDFPageAggregator(rm, laparams=None)  # characters only: we group them ourselves
            interp = PDFPageInterpreter(rm, device)
            for i, page in enumerate(PDFPage.create_pages(doc)):
                interp.process_page(page)
                pages.append(_page_rows(device.get_result(), i))
            meta_title = _meta_title(doc)
            running, printed = _running_lines(pages)
            labels = _page_labels(doc, len(pages), printed)
    except GmprepError:
        raise
    except (PDFSyntaxError, Exception) as exc:  # pdfminer raises many types on damaged files
        raise GmprepError(f"{Path(path).name}: not a readable PDF ({type(exc).__name__}: {exc})") from exc
    if not any(p.frags for p in pages):
        raise GmprepError(f"{Path(path).name}: no text found (a scanned PDF needs OCR first)")
    flow: list[Row | Sidebar] = []
    for p in pages:
        flow.extend(_reading_order(p, running))
    return _build_tree(flow, labels, title or meta_title, Path(path).name, digest, len(pages))


def _meta_title(doc) -> str | None:
    from pdfminer.pdftypes import resolve1

    for info in doc.info or []:
        value = resolve1(info.get("Title"))
        if isinstance(value, bytes):
            value = value.decode("utf-16" if value.startswith(b"\xfe\xff") else "latin-1", errors="replace")
        if isinstance(value, str) and value.strip() and not value.lower().endswith((".pdf", ".doc", ".indd")):
            return value.strip().lstrip("\ufeff")
    return None


def _build_tree(flow: list[Row | Sidebar], labels: list[str], title: str | None, source: str, digest: str,
                n_pages: int) -> BookTree:
    rows = [it for it in flow if isinstance(it, Row)]
    chars: Counter = Counter()
    for r in rows:
        chars[r.size] += len(r.text)
    body = chars.most_common(1)[0][0]
    # the title page: the first page with text; its largest row is the title when metadata has none
    first_page = rows[0].page
    title_rows = [r for r in rows if r.page == first_page]
    if not title:
        biggest = max(r.size for r in title_rows)
        title = " ".join(r.text for r in title_rows if r.size == biggest)
    pitch = statistics.median([r.gap_before for r in rows if r.gap_before > 0] or [body * 1.2])

    def heading_like(r: Row) -> bool:
        if r.page == first_page or len(r.text) < 2 or not any(ch.isalpha() for ch in r.text):
            return False
        if r.size >= body * 1.08:
            return True
        return r.bold and number_depth(*split_number(r.text)) is not None and r.size >= body * 0.98

    # multi-line headings: consecutive heading rows of one style, close together, are one heading
    merged: list[Row | Sidebar] = []
    for it in flow:
        prev = merged[-1] if merged else None
        if (isinstance(it, Row) and isinstance(prev, Row) and heading_like(it) and heading_like(prev)
                and (it.size, it.bold) == (prev.size, prev.bold) and it.page == prev.page
                and 0 < it.gap_before <= it.size * 1.6):
            prev.text = f"{prev.text} {it.text}"
            continue
        merged.append(Row(**vars(it)) if isinstance(it, Row) else it)
    heads = [r for r in merged if isinstance(r, Row) and heading_like(r) and len(r.text.split()) <= 16]
    ranks, clusters = _heading_styles(heads)
    flat: list[tuple[Section, int]] = []
    preface: list[Row] = []
    current: list[Row] = preface
    head_ids = {id(r) for r in heads}
    bodies: dict[int, list[Row]] = {}  # id(section) -> its rows
    for it in merged:
        if isinstance(it, Sidebar):
            first = it.rows[0] if it.rows else None
            # titled by its first row when that row is bold or larger than the box's text
            titled = first is not None and len(it.rows) > 1 and (first.bold or first.size > it.rows[1].size)
            name = first.text if first is not None and titled else "Sidebar"
            text = _paragraphs(it.rows[1:] if titled else it.rows, pitch)
            sec = Section(title=name, level=0, kind="sidebar", page=labels[it.page], physical_page=it.page + 1,
                          text=text)
            flat.append((sec, 0))
            continue
        if id(it) in head_ids:
            number, name = split_number(it.text)
            level = number_depth(number, it.text) or ranks[(clusters[it.size], it.bold)]
            sec = Section(title=name, level=level, page=labels[it.page], physical_page=it.page + 1, number=number)
            flat.append((sec, level))
            current = bodies[id(sec)] = []
            continue
        current.append(it)
    for sec, _ in flat:
        if id(sec) in bodies:
            sec.text = _paragraphs(bodies[id(sec)], pitch)
    return BookTree(title=title, source=source, format="pdf", pages=n_pages, digest=digest,
                    preface=_paragraphs(preface, pitch), sections=nest(flat))


def _paragraphs(rows: list[Row], pitch: float) -> str:
    """Rows joined into paragraphs: a blank line where the vertical gap is clearly wider than a line's."""
    out: list[str] = []
    for r in rows:
        if out and (r.gap_before > pitch * 1.25 or r.gap_before <= 0):
            out.append("\n\n")
        elif out:
            # a word hyphenated at the line end ("condi-" + "tion") joins; "Off-" + "Guard" keeps its hyphen
            if out[-1].endswith("-") and r.text[:1].islower():
                out[-1] = out[-1][:-1]
                out.append(r.text)
                continue
            out.append("\n" if " | " in r.text else " ")
        out.append(r.text)
    return "".join(out).strip()
