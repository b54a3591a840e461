"""Rules of the organized-play campaign, which its own guide states and the books gmprep holds do not.

Pathfinder Society play has rules of its own (rebuilding a new character, chronicle sheets, boons, access to
uncommon options, reputation), written in the *Guide to Organized Play*, a free book gmprep does not hold. The
held books name the campaign and send the reader to its site (GM Core's "Pathfinder Society" sections), so
retrieval finds the core rule of the same name (buying items, retraining) or tangents, and quotes them as if they
answered a campaign question.

``core/agents/data/organized-play.json`` is the guide's outline: its section titles as the guide heads them,
the guide page each sits on and a one-line scope, written from the guide's table of contents and pages (sources in
its manifest), not from the questions. A question asks about such a section when it names the campaign ("PFS",
"Pathfinder Society", "organized play") *and* names the section (every content word of its title, stemmed, as
the core outline's ``coverage.OutlineCoverage.candidates``). Naming the campaign alone is not enough: "running a
PFS scenario with an ambush" asks about initiative, which the held books state. The guide's sections count as held
once an entry of a book named for the guide is in the store (``gmprep books add`` of the guide's PDF).
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, Field

from gmprep.common.text import STOP_WORDS
from gmprep.core.agents.coverage import OutlineSection, title_stems

CAMPAIGN_FILE = "organized-play.json"


class Campaign(BaseModel):
    book: str  # the guide's full title
    short: str  # how the decline names it and how a held copy's book is recognised
    names: list[str]  # the campaign's names as the guide and its players write them


class CampaignOutline(BaseModel):
    manifest: dict = Field(default_factory=dict)
    campaign: Campaign
    sections: list[OutlineSection]


@lru_cache(maxsize=1)
def load_campaign() -> CampaignOutline:
    """The bundled outline of the campaign's guide (``core/agents/data/organized-play.json``)."""
    text = resources.files("gmprep.core.agents").joinpath("data", CAMPAIGN_FILE).read_text(encoding="utf-8")
    return CampaignOutline.model_validate(json.loads(text))


class CampaignMatch(BaseModel):
    section: OutlineSection
    named: str  # the campaign's name as the question writes it
    book: str  # the guide's short title


class CampaignRules:
    """Which section of the campaign's guide a question asks about, when the store does not hold the guide."""

    def __init__(self, store, outline: CampaignOutline | None = None):
        self.store = store
        self.outline = outline or load_campaign()
        names = sorted(self.outline.campaign.names, key=len, reverse=True)
        self._name = re.compile(r"(?<![\w-])(" + "|".join(re.escape(n) for n in names) + r")(?![\w-])",
                                flags=re.IGNORECASE)
        self._stems = {s.id: title_stems(s.title) for s in self.outline.sections}
        self._lock = threading.Lock()
        self._uses: dict[str, bool] = {}
        short = re.escape(self.outline.campaign.short)
        self._guide = re.compile(r"(?<![\w-])(?:" + short + r"|(?:" + "|".join(re.escape(n) for n in names)
                                 + r")(?:'s)? Guide)(?![\w-])")

    def guide_named(self, question: str) -> str:
        """The campaign's guide as the question names it ("Guide to Organized Play", "the new PFS2 Guide": a campaign
        name followed by "Guide"), or "" when it does not or the store holds the guide. A book named by its title,
        as ``otherbooks.publication_terms`` finds the others."""
        m = self._guide.search(question)
        if m is None or self.held():
            return ""
        return m.group(0)

    def held(self) -> bool:
        """The store has entries of a book named for the guide (added with ``gmprep books add``)."""
        row = self.store.db.execute("SELECT 1 FROM nodes WHERE kind = 'entry' AND book LIKE ? LIMIT 1",
                                    (f"%{self.outline.campaign.short}%",)).fetchone()
        return row is not None

    def about(self, question: str, own_titles: bool = False) -> CampaignMatch | None:
        """The guide's section the question asks about (the most specific title it names), or None when the
        question does not name the campaign, names none of its sections, or the store holds the guide. With
        ``own_titles``, a question that does not name the campaign but writes one of the guide's own titles
        (``own_title``: "challenge points") asks about that section."""
        m = self._name.search(question)
        if m is None:
            own = self.own_title(question) if own_titles else None
            if own is None or self.held():
                return None
            return CampaignMatch(section=own, named="organized play", book=self.outline.campaign.short)
        q = title_stems(question)  # the question's content words, stemmed as the titles' are
        best: OutlineSection | None = None
        for s in self.outline.sections:
            ts = self._stems[s.id]
            if ts and ts <= q and (best is None or len(ts) > len(self._stems[best.id])):
                best = s
        if best is None or self.held():
            return None
        return CampaignMatch(section=best, named=m.group(1), book=self.outline.campaign.short)

    def own_title(self, question: str) -> OutlineSection | None:
        """The guide's section whose title the question writes (its words in order, the last singular or plural),
        when that title is the campaign's own word: two words or more, none a function word, that no held entry's name
        or text uses ("Challenge Points", "Achievement Points"; not "Boons", "Chronicle Sheets" or "Character Options",
        which the core books use too, nor "Dealing with Errata"). The campaign's vocabulary, read from the guide's outline and the store, not from questions."""
        words = _words(question)
        for s in sorted(self.outline.sections, key=lambda s: -len(s.title)):
            title = _words(s.title)
            if len(title) < 2 or any(w in STOP_WORDS for w in title) or not _says(words, title):
                continue
            if not self._used(" ".join(title)):
                return s
        return None

    def _used(self, phrase: str) -> bool:
        """A held entry's name or text uses ``phrase`` (FTS phrase match, porter-stemmed: singular and plural)."""
        with self._lock:
            if phrase not in self._uses:
                quoted = '"' + phrase.replace('"', " ") + '"'
                try:
                    row = self.store.db.execute("SELECT 1 FROM fts WHERE fts MATCH ? LIMIT 1", (quoted,)).fetchone()
                    self._uses[phrase] = row is not None
                except sqlite3.Error:
                    self._uses[phrase] = True  # unknown: not the campaign's own word
            return self._uses[phrase]


_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def _says(words: list[str], title: list[str]) -> bool:
    """``words`` hold ``title`` in order, its last word singular or plural."""
    n = len(title)
    last = title[-1].rstrip("s")
    return any(words[i:i + n - 1] == title[:-1] and words[i + n - 1].rstrip("s") == last
               for i in range(len(words) - n + 1))
