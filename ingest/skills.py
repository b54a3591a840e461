"""One derived index entry per skill and for Perception, built from the corpus's own entries.

Why: the corpus has every skill *action* (Climb: "You attempt an Athletics check ...") and the skill
feats, but no entry named Athletics, Stealth or Perception, so a GM's note that says "Stealth" hovers
nothing and a question about a skill finds nothing that defines it. Player Core's skill chapter is not
in any source the corpus is built from, so these entries hold no rules prose: each is an index, and its
text says so. Nothing is written by hand:

- the skills, their key attribute and which actions are untrained or trained-only come from the
  Skill Actions table (Player Core p. 227, the ``gm-screen`` rules page whose table has the columns
  Skill | Key Attribute | Untrained Actions | Trained Actions); Perception is not a skill and has no
  row, so it is the one name added here;
- other actions count when their own text has the acting creature use a check of the skill
  ("Attempt a Deception or Diplomacy check", "The GM rolls your Stealth check", "Your Thievery check
  result"), not when it only grants a bonus to one, waives it, or has someone else roll it
  ("it can attempt a Perception check against your Stealth DC"); they are trained-only when their
  text says "trained in <skill>" (duel actions that only require the training are listed there too);
- skill feats count when their prerequisites name the skill ("expert in Athletics").

``derive_skills`` is pure; ``add_skills`` replaces the skill entries of a record list and relinks
nothing else. ``gmprep corpus build`` runs it on every build; ``gmprep corpus skills`` re-derives a
corpus folder in place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from gmprep.ingest.corpus import slug

BOOK = "Pathfinder Player Core"
TABLE_HEADER = re.compile(r"^\|\s*Skill\s*\|\s*Key Attribute\s*\|\s*Untrained Actions\s*\|\s*Trained Actions\s*\|", re.M)
# Perception is rolled like a skill but is not one, so the Skill Actions table has no row for it.
PERCEPTION = "Perception"
MAX_FEAT_NAMES = 8
DERIVED_REPO = "(derived from this corpus)"
SHORT_BOOK = {
    "Pathfinder Player Core": "Player Core", "Pathfinder Player Core 2": "Player Core 2",
    "Pathfinder GM Core": "GM Core", "Pathfinder Monster Core": "Monster Core",
}
# Before a check in the same sentence, these say the actor does not roll it: a bonus or penalty to it,
# a waiver ("don't need to", "without ... needing to"), a replacement ("instead of a Perception check"),
# or someone else as the subject ("it can attempt", "they", "anyone tracking you", "allies").
_NOT_USED = re.compile(
    r"\b(?:bonus|penalty|don't|do not|without|instead of|it|they|their|them|allies|anyone|characters|"
    r"creatures?|observers?)\b", re.I,
)
# ... and one of these says the actor does: a verb of rolling, "your ... check", "the DC of the ... check",
# or a sentence that opens on the check itself ("The Medicine check DC is usually 15").
_USED = re.compile(r"\b(?:attempts?|attempting|rolls?|rolling|succeed at|successful|perform|your|DC of the)\b", re.I)
_REQ = re.compile(r"^\*\*(?:Requirements?|Trigger|Prerequisites?)\*\*", re.M)
_LABEL = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*[^*]+\*\*\s*)?")
_RANK = re.compile(r"\b(?:trained|expert|master|legendary)\b")


def _names_re(names: Iterable[str]) -> str:
    return "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)))


def read_table(records: list[dict]) -> tuple[dict | None, list[dict]]:
    """The Skill Actions rules page and its rows: ``{skill, key_attribute, untrained, trained}`` with
    action ids, in the table's order. Cells name actions between glyphs and footnote marks
    ("Balance [one-action] Tumble Through [one-action]", "Impersonate ^E Lie"), so the cell is read by
    matching the corpus's action names, longest first."""
    page = next((r for r in sorted(records, key=lambda r: r["id"])
                 if r["type"] == "rule" and TABLE_HEADER.search(r.get("text") or "")), None)
    header = TABLE_HEADER.search(page["text"]) if page else None
    if page is None or header is None:
        return None, []
    actions = {r["name"]: r["id"] for r in records if r["type"] == "action"}
    pattern = re.compile(r"(?<![\w'])(" + _names_re(actions) + r")(?![\w'])")
    rows = []
    for line in page["text"][header.end():].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not re.fullmatch(r"[A-Z][a-z]+", cells[0]):
            continue  # the separator row and the footnote row
        rows.append({
            "skill": cells[0], "key_attribute": cells[1],
            "untrained": list(dict.fromkeys(actions[m] for m in pattern.findall(cells[2]))),
            "trained": list(dict.fromkeys(actions[m] for m in pattern.findall(cells[3]))),
        })
    return page, rows


def _sentences(text: str) -> Iterable[str]:
    for line in text.splitlines():
        for sent in re.split(r"(?<=[.!?])\s+", line):
            yield _LABEL.sub("", sent, count=1)


def checks_used(text: str, skills: list[str]) -> set[str]:
    """The skills whose check the acting creature attempts in an action's text (Requirements and Trigger
    paragraphs left out: they state conditions, not what the action rolls)."""
    body = "\n".join(p for p in text.split("\n\n") if not _REQ.match(p.strip()))
    name = _names_re(skills)
    listed = re.compile(
        rf"\b((?:{name})(?:,? (?:or |and )?(?:{name}))*)(?: skill)? checks?\b|\bcheck using (?:a |an |your )?({name})\b"
    )
    used: set[str] = set()
    for sent in _sentences(body):
        for m in listed.finditer(sent):
            before = sent[: m.start()]
            if _NOT_USED.search(before):
                continue
            if _USED.search(before) or before.strip() in ("", "The", "the") or m.group(2):
                used.update(re.findall(name, m.group(0)))
    return used


def trained_in(text: str, skills: list[str]) -> set[str]:
    """Skills the text says the user must be trained in ("you're trained in Intimidation")."""
    name = _names_re(skills)
    out: set[str] = set()
    for m in re.finditer(rf"\btrained in ((?:{name})(?:,? (?:or |and )?(?:{name}))*)", text):
        out.update(re.findall(name, m.group(1)))
    return out


def _feat_names_skill(prereq: str, skill: str) -> bool:
    """A prerequisite that asks for a proficiency rank in the skill ("expert in Athletics", "trained in
    Warfare Lore"): case-sensitive, so "a specific religion" is not Religion."""
    return any(_RANK.search(part) and re.search(rf"\b{skill}\b", part) for part in re.split(r";", prereq))


def _label(rec: dict) -> str:
    book = SHORT_BOOK.get(rec.get("book") or "", rec.get("book") or "")
    return rec["name"] if book == "Player Core" else f"{rec['name']} ({book})"


def _article(word: str) -> str:
    return "an" if word[0].lower() in "aeiou" else "a"


def derive_skills(records: list[dict]) -> list[dict]:
    """The skill entries (the table's skills, then Perception), derived from ``records``."""
    records = [r for r in records if r["type"] != "skill"]
    page, rows = read_table(records)
    if page is None:
        return []
    by_id = {r["id"]: r for r in records}
    skills = [row["skill"] for row in rows] + [PERCEPTION]
    actions = sorted((r for r in records if r["type"] == "action"), key=lambda r: (r["name"], r["id"]))
    used = {r["id"]: checks_used(r.get("text") or "", skills) for r in actions}
    trained = {r["id"]: trained_in(r.get("text") or "", skills) for r in actions}
    feats = sorted((r for r in records if r["type"] == "feat"), key=lambda r: (r.get("level") or 0, r["name"], r["id"]))
    table = {row["skill"]: row for row in rows}
    out = []
    for skill in skills:
        row = table.get(skill, {"untrained": [], "trained": [], "key_attribute": None})
        in_table = set(row["untrained"]) | set(row["trained"])
        # an action whose Requirements ask for training in the skill is built on it even when its body
        # rolls nothing new ("you're trained in Intimidation, and you rolled an Intimidation check for
        # initiative"): the text says it is trained-only, so it is listed as such
        other = [r["id"] for r in actions if skill in used[r["id"]] | trained[r["id"]] and r["id"] not in in_table]
        other_trained = [x for x in other if skill in trained[x]]
        other_untrained = [x for x in other if x not in other_trained]
        req = [f for f in feats if _feat_names_skill((f.get("fields") or {}).get("prerequisites") or "", skill)]
        skill_feats = [f for f in req if "skill" in (f.get("traits") or [])]
        other_feats = [f for f in req if "skill" not in (f.get("traits") or [])]
        kind = "statistic" if skill == PERCEPTION else "skill"
        parts = [
            f"*Index derived by gmprep from the corpus entries it links, not Paizo's text.* It lists the actions "
            f"whose entries use {_article(skill)} {skill} check and the feats that require {skill}. The {kind}'s own "
            f"rules (what it covers, proficiency, its full text) are in {BOOK.removeprefix('Pathfinder ')}; add the "
            f"book with `gmprep books add` to search them."
        ]
        if row["key_attribute"]:
            parts.append(f"**Key Attribute** {row['key_attribute']} (Skill Actions table, Player Core p. {page.get('page')})")

        def names(ids: list[str]) -> str:
            return ", ".join(_label(by_id[x]) for x in ids)

        if row["untrained"]:
            parts.append(f"**Untrained actions** {names(row['untrained'])}")
        if row["trained"]:
            parts.append(f"**Trained actions** (you must be trained in {skill}) {names(row['trained'])}")
        if other_untrained:
            lead = "Other actions" if in_table else "Actions"
            parts.append(f"**{lead} that call for {_article(skill)} {skill} check** {names(other_untrained)}")
        if other_trained:
            parts.append(f"**Actions that require training in {skill}** {names(other_trained)}")
        feat_links: list[str] = []
        for label, group in (("Skill feats", skill_feats), ("Other feats" if skill_feats else "Feats", other_feats)):
            if group:
                shown = group[:MAX_FEAT_NAMES]
                feat_links += [f["id"] for f in shown]
                more = f", and {len(group) - len(shown)} more" if len(group) > len(shown) else ""
                parts.append(f"**{label}** {len(group)} with {skill} in their prerequisites: "
                             f"{', '.join(_label(f) for f in shown)}{more}")
        action_links = [*row["untrained"], *row["trained"], *other_untrained, *other_trained]
        entry_id = f"pf2e:skill:{slug(skill)}"
        links = list(dict.fromkeys([*action_links, *([page["id"]] if skill in table else []), *feat_links]))
        out.append({
            "id": entry_id, "name": skill, "type": "skill", "book": BOOK, "page": None, "traits": [],
            "rarity": None, "level": None, "text": "\n\n".join(parts), "links": links,
            "unresolved_links": [], "section": ["Skills", skill],
            "fields": {
                "derived": "index of corpus entries (gmprep ingest/skills.py)",
                **({"key_attribute": row["key_attribute"]} if row["key_attribute"] else {}),
                "untrained_actions": row["untrained"], "trained_actions": row["trained"],
                "other_actions": other_untrained, "other_trained_actions": other_trained,
                "skill_feats": len(skill_feats), "other_feats": len(other_feats),
            },
            "source": [*([page["source"]] if skill in table and page.get("source") else []),
                       {"repo": DERIVED_REPO, "commit": "n/a", "path": "ingest/skills.py"}],
        })
    return out


def add_skills(records: list[dict]) -> list[dict]:
    """``records`` without any old skill entry, plus freshly derived ones (after the rest, by id)."""
    kept = [r for r in records if r["type"] != "skill"]
    return kept + sorted(derive_skills(kept), key=lambda e: e["id"])


MANIFEST_WHAT = "skill index entries (skills.jsonl, type skill)"


def rederive(folder: Path, out: Path | None = None) -> tuple[int, list[str]]:
    """Re-derive the skill entries of the corpus in ``folder`` and write it to ``out`` (default: in place).
    The manifest keeps its sources and gains (or refreshes) one line for these entries. Returns the number
    of skill entries and the unreadable corpus lines."""
    import json

    from gmprep.ingest.corpus import iter_records
    from gmprep.ingest.foundry.build import write_corpus

    out = out or folder
    errors: list[str] = []
    records = add_skills(list(iter_records(folder, errors)))
    manifest: dict = {"sources": []}
    if (folder / "manifest.json").is_file():
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    skills = [r for r in records if r["type"] == "skill"]
    line = {"repo": DERIVED_REPO, "commit": "n/a",
            "what": f"{len(skills)} {MANIFEST_WHAT}: an index of the actions and feats that use each skill, built "
                    "from the Skill Actions table, the actions' and the feats' entries by ingest/skills.py "
                    "(gmprep corpus skills; gmprep corpus build runs it too)"}
    manifest["sources"] = [s for s in manifest.get("sources", []) if MANIFEST_WHAT not in s.get("what", "")] + [line]
    write_corpus(records, out, manifest)
    # the bundled manifest keeps its own key order (write_corpus sorts keys): rewrite it as read
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    return len(skills), errors
