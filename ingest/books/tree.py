"""The parsed book: a title and a tree of sections, each with its heading level and printed page.

Every reader (PDF, markdown, HTML) produces a ``BookTree``; ``ingest.books.store`` turns it into graph
nodes and keeps it, as JSON, in the user's store. Levels: 1 chapter, 2 section, 3 subsection, deeper
as found. Sidebars are their own nodes (``kind="sidebar"``) under the section they sit in; tables and
stat blocks stay in their section's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

from pydantic import BaseModel, Field

LEVEL_NAMES = {1: "chapter", 2: "section", 3: "subsection"}
# "3.2 Frightened", "3.2. Frightened", "Chapter 3: Conditions", "Part II - ..." -> (number, title)
_NUMBERED = re.compile(r"^(?:(?:chapter|part|appendix)\s+)?(\d+(?:\.\d+)*|[IVXLC]+)[.:)]?\s+[-–—:]?\s*(\S.*)$", re.I)


def split_number(text: str) -> tuple[str | None, str]:
    """``("3.2", "Frightened")`` for a numbered heading, ``(None, text)`` otherwise."""
    m = _NUMBERED.match(text.strip())
    if not m:
        return None, text.strip()
    num, rest = m.group(1), m.group(2).strip()
    if num.isalpha() and not text.lower().startswith(("chapter", "part", "appendix")):
        return None, text.strip()  # "I Am Legend" is not numbered
    return num, rest


def number_depth(number: str | None, text: str) -> int | None:
    """The level a heading's numbering states: ``Chapter 3`` -> 1, ``3.2`` -> 2, ``3.2.1`` -> 3."""
    if not number:
        return None
    if text.strip().lower().startswith(("chapter", "part", "appendix")):
        return 1
    return number.count(".") + 1 if number[0].isdigit() else None


class Section(BaseModel):
    """One heading (or sidebar) with the text up to the next heading and its subsections."""

    title: str
    level: int
    kind: Literal["heading", "sidebar"] = "heading"
    page: str | None = None  # printed page label (else the physical page number); None for exports
    physical_page: int | None = None  # 1-based page of the PDF file
    number: str | None = None  # the heading's own numbering ("3.2"), when it had one
    text: str = ""
    children: list[Section] = Field(default_factory=list)

    def walk(self) -> Iterator[Section]:
        yield self
        for child in self.children:
            yield from child.walk()


class BookTree(BaseModel):
    """A whole book as parsed: what ``gmprep books add`` ingests and keeps in the store."""

    title: str
    source: str  # the file name the book was read from (the path stays on the user's machine only)
    format: Literal["pdf", "markdown", "html"]
    pages: int = 0
    digest: str = ""
    preface: str = ""  # text before the first heading (title page, contents)
    sections: list[Section] = Field(default_factory=list)

    def walk(self) -> Iterator[Section]:
        """Every section, depth first, in reading order."""
        for s in self.sections:
            yield from s.walk()


def nest(flat: list[tuple[Section, int]]) -> list[Section]:
    """Build the tree from sections in reading order with their levels (a stack of open headings).

    A sidebar belongs to the heading open where it sits and never opens a level itself.
    """
    roots: list[Section] = []
    stack: list[Section] = []
    for sec, level in flat:
        if sec.kind == "sidebar":
            sec.level = stack[-1].level + 1 if stack else 1
            (stack[-1].children if stack else roots).append(sec)
            continue
        while stack and stack[-1].level >= level:
            stack.pop()
        (stack[-1].children if stack else roots).append(sec)
        stack.append(sec)
    return roots
