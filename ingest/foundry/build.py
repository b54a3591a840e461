"""``gmprep corpus build --from DIR``: the Foundry pf2e packs on disk -> the corpus files + a manifest.

``DIR`` is a checkout of foundryvtt/pf2e (or any folder holding its ``packs/pf2e/<pack>/*.json``, one
document per file, as a Foundry user has them). Entries from the packs are merged into a base corpus
(by default the bundled one): a pack entry replaces the base entry with the same id, except creatures,
whose richer base stat block is kept and gains what the vault lacked (Speed). Ids of base entries never
change. The manifest records the source commit and the packs read.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
import subprocess
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, Field

from gmprep.common.errors import GmprepError
from gmprep.ingest.corpus import iter_records, slug
from gmprep.ingest.creature_speed import with_source, with_speed
from gmprep.ingest.foundry.convert import Converter, entry_slug, level_roll_data
from gmprep.ingest.foundry.enrich import looks_like_id
from gmprep.ingest.foundry.vault_codes import printed, without_effect_links
from gmprep.ingest.foundry.vault_formula import repair_text
from gmprep.ingest.skills import add_skills

log = logging.getLogger(__name__)

REPO = "foundryvtt/pf2e"
# Compendium name (as in @UUID links) -> the corpus type its documents become.
PACK_TYPES = {
    "conditionitems": "condition", "actionspf2e": "action", "spells-srd": "spell", "feats-srd": "feat",
    "equipment-srd": "equipment", "bestiary-ability-glossary-srd": "action", "ancestries": "ancestry",
    "heritages": "heritage", "backgrounds": "background", "classes": "class", "archetypes": "archetype",
    "hazards": "hazard", "pathfinder-monster-core": "creature",
}
FILES = {
    "action": "actions", "ancestry": "ancestries", "archetype": "archetypes", "background": "backgrounds",
    "class": "classes", "class-feature": "class-features", "condition": "conditions", "creature": "creatures",
    "equipment": "equipment", "feat": "feats", "hazard": "hazards", "heritage": "heritages", "rule": "rules",
    "spell": "spells", "trait": "traits", "skill": "skills",
}
LANG_FILES = ("static/lang/en.json", "static/lang/re-en.json")


class BuildReport(BaseModel):
    """What ``corpus build`` read and wrote."""

    source_commit: str
    packs: dict[str, int] = Field(default_factory=dict)  # pack folder -> documents read
    kept: dict[str, int] = Field(default_factory=dict)  # corpus type -> entries from the packs
    replaced: int = 0
    added: int = 0
    speed_added: int = 0
    total: int = 0
    out: str = ""
    messages: list[str] = Field(default_factory=list)


def packs_root(folder: Path) -> Path:
    """``DIR/packs/pf2e``, ``DIR/packs`` or ``DIR`` itself, whichever holds pack folders."""
    for cand in (folder / "packs" / "pf2e", folder / "packs", folder):
        # a pack's documents may sit in sub-folders (spells/spells/rank-2/acid-grip.json)
        if cand.is_dir() and any(p.is_dir() and next(p.rglob("*.json"), None) for p in cand.iterdir()):
            return cand
    raise GmprepError(f"no Foundry pack folders (packs/pf2e/<pack>/*.json) under {folder}")


def source_commit(folder: Path, given: str | None) -> str:
    """The commit named on the command line, else the checkout's HEAD, else ``unknown``."""
    if given:
        return given
    try:
        out = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def load_lang(folder: Path, extra: list[Path]) -> dict:
    """Merged language files (``@Localize`` keys), later files winning."""
    merged: dict = {}

    def deep(dst: dict, src: dict) -> None:
        for k, v in src.items():
            if isinstance(v, dict) and isinstance(dst.get(k), dict):
                deep(dst[k], v)
            else:
                dst[k] = v

    for path in [*(folder / f for f in LANG_FILES), *extra]:
        if path.is_file():
            try:
                deep(merged, json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as exc:
                raise GmprepError(f"cannot read language file {path}: {exc}") from None
    return merged


def _lookup(lang: dict, key: str) -> str | None:
    node: object = lang
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    if isinstance(node, dict):  # glossary entries keep their text under Description
        node = node.get("Description") or node.get("Text")
    return node if isinstance(node, str) else None


def read_packs(root: Path, errors: list[str]) -> dict[str, list[tuple[Path, dict]]]:
    """pack folder name -> its documents (``_folders.json`` and unreadable files skipped, reported)."""
    packs: dict[str, list[tuple[Path, dict]]] = {}
    for pack in sorted(p for p in root.iterdir() if p.is_dir()):
        docs = []
        for path in sorted(pack.rglob("*.json")):
            if path.name.startswith("_"):
                continue
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                errors.append(f"{path.relative_to(root)}: skipped ({exc})")
                continue
            if isinstance(doc, dict) and doc.get("name"):
                docs.append((path, doc))
        if docs:
            packs[pack.name] = docs
    return packs


def build(
    folder: Path, out: Path, base: Path | None, commit: str | None = None, lang_files: list[Path] | None = None,
) -> BuildReport:
    """Convert the packs under ``folder``, merge them into ``base`` and write the corpus to ``out``."""
    root = packs_root(folder)
    report = BuildReport(source_commit=source_commit(folder, commit))
    packs = read_packs(root, report.messages)
    report.packs = {k: len(v) for k, v in packs.items()}
    lang = load_lang(folder, lang_files or [])
    base_records = list(iter_records(base, report.messages)) if base else []
    known = {r["id"] for r in base_records}
    by_id = {doc.get("_id"): doc["name"] for docs in packs.values() for _, doc in docs if doc.get("_id")}

    link_names: dict[str, str] = {}

    def resolve(pack: str, ref: str, label: str | None) -> tuple[str, str | None]:
        name = by_id.get(ref) or (label if looks_like_id(ref) else ref)
        name = name or ref
        etype = PACK_TYPES.get(pack)
        base_name = re.sub(r"\s+\d+$", "", name)  # "Frightened 1" links the Frightened entry
        if not etype:
            return name, None
        entry_id = f"pf2e:{etype}:{entry_slug(base_name)}"
        link_names[entry_id] = base_name
        return name, entry_id

    conv = Converter(resolve, lambda key: _lookup(lang, key))
    new: dict[str, dict] = {}
    for pack, docs in packs.items():
        for path, doc in docs:
            rel = path.relative_to(root.parent.parent if root.name == "pf2e" else root.parent).as_posix()
            for entry in conv.convert(doc, pack, {"repo": REPO, "commit": report.source_commit, "path": rel}):
                _keep(entry, rel, new, report)

    known |= set(new)
    for entry in new.values():  # links to entries that do not exist become unresolved references
        entry["unresolved_links"] += [link_names.get(x, x) for x in entry["links"] if x not in known]
        entry["links"] = [x for x in entry["links"] if x in known and x != entry["id"]]
    report.kept = dict(Counter(e["type"] for e in new.values()))

    merged: list[dict] = []
    action_names = {r["id"]: r["name"] for r in base_records if r.get("type") == "action"}
    for rec in base_records:
        rec = _vault_fixes(rec, report.messages, action_names)
        fresh = new.pop(rec["id"], None)
        if fresh is None:
            merged.append(rec)
        elif rec["type"] == "creature":
            merged.append(_add_speed(rec, fresh, report))
        elif fresh.pop("merge", None) == "text":
            merged.append(_with_text(rec, fresh))
            report.replaced += 1
        else:
            fresh["page"] = fresh["page"] or rec.get("page")
            fresh["fields"] = {**(rec.get("fields") or {}), **fresh["fields"]}
            # the base's links (its traits, its class) still hold for the same rule
            fresh["links"] = list(dict.fromkeys([*(rec.get("links") or []), *fresh["links"]]))
            merged.append(fresh)
            report.replaced += 1
    for entry_id in sorted(new):
        if new[entry_id].get("merge") == "text":  # a description with no bundled entry to give it to
            report.messages.append(f"{entry_id}: no bundled entry of this id, its description is not added")
            continue
        merged.append(new[entry_id])
        report.added += 1
    # the skill index entries list actions and feats: derived again from what this build holds
    merged = add_skills(merged)
    report.total = len(merged)
    write_corpus(merged, out, _manifest(base, report))
    report.out = str(out)
    return report


def _manifest(base: Path | None, report: BuildReport) -> dict:
    """The base corpus's manifest (its sources) plus this build's source commit and packs."""
    manifest: dict = {"sources": []}
    if base and (base / "manifest.json").is_file():
        try:
            manifest = json.loads((base / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            report.messages.append(f"base manifest unreadable, starting a new one ({exc})")
    this = {"repo": REPO, "commit": report.source_commit, "packs": report.packs, "entries": report.kept,
            "what": "gmprep corpus build --from <packs>"}
    manifest["sources"] = [s for s in manifest.get("sources", []) if s.get("packs") != report.packs] + [this]
    return manifest


def _keep(entry: dict, rel: str, new: dict[str, dict], report: BuildReport) -> None:
    """Add a converted entry unless its text is empty (an unresolved ``@Localize``) or its id is taken."""
    if not entry["text"].strip():
        missing = ", ".join(entry["unresolved_links"]) or "no description"
        report.messages.append(f"{rel}: skipped {entry['name']!r}, its text is empty ({missing})")
    elif entry["id"] in new:
        report.messages.append(f"{rel}: duplicate id {entry['id']}, kept the first")
    else:
        new[entry["id"]] = entry


# The vault's conversion printed an item with no price (an artifact, a club) as Python's repr of the empty
# price object; the books print a dash.
_EMPTY_PRICE = "{'value': {}}"


def _vault_fixes(rec: dict, messages: list[str], action_names: Mapping[str, str] | None = None) -> dict:
    """A bundled record with the vault conversion's known misprints corrected: the empty price, roll-data
    formulas printed without their parentheses (rendered on the entry's level, as a pack's own are), the
    plugin's inline codes ("`act grapple`", "`r 1d4`": ``vault_codes.printed``, ``action_names`` id -> name), the
    effect-link paragraphs (``vault_codes.without_effect_links``) and the "Passive" cost of activities."""
    text, fields = rec.get("text") or "", rec.get("fields") or {}
    fixed = without_effect_links(printed(text, action_names or {}))
    if fixed != text:
        text = fixed
        rec = {**rec, "text": text}
    if fields.get("cast") == "Passive":
        # Foundry's "passive" action type is an activity with no action cost (Treat Wounds, Subsist): the books
        # print no cost line for it, the vault printed "Passive"
        fields = {k: v for k, v in fields.items() if k != "cast"}
        rec = {**rec, "fields": fields}
    if "@item." in text or "@actor." in text:
        repaired = repair_text(text, level_roll_data(rec.get("level")))
        messages.extend(f"{rec['id']}: vault formula kept as printed, its reading is not certain: {f}" for f in repaired.left)
        text = repaired.text
        rec = {**rec, "text": text}
    if f"**Price** {_EMPTY_PRICE}" not in text and fields.get("price") != _EMPTY_PRICE:
        return rec
    fields = {**fields, "price": "—"} if fields.get("price") == _EMPTY_PRICE else fields
    return {**rec, "text": text.replace(f"**Price** {_EMPTY_PRICE}", "**Price** —"), "fields": fields}


def _with_text(rec: dict, fresh: dict) -> dict:
    """The bundled entry with the pack's description as its text (links from both), the pack as a source."""
    links = list(dict.fromkeys([*(rec.get("links") or []), *fresh["links"]]))
    return with_source({**rec, "text": fresh["text"], "links": links}, fresh["source"])


def _add_speed(rec: dict, fresh: dict, report: BuildReport) -> dict:
    """Keep the base creature; add the Speed line and fields it lacked."""
    speed = fresh["fields"].get("speed")
    if not speed or (rec.get("fields") or {}).get("speed"):
        return rec
    report.speed_added += 1
    return with_source(with_speed(rec, speed, fresh["fields"].get("speeds", {})), fresh["source"])


def write_corpus(entries: list[dict], out: Path, manifest: dict) -> None:
    """One ``<type>.jsonl.gz`` per type (deterministic gzip), ``stats.json`` and ``manifest.json``."""
    out.mkdir(parents=True, exist_ok=True)
    by_file: dict[str, list[dict]] = {}
    for e in entries:
        by_file.setdefault(FILES.get(e["type"], slug(e["type"]) + "s"), []).append(e)
    stats: dict = {"total": len(entries), "unresolved_link_mentions": 0, "by_type_book": {}, "files": {}}
    for name, rows in sorted(by_file.items()):
        data = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows).encode()
        stats["files"][f"{name}.jsonl"] = {"entries": len(rows), "bytes": len(data)}
        if _same_content(out / f"{name}.jsonl.gz", data):
            continue  # keep the file as it is: gzip headers differ across Python versions (OS byte)
        with open(out / f"{name}.jsonl.gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
            gz.write(data)
    for e in entries:
        key = f"{e['type']}|{e.get('book')}"
        stats["by_type_book"][key] = stats["by_type_book"].get(key, 0) + 1
        stats["unresolved_link_mentions"] += len(e.get("unresolved_links") or [])
    stats["by_type_book"] = dict(sorted(stats["by_type_book"].items()))
    (out / "stats.json").write_text(json.dumps(stats, indent=1) + "\n")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def _same_content(path: Path, data: bytes) -> bool:
    """Whether ``path`` is a gzip file that decompresses to ``data``."""
    try:
        with gzip.open(path, "rb") as fh:
            return fh.read() == data
    except (OSError, EOFError):
        return False
