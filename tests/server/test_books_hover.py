"""After ``books add`` of a generated Player Core, the real hover (pytest-lsp over stdio) of a bundled
condition names the page the book printed it on."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from lsp_helpers import PREP_NOTE, copy_store, open_doc, position_of
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from gmprep.common.settings import Settings
from gmprep.ingest.books.store import add_book

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("books_pdf", REPO / "bench" / "books_pdf.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["books_pdf"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def book_truth(tmp_path_factory) -> tuple[Path, dict]:
    import random

    gen = _generator()
    path = tmp_path_factory.mktemp("book") / "pc.pdf"
    truth = gen.write_book(path, "Pathfinder Player Core", [gen.conditions_chapter(random.Random(5))])
    return path, truth


@pytest.fixture(scope="module")
def lsp_store(store_dir: Path, tmp_path_factory: pytest.TempPathFactory, book_truth) -> Path:
    """This module's server store: the session store plus the generated book (overrides conftest's)."""
    store = copy_store(store_dir, tmp_path_factory.mktemp("lsp") / "store")
    add_book(Settings(store_dir=store), book_truth[0], progress=False)
    return store


async def test_hover_of_a_bundled_condition_shows_the_books_page(client: LanguageClient, workspace: Path, book_truth):
    _, truth = book_truth
    page = next(h["page"] for h in truth["headings"] if h["title"] == "Frightened")
    uri = open_doc(client, workspace / "session-04.md")
    pos = position_of(PREP_NOTE, "frightened 2")
    h = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=pos)
    )
    assert h is not None
    md = h.contents.value
    assert "### Frightened" in md and f"Pathfinder Player Core, p. {page}" in md
