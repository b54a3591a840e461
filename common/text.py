"""Text: the one tokeniser (words, stop words, stems, content words), the one query-focused
paragraph picker, and the text views of a node (the contextual chunk for embeddings, plain text).

Tokeniser: every module that compares a query's words with a passage's (BM25 query terms, the
reranker's and the answer's paragraph picker, the searcher's link focus, the relevance judge's
coverage) goes through ``words`` / ``content_words`` / ``content_stems`` here, so that "what counts
as a word" and "when do two words match" are decided once. Stems come from the Snowball English
(Porter2) stemmer (``snowballstemmer``), not hand-written suffix rules: "trips"/"tripped"/"tripping"
-> "trip", "poisoned" -> "poison"; the stem is then cut to five letters so that derived forms meet too
("succeeds"/"success", "critically"/"critical"), as the degree-of-success questions need.

Contextual chunk headers: a node is embedded with its ancestor path, name, type, level and traits
in front of its text, so that a short entry ("Prone") still carries what it is and where it lives.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from functools import lru_cache

import snowballstemmer

from gmprep.kg.models import Node

# ----- the tokeniser ---------------------------------------------------------------------------------
# A word: a run of letters/digits, with an inner apostrophe kept ("what's", "don't"), lowercased.
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# English function words: they say how a sentence is built, not what it is about. One list for every
# user; the question-framing words below are a separate, named addition for the relevance judge only.
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can can't could did do does doesn't doing don't down during each few for from further
    had has have having he her here hers herself him himself his how how's i i'm if in into is it it's its
    itself just let's me more most my myself no nor not now of off on once one only or other our ours
    ourselves out over own same she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up us very was we were what what's whats when
    where which while who whom why will with won't would you your yours yourself yourselves also""".split()
)
# Words a rules question is phrased with that say nothing about which rule is meant ("how does X work
# exactly", "tell me the rules for Y"). Not stop words for search (a "rules" page, "use" in a text), but
# the relevance judge does not count them as words a passage has to cover.
QUESTION_WORDS = frozenset(
    """get gets got make makes much many still even two three four five six first second third next last
    like really want wants need needs work works happen happens rule rules exactly tell give go goes going
    use uses used""".split()
)
_STEMMERS = threading.local()  # a Snowball stemmer keeps the word it works on: one per thread (the answer steps
# search and judge in worker threads at once; a shared one garbled words mid-stem, IndexError in CI)


@lru_cache(maxsize=65536)
def snowball_stem(word: str) -> str:
    """The Snowball English stem of ``word`` (as given), from this thread's own stemmer. Cached: the books' names,
    aliases and bold headings alone are ~54,000 words to stem (``core.agents.stated``), about a tenth of them distinct."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word)


def words(text: str) -> list[str]:
    """Every word of ``text``, lowercased, in order (apostrophes inside a word kept)."""
    return _WORD.findall(text.lower().replace("\u2019", "'"))


# Snowball joins a word's inflections ("tripped" -> "trip") but keeps derivations apart ("succeed" /
# "success", "critical" / "criticality"), and the degree-of-success words of every rules question are
# such pairs: "if I Trip and succeed" must find the "Success" line. Measured on the dev questions (see
# the docstring): the Snowball stem alone lost Trip -> Prone; its first 5 letters join the families.
STEM_CHARS = 5


@lru_cache(maxsize=65536)
def full_stem(word: str) -> str:
    """The Snowball English stem of one lowercased word, uncut ("befuddled", "befuddling" -> "befuddl";
    "engines" -> "engin"): one word's inflections, without ``stem``'s looser cut."""
    return snowball_stem(word)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The match key of one lowercased word: its Snowball English stem, cut to ``STEM_CHARS`` letters
    ("tripped" -> "trip", "succeeds" / "success" -> "succe", "critically" -> "criti")."""
    return snowball_stem(word)[:STEM_CHARS]


def content_words(text: str, min_len: int = 3, extra_stop: frozenset[str] = frozenset()) -> list[str]:
    """The words of ``text`` that carry meaning: no stop words (nor ``extra_stop``), no word shorter
    than ``min_len`` unless it is a number ("level 3"), possessive "'s" dropped. In order, repeats kept."""
    out = []
    for w in words(text):
        if w in STOP_WORDS or w in extra_stop:
            continue
        w = w.removesuffix("'s")
        if len(w) >= min_len or w.isdigit():
            out.append(w)
    return out


def content_stems(text: str, extra_stop: frozenset[str] = frozenset()) -> set[str]:
    """The stems of ``text``'s content words: what two texts are compared by."""
    return {stem(w) for w in content_words(text, extra_stop=extra_stop)}


_ACRONYM = re.compile(r"\b[A-Z]{2}\b")


def acronyms(text: str) -> set[str]:
    """The two-letter capitals of ``text`` ("AC", "HP", "DC"): too short to be content words, yet in a
    question about a stat block they name the line asked for."""
    return set(_ACRONYM.findall(text))


_NUMBER = re.compile(r"(?<![\w.+-])(\d+)(?:st|nd|rd|th)?(?![\w.])")


def exact_terms(text: str) -> set[str]:
    """What a question names exactly and the content words miss: its two-letter capitals (``acronyms``)
    and its whole numbers, an ordinal as its number ("a 5th-level fey" -> ``#5``, the row ``Level 5: DC
    20`` of a table; "+2" or "1d6" are no such number)."""
    return acronyms(text) | {f"#{n}" for n in _NUMBER.findall(text)}


def pick_paragraphs(paragraphs: Sequence[str], query: str, budget: int, match_exact: bool = False) -> list[int]:
    """The one query-focused passage picker: indexes of the paragraphs to keep so that the fact a
    question asks about survives a cut to ``budget`` characters, best first (the opening, then by
    match; callers show them in text order but give room in this order).

    The opening paragraph is always kept (it says what the entry is; callers may shorten it to half the
    budget). The rest are taken by how many of the query's content stems they share, ties in text
    order, until the budget is spent; once half the budget is used, paragraphs sharing nothing with
    the query are no longer added (they would only push the asked-for text out of a short window).
    The last paragraph taken may overrun the budget: callers cut the joined text. ``match_exact`` also
    matches the query's two-letter capitals and numbers (``exact_terms``); the answers' excerpts use it,
    the reranker's passages (what it was trained on) do not."""
    if not paragraphs:
        return []
    wanted = content_stems(query)
    overlap = [len(wanted & content_stems(p)) for p in paragraphs]
    if match_exact and (exact := exact_terms(query)):  # the answer's excerpts ("what are its AC and saves?")
        wanted |= exact
        overlap = [n + len(exact & exact_terms(p)) for n, p in zip(overlap, paragraphs, strict=True)]
    chosen = [0]
    used = min(len(paragraphs[0]), budget // 2) + 1
    for i in sorted(range(1, len(paragraphs)), key=lambda i: (-overlap[i], i)):
        if used >= budget:
            break
        if wanted and not overlap[i] and used > budget // 2:
            break
        chosen.append(i)
        used += len(paragraphs[i]) + 1
    return chosen


def cut_words(text: str, max_chars: int, mark: str = " ...") -> str:
    """``text`` cut to at most ``max_chars`` on a word boundary, ``mark`` added when anything was cut."""
    if len(text) <= max_chars:
        return text
    room = max(0, max_chars - len(mark))
    return text[: room + 1].rsplit(" ", 1)[0] + mark  # +1: a cut right before a space keeps the word


# ----- text views of a node ----------------------------------------------------------------------------

_GLYPHS = {
    "[one-action]": "(1 action)",
    "[two-actions]": "(2 actions)",
    "[three-actions]": "(3 actions)",
    "[reaction]": "(reaction)",
    "[free-action]": "(free action)",
}
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_WIKI = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
_MDLINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}.*$", re.M)
_SPACES = re.compile(r"[ \t]+")


@lru_cache(maxsize=1)
def _table_parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def _table_rows(head: list[str], body: list[list[str]]) -> list[list[tuple[str, str]]]:
    """The rows of one table, each as its (header, cell) pairs, the row's first cell first. A table printed as two
    side by side (``Level | DC | | Level | DC``: an empty spacer column, or the header repeated) is read as the two it
    is, left one first; a row with only its first cell (a note across the table) is kept as that one pair."""
    width = len(head)
    body = [row + [""] * (width - len(row)) for row in body]
    spacer = [k for k in range(width) if not head[k] and not any(row[k] for row in body)]
    if spacer:
        bounds = [-1, *spacer, width]
        groups = [(lo + 1, hi) for lo, hi in zip(bounds, bounds[1:], strict=False) if hi > lo + 1]
    else:
        period = next((p for p in range(2, width) if width % p == 0
                       and all(head[k] == head[k % p] for k in range(width))), width)
        groups = [(lo, lo + period) for lo in range(0, width, period)]
    out = []
    for lo, hi in groups:
        for row in body:
            cells = row[lo:hi]
            if not any(cells):
                continue
            if cells[0] and not any(cells[1:]):
                out.append([("", cells[0])])
                continue
            out.append([(h, c) for h, c in zip(head[lo:hi], cells, strict=False)])
    return out


def _row_line(row: list[tuple[str, str]]) -> str:
    """One row as ``Head0 cell0: Head1 cell1, Head2 cell2`` (a lone note as itself)."""
    if len(row) == 1 and not row[0][0]:
        return row[0][1]
    (h0, c0), rest_cells = row[0], row[1:]
    rest = ", ".join(f"{h} {c}".strip() for h, c in rest_cells if c)
    first = f"{h0} {c0}".strip() if c0 else ""
    return f"{first}: {rest}" if first and rest else first or rest


def _tables(text: str) -> list[tuple[int, int, list[list[tuple[str, str]]]]]:
    """Each markdown table of ``text``: its first and past-last line, and its rows (``_table_rows``)."""
    if "|" not in text:
        return []
    tokens = _table_parser().parse(text)
    spans: list[tuple[int, int, list[list[tuple[str, str]]]]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type != "table_open" or tok.map is None:
            i += 1
            continue
        rows: list[list[str]] = []
        j = i + 1
        while tokens[j].type != "table_close":
            if tokens[j].type == "tr_open":
                rows.append([])
            elif tokens[j].type == "inline" and rows:
                rows[-1].append(tokens[j].content.strip())
            j += 1
        spans.append((tok.map[0], tok.map[1], _table_rows(rows[0], rows[1:]) if rows else []))
        i = j + 1
    return spans


def linear_tables(text: str) -> str:
    """``text`` with each markdown table written out row by row, every cell beside its column's header
    (``Standard of Living Comfortable: Week 1 gp, Month 4 gp, Year 52 gp``), the rest unchanged.

    Why: flattened to a run of words ("Comfortable 1 gp 4 gp 52 gp") a table loses its columns, and a
    small model reading it answers with the wrong one (a year's cost asked per month). Tables are found
    with markdown-it-py's table rule (the parser the notes are read with), so a pipe in prose is left alone."""
    spans = _tables(text)
    if not spans:
        return text
    lines = text.split("\n")
    for start, end, rows in reversed(spans):
        lines[start:end] = [_row_line(row) for row in rows]
    return "\n".join(lines)


def table_cells(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """``text`` without its markdown tables, and every cell of them as (row's first cell, column header, cell)."""
    spans = _tables(text)
    if not spans:
        return text, []
    lines = text.split("\n")
    cells: list[tuple[str, str, str]] = []
    for start, end, rows in reversed(spans):
        lines[start:end] = []
        for row in rows:
            label = row[0][1]
            cells.extend((label, h, c) for h, c in row)
    return "\n".join(lines), cells


def clean_markdown(text: str) -> str:
    """Markdown -> readable plain text: glyph tags as words, no bold markers or link syntax."""
    for tag, word in _GLYPHS.items():
        text = text.replace(tag, word)
    text = _BOLD.sub(r"\1", text)
    text = _WIKI.sub(lambda m: m.group(2) or m.group(1), text)
    text = _MDLINK.sub(r"\1", text)
    text = _TABLE_RULE.sub("", text)
    text = text.replace("|", " ").replace("#", "")
    return _SPACES.sub(" ", text).strip()


def header(node: Node) -> str:
    """The chunk header: ``Book > Chapter > Section > Name`` then type, level and traits."""
    crumbs = " > ".join([*node.path, node.name])
    meta = node.type
    if node.level is not None:
        meta += f" {node.level}"
    if node.traits:
        meta += "; traits: " + ", ".join(node.traits)
    if node.aliases:
        meta += "; also called: " + ", ".join(node.aliases)
    return f"{crumbs}\n{meta}"


def contextual_text(node: Node, max_chars: int = 2000) -> str:
    """Header + body (text, or the summary for structural nodes), cut to ``max_chars``."""
    body = clean_markdown(node.text) if node.text else node.summary
    return f"{header(node)}\n{body}"[:max_chars]


def plain_text(node: Node, max_chars: int = 2000) -> str:
    """The entry text alone, no header: the naive dense baseline embeds this."""
    return clean_markdown(node.text or node.summary)[:max_chars]


def excerpt(text: str, max_chars: int = 240) -> str:
    """A short one-paragraph excerpt cut on a word boundary."""
    flat = clean_markdown(text).replace("\n", " ")
    if len(flat) <= max_chars:
        return flat
    return flat[:max_chars].rsplit(" ", 1)[0] + " ..."
