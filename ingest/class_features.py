"""Class features with their rules text from the Archives-of-Nethys class notes of the kmdavis/xuartlek vault.

Why: the bundled corpus had class-feature entries for few of the 16 Player Core / Player Core 2 classes, most of
them a name and a note that the text lives in Foundry's ``classfeatures`` compendium (not available here). The
kmdavis/xuartlek Obsidian vault imports the Archives of Nethys (ORC content) into one note per class,
``content/srd/pf2e/compendium/character/classes/<class>.md``, whose *Class Features* part has the class's level
table (``5Attribute boosts, ancestry feat, ranger weapon expertise, ...``) and then each feature either as a
``#### Name`` heading with its paragraphs or as a two-column table row ``| **Name** | text |``, and a footer
``*Source: Player Core p. 152*`` (the class's page). This module reads that part (from a checkout, or from the
transcription kept in ``ingest/data/xuartlek-transcribed/classes/``) and merges the features into the corpus:

- a heading or row whose name is in the level table is a feature, at the first level the table gives it;
  the features every class shares (ancestry and background, attribute boosts, initial proficiencies, skill
  and general feats, skill increases, ancestry feats) are not class features of one class and are skipped;
- any other heading (``### Heightening Spells``, the champion's ``#### Deific Weapon``) is a part of the
  feature before it and is kept inside that feature's text as a ``### `` heading;
- an existing entry of the same id: a placeholder (the note that the text is in the Foundry compendium, or
  a stray word such as ``Description``) is replaced by the note's text; text from Foundry's classfeatures
  pack is kept when it states the feature (it is the canonical text); the abridged journal import is kept
  after the note's text where it adds to it (a list of instincts, a spell-slot table, an action block); a feature without an entry becomes one, unless an entry of another type (an action, feat, spell)
  has its name: "You gain the Hunt Prey action" is the action's entry, and a second entry of that name would
  take its hovers;
- every class feature links to its class, and to what the text names as gained (``the Rage action``,
  ``the Shield Block general feat``) or as an italic spell name (``_heal_``) when an entry has that name;
- the class entry gets the note's page when it has none. The note gives no page per feature, so features
  keep ``page`` null rather than the class's first page.

Nothing is written by hand: every text is the note's, wiki links written as their labels.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gmprep.ingest.creature_speed import REPO, with_source
from gmprep.ingest.foundry.convert import entry_slug

CLASSES_DIR = "content/srd/pf2e/compendium/character/classes"
# The 16 classes of Player Core and Player Core 2 (the corpus's class entries of those books).
CORE_CLASSES = ("alchemist", "barbarian", "bard", "champion", "cleric", "druid", "fighter", "investigator", "monk",
                "oracle", "ranger", "rogue", "sorcerer", "swashbuckler", "witch", "wizard")
# Level-table items every class has (the book's generic class advancement), not features of one class.
SHARED = {"ancestry and background", "attribute boosts", "initial proficiencies", "skill feat", "general feat",
          "skill increase", "ancestry feat"}
# A level-table item whose feature the note prints under another name.
TABLE_ALIASES = {("witch", "hexes"): "hex spells"}
# What the corpus's placeholder class features say instead of the rules text.
PLACEHOLDER = "is embedded from the Foundry classfeatures compendium"
MIN_TEXT = 40  # shorter texts are stray words of the journal import ("Description", "Master")

WIKI = re.compile(r"\[\[[^\]|]*\\?\|([^\]]*)\]\]|\[\[([^\]|]*)\]\]")
HEADING = re.compile(r"^(#{3,4}) (.+?)\s*$")
ROW = re.compile(r"^\| \*\*(.+?)\*\* \| (.*?) \|?\s*$")
SOURCE = re.compile(r"^\*Source: (.+?) p\. (\d+)\*\s*$")
RANK_ROW = re.compile(r"^\d+(?:st|nd|rd|th)-rank spells$")
GAINED = re.compile(r"\b(?:gain|with|using) (?:the |your choice of the )?([A-Z][\w'’-]*(?: [A-Za-z][\w'’-]*){0,3}) "
                    r"(?:action|reaction|free action|activity|general feat|feat|hex|devotion spell)\b")
ITALIC = re.compile(r"(?<![\w*])_([^_\n]+)_(?![\w*])")


@dataclass(frozen=True)
class Feature:
    """One class feature of a note: name as printed, first level, text (Markdown paragraphs)."""

    name: str
    level: int | None
    text: str


@dataclass(frozen=True)
class ClassNote:
    """The class-features part of one class note, with where it was read."""

    cls: str  # the class's id slug ("ranger")
    features: list[Feature]
    book: str  # "Player Core 2", from the footer
    page: str  # the class's page, from the footer
    path: str
    commit: str
    unplaced: list[str] = field(default_factory=list)  # level-table items without a heading or row


@dataclass
class ClassFeatureReport:
    """What ``add_class_features`` changed, and what it left out."""

    created: list[str] = field(default_factory=list)
    text_added: list[str] = field(default_factory=list)
    linked_to_class: int = 0
    class_pages: list[str] = field(default_factory=list)
    name_taken: list[str] = field(default_factory=list)  # "Ranger: Hunt Prey (action)"


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u2019", "'")).strip().lower()


def _labels(text: str) -> str:
    """Wiki links as their labels (``[[a/b|Off-Guard]]`` -> ``Off-Guard``), HTML entities decoded, and the
    importer's stray ``<%END>`` marker dropped."""
    text = WIKI.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2).rsplit("/", 1)[-1], text)
    return html.unescape(text).replace("<%END>", "")


def _level_table(lines: list[str], start: int) -> tuple[dict[str, int], int]:
    """Items of the ``1Ancestry and background, ...`` .. ``20...`` rows -> first level; and the line after.
    Rows come in order, so ``32nd-rank spells, ...`` is level 3's row."""
    items: dict[str, int] = {}
    level, i = 1, start
    while i < len(lines) and level <= 20:
        line = lines[i].strip()
        if line.startswith(str(level)):
            for item in line[len(str(level)):].split(","):
                key = _norm(item)
                # a missing comma glues an item to a shared one ("skill increase weapon mastery")
                key = next((key[len(s) + 1:] for s in SHARED if key.startswith(s + " ")), key)
                if key and key not in SHARED and not RANK_ROW.match(key):
                    items.setdefault(key, level)
            level += 1
        elif line:
            break
        i += 1
    return items, i


def _match(name: str, items: dict[str, int], cls: str) -> int | None:
    """The level of the table item naming this heading: the same words (``Muses``/``muse``, ``Reflex
    Expertise``/``reflex expert``), or an item that starts or ends with them (``sneak attack 1d6``,
    ``wizard weapon expertise``, the champion's ``skill increase weapon mastery``)."""
    key = _norm(name)
    aliased = {TABLE_ALIASES.get((cls, k), k): lvl for k, lvl in items.items()}
    if key in aliased:
        return aliased[key]
    for k, lvl in aliased.items():
        if k.rstrip("s") == key.rstrip("s"):
            return lvl
    found = [lvl for k, lvl in aliased.items()
             if k.startswith(key + " ") or k.endswith(" " + key) or key.startswith(k) and len(k) >= 8]
    return min(found) if found else None


def parse_class_note(text: str, cls: str, path: str, commit: str) -> ClassNote | None:
    """The features of a class note's *Class Features* part; None when it has no level table or footer."""
    lines = _labels(text).splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == "### Class Features")
    except StopIteration:
        return None
    first = next((i for i in range(start, len(lines)) if re.match(r"^1[A-Z]", lines[i].strip())), None)
    if first is None:
        return None
    items, i = _level_table(lines, first)
    blocks: list[tuple[str, str, list[str]]] = []  # (kind: h3/h4/row, name, paragraphs)
    book = page = ""
    for line in lines[i:]:
        s = line.strip()
        if m := SOURCE.match(s):
            book, page = m.group(1), m.group(2)
        elif m := HEADING.match(s):
            blocks.append(("h3" if len(m.group(1)) == 3 else "h4", m.group(2), []))
        elif m := ROW.match(s):
            blocks.append(("row", m.group(1), [m.group(2).replace("\\|", "|").strip()]))
        elif s and not s.startswith("|") and blocks and not s.startswith("Your Level"):
            blocks[-1][2].append(s)
    if not book:
        return None
    features: list[Feature] = []
    placed: set[str] = set()
    for kind, name, paras in blocks:
        key = _norm(name)
        if key.rstrip("s") in {k.rstrip("s") for k in SHARED}:
            continue
        level = None if kind == "h3" else _match(name, items, cls)
        if level is None and features:  # a part of the feature before it
            prev = features[-1]
            body = "\n\n".join([prev.text, f"### {name.replace(chr(0x2019), chr(39))}", *paras]).strip()
            features[-1] = Feature(prev.name, prev.level, body)
            continue
        if level is None:
            continue
        placed.add(key)
        features.append(Feature(name.replace("\u2019", "'"), level, "\n\n".join(paras).strip()))
    unplaced = sorted(k for k in items if not any(_match(p, {k: 1}, cls) is not None for p in placed))
    return ClassNote(cls, features, book, page, path, commit, unplaced)


def read_vault(vault: Path, commit: str) -> list[ClassNote]:
    """The 16 core classes' notes of a kmdavis/xuartlek checkout."""
    notes = []
    for cls in CORE_CLASSES:
        path = f"{CLASSES_DIR}/{cls}.md"
        note = parse_class_note((vault / path).read_text(encoding="utf-8"), cls, path, commit)
        if note:
            notes.append(note)
    return notes


def read_transcription(folder: Path) -> list[ClassNote]:
    """The transcribed notes: ``<class>.md`` with ``repo:``, ``path:``, ``commit:`` lines, ``---``, then the
    note's *Class Features* part as it reads."""
    notes = []
    for file in sorted(folder.glob("*.md")):
        if file.stem not in CORE_CLASSES:
            continue
        head, _, body = file.read_text(encoding="utf-8").partition("\n---\n")
        meta = dict(ln.split(": ", 1) for ln in head.splitlines() if ": " in ln)
        note = parse_class_note(body, file.stem, meta["path"], meta["commit"])
        if note:
            notes.append(note)
    return notes


def has_rules_text(rec: dict) -> bool:
    """Whether a class-feature entry holds text of its own, not the placeholder or a stray word."""
    text = rec.get("text") or ""
    return PLACEHOLDER not in text and len(text.strip()) >= MIN_TEXT


def _drop_empty_headings(text: str) -> str:
    """Journal text without headings that have nothing under them (``### **Formula Book**`` then nothing)."""
    parts = re.split(r"(?m)^(?=#{1,6} )", text)
    kept = [p for p in parts if not re.fullmatch(r"#{1,6} [^\n]*\s*", p)]
    return "".join(kept).strip()


def _plain(text: str) -> str:
    return _norm(re.sub(r"[*_]", "", text))


def merged_text(old: str, new: str, *, journal: bool) -> str:
    """The text an entry ends with: the note's when the old is a placeholder, or when the old already holds it
    (a rerun). Text from the Foundry ``classfeatures`` pack is the canonical one and is kept when it states the
    feature (its opening is in the note's text or the note's opening in it). The journal import is abridged:
    the note's text comes first, followed by the journal's paragraphs it lacks (a list of instincts, a
    spell-slot table, an action block), its headings kept but those with nothing under them."""
    if PLACEHOLDER in old or len(old.strip()) < MIN_TEXT:
        return new
    a, b = _plain(old), _plain(new)
    if b in a:
        return old
    if not journal:
        return old if a[:80] in b or b[:80] in a else f"{new}\n\n{old}"
    kept = [p for p in _drop_empty_headings(old).split("\n\n")
            if p.strip() and (p.lstrip().startswith("#") or _plain(p)[:40] not in b)]
    return "\n\n".join([new, *kept]) if kept else new


def _names(records: list[dict]) -> dict[str, dict[str, str]]:
    """Lower-case name -> id, per type."""
    out: dict[str, dict[str, str]] = {}
    for r in records:
        out.setdefault(r["type"], {}).setdefault(_norm(r["name"]), r["id"])
    return out


def text_links(text: str, names: dict[str, dict[str, str]]) -> list[str]:
    """Ids of what the text says is gained (an action, reaction, feat, hex or devotion spell) or names in
    italics (a spell), when an entry has that name."""
    links: list[str] = []
    for m in GAINED.finditer(text):
        key = _norm(m.group(1))
        for etype in ("action", "feat", "spell"):
            if key in names.get(etype, {}):
                links.append(names[etype][key])
                break
    for m in ITALIC.finditer(text):
        key = _norm(m.group(1))
        if key in names.get("spell", {}):
            links.append(names["spell"][key])
    return list(dict.fromkeys(links))


def add_class_features(records: Iterable[dict], notes: list[ClassNote]) -> tuple[list[dict], ClassFeatureReport]:
    """The corpus with the notes' class features merged (see the module docstring); reruns change nothing."""
    records = list(records)
    report = ClassFeatureReport()
    names = _names(records)
    others = {n: (t, i) for t, m in names.items() if t != "class-feature" for n, i in m.items()}
    by_id = {r["id"]: k for k, r in enumerate(records)}
    class_ids = {r["id"].rsplit(":", 1)[-1]: r for r in records if r["type"] == "class"}
    created: list[dict] = []
    for note in notes:
        cls_rec = class_ids.get(note.cls)
        if cls_rec is None:
            continue
        class_id, class_name = cls_rec["id"], cls_rec["name"]
        source = {"repo": REPO, "commit": note.commit, "path": note.path}
        if not cls_rec.get("page") and cls_rec.get("book") == f"Pathfinder {note.book}":
            k = by_id[class_id]
            records[k] = with_source({**records[k], "page": note.page}, source)
            report.class_pages.append(f"{class_name} p. {note.page}")
        for feat in note.features:
            fid = f"pf2e:class-feature:{note.cls}--{entry_slug(feat.name)}"
            links = [class_id, *text_links(feat.text, names)]
            if by_id.get(fid) == -1:  # a second heading of the same name in one note
                continue
            if fid in by_id:
                k = by_id[fid]
                rec = records[k]
                journal = "from_journal_page" in (rec.get("fields") or {})
                text = merged_text(rec.get("text") or "", feat.text, journal=journal)
                if text != rec.get("text"):
                    rec = with_source({**rec, "text": text}, source)
                    report.text_added.append(f"{class_name}: {feat.name}")
                if rec.get("level") is None:
                    rec = {**rec, "level": feat.level}
                new_links = [x for x in links if x not in (rec.get("links") or []) and x != fid]
                if new_links:
                    rec = {**rec, "links": [*(rec.get("links") or []), *new_links]}
                records[k] = rec
                continue
            taken = others.get(_norm(feat.name))
            if taken:
                report.name_taken.append(f"{class_name}: {feat.name} ({taken[0]})")
                if taken[0] == "action" and taken[1] in by_id:
                    # the class feature that grants an action of its name is left out, so the action says when the
                    # class has it (the rogue's Master Strike at 19th level; an NPC builder reads it)
                    k = by_id[taken[1]]
                    fields = dict(records[k].get("fields") or {})
                    said = f"{class_name} (level {feat.level})"
                    if said not in (fields.get("granted_by") or []):
                        fields["granted_by"] = [*(fields.get("granted_by") or []), said]
                        records[k] = with_source({**records[k], "fields": fields}, source)
                continue
            created.append({
                "id": fid, "name": feat.name, "type": "class-feature", "book": f"Pathfinder {note.book}",
                "page": None, "traits": [], "rarity": None, "level": feat.level, "text": feat.text,
                "links": links, "unresolved_links": [], "section": ["Classes", class_name, feat.name],
                "fields": {"class": class_name}, "source": source,
            })
            by_id[fid] = -1
            report.created.append(f"{class_name}: {feat.name}")
    # every class feature of a core class links to its class, as the journal-built ones do
    for k, rec in enumerate(records):
        cls = (rec.get("fields") or {}).get("class") if rec["type"] == "class-feature" else None
        class_id = f"pf2e:class:{entry_slug(cls)}" if cls else None
        if class_id and class_id in by_id and class_id not in (rec.get("links") or []):
            records[k] = {**rec, "links": [class_id, *(rec.get("links") or [])]}
            report.linked_to_class += 1
    return _insert_after_type(records, created, "class-feature"), report


def _insert_after_type(records: list[dict], new: list[dict], etype: str) -> list[dict]:
    """``new`` placed after the last record of ``etype`` (at the end when there is none)."""
    last = max((k for k, r in enumerate(records) if r["type"] == etype), default=len(records) - 1)
    return [*records[:last + 1], *new, *records[last + 1:]]
