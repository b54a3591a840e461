"""The Pathfinder 1st Edition publications, by title, from a clone of jasontankapps/pathfinder-data-1-e
(``json/sources.json``: every book, companion, Adventure Path volume and player's guide its data cites). Only the
titles are kept: a question that names one ("Pathfinder Unchained", "a Reign of Winter campaign") asks about
another edition's book (``core/agents/otherbooks.publication_terms``)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from gmprep.ingest.aon_sources import Publication

SOURCES = "json/sources.json"
LINE = "Pathfinder 1st Edition"
# "Reign of Winter Player's Guide": the Adventure Path is the group its volumes belong to
_GUIDE = re.compile(r"^(?P<ap>.+?) Player's Guide$")


def parse_sources(text: str, path: str, commit: str, known: Iterable[str] = ()) -> list[Publication]:
    """The publications ``sources.json`` lists, less blog posts, anything titled for the 2nd Edition, and titles
    ``known`` already names (the Pathfinder 2e publications and their groups: "Advanced Player's Guide", "Kingmaker"
    are Pathfinder 2e books too, and a 2e question names them far more often)."""
    taken = {t.casefold() for t in known}
    out: list[Publication] = []
    for item in json.loads(text).values():
        title = " ".join(str(item.get("title", "")).split())
        if not title or title.startswith("Paizo Blog") or "2nd Edition" in title:
            continue
        m = _GUIDE.match(title)
        group = m.group("ap") if m else ""
        if group.casefold() in taken:
            group = ""
        if title.casefold() in taken:
            continue
        out.append(Publication(title, LINE, group, path, commit))
    return out


def read_pf1_publications(git_dir: Path, known: Iterable[str] = ()) -> list[Publication]:
    """``parse_sources`` over a clone (a bare mirror or a checkout) of jasontankapps/pathfinder-data-1-e."""
    def git(*args: str) -> str:
        return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True,
                              text=True).stdout
    commit = git("rev-parse", "HEAD").strip()
    return parse_sources(git("show", f"HEAD:{SOURCES}"), SOURCES, commit, known)
