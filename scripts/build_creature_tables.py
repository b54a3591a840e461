#!/usr/bin/env python3
"""Rebuild ``ingest/data/pf2e/creature-building.json``: the tables the GM creators compute with.

Sources (both ORC-licensed game mechanics; see ingest/data/pf2e/LICENSE-NOTICE.md):

* GM Core's Building Creatures tables (Tables 2-1 .. 2-11, GM Core pp. 114-122) from the CSV
  transcriptions in https://github.com/crusaderky/pathfinder2e_stats (Apache-2.0 code; the numbers
  are Paizo's), folder ``pathfinder2e_stats/_tables/NPC/`` at commit ``SOURCE_COMMIT`` below.
  Two departures from those CSVs restore what the book prints: the attribute table's Extreme
  column is "—" at levels -1 and 0 (the CSV fills in +4), and the skills table has no Terrible
  column (the CSV splits the printed Low range "+2 to +1" into Low and Terrible).
* GM Core's Encounter Budget (p. 75) and XP Awards creature XP table, and Monster Core's elite and
  weak adjustments (pp. 6-7), parsed from the bundled corpus's rules entries
  (``pf2e:rule:gm-screen--encounter-budget``, ``--xp-awards``, ``--monster-adjustments``), which
  came from foundryvtt/pf2e packs/pf2e/journals/gm-screen.json @ 068d17b3.

Usage: fetch the repository (any clone), then
    python scripts/build_creature_tables.py --source-git /path/to/pathfinder2e_stats/.git
It reads the CSVs at SOURCE_COMMIT with ``git show`` (no network) and rewrites the JSON.

Cross-check against an independent transcription, https://github.com/Daomephsta/ttrpg_scribe (its
``creature/statistics.py`` at CHECK_COMMIT, tab-separated tables read as text, never executed):
    python scripts/build_creature_tables.py --source-git ... --cross-check-git /path/to/ttrpg_scribe/.git
prints every cell where the two differ (and exits 1 if any).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "ingest" / "data" / "pf2e"
OUT = DATA / "creature-building.json"
SOURCE_REPO = "crusaderky/pathfinder2e_stats"
SOURCE_COMMIT = "ea1b117f08e472c45c00537f829f300d86d34630"
SOURCE_DIR = "pathfinder2e_stats/_tables/NPC"
GM_CORE = "Pathfinder GM Core"
MONSTER_CORE = "Pathfinder Monster Core"
AON_BUILDING = "https://2e.aonprd.com/Rules.aspx?ID=2874"

# table id -> (csv file, printed title, GM Core page, columns, Archives of Nethys page showing "Source GM
# Core pg. N" for that table, or None). Pages without such a page are estimated from the Gamemastery
# Guide's identical chapter (55-56 pages earlier) and marked "page_checked": false in the output.
AON = "https://2e.aonprd.com/Rules.aspx?ID="
BUILDING = {
    "attribute-modifiers": ("2-01-abilities.csv", "Table 2-1: Attribute Modifier Scales", "114", ["extreme", "high", "moderate", "low"], None),
    "perception": ("2-03-perception.csv", "Table 2-2: Perception", "115", ["extreme", "high", "moderate", "low", "terrible"], AON + "1003"),
    "skills": ("2-03-skills.csv", "Table 2-3: Skills", "116", ["extreme", "high", "moderate", "low"], None),
    "armor-class": ("2-05-AC.csv", "Table 2-5: Armor Class", "117", ["extreme", "high", "moderate", "low"], AON + "1010"),
    "saving-throws": ("2-02-saving_throws.csv", "Table 2-6: Saving Throws", "118", ["extreme", "high", "moderate", "low", "terrible"], AON + "1010"),
    "hit-points": ("2-07-HP.csv", "Table 2-7: Hit Points", "118", ["high", "moderate", "low"], None),
    "resistances-weaknesses": ("2-8-resistances.csv", "Table 2-8: Resistances and Weaknesses", "119", ["maximum", "minimum"], None),
    "strike-attack-bonus": ("2-09-strike_attack.csv", "Table 2-9: Strike Attack Bonus", "119", ["extreme", "high", "moderate", "low"], None),
    "strike-damage": ("2-10-strike_damage_dice.csv", "Table 2-10: Strike Damage", "120", ["extreme", "high", "moderate", "low"], AON + "1018"),
    "spell-dc": ("2-11-spell_DC.csv", "Table 2-11: Spell DC and Spell Attack Modifier (DC)", "122", ["extreme", "high", "moderate"], AON + "2898"),
    "spell-attack": ("2-11-spell_attack.csv", "Table 2-11: Spell DC and Spell Attack Modifier (attack)", "122", ["extreme", "high", "moderate"], AON + "2898"),
}


def _git_csv(git_dir: Path, name: str) -> list[list[str]]:
    text = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{SOURCE_COMMIT}:{SOURCE_DIR}/{name}"],
        check=True, capture_output=True, text=True,
    ).stdout
    return [row for row in csv.reader(io.StringIO(text)) if row]


def _building_table(git_dir: Path, tid: str) -> dict:
    fname, title, page, columns, page_ref = BUILDING[tid]
    rows = _git_csv(git_dir, fname)
    levels: dict[str, dict] = {}
    if tid == "hit-points":  # two header rows: challenge, max/min; then "level"
        for r in rows[3:]:
            lvl, hmax, hmin, mmax, mmin, lmax, lmin = r
            levels[lvl] = {"high": [int(hmin), int(hmax)], "moderate": [int(mmin), int(mmax)], "low": [int(lmin), int(lmax)]}
    elif tid == "strike-damage":
        means = {r[0]: r[1:] for r in _git_csv(git_dir, "2-10-strike_damage_mean.csv")[1:]}
        for r in rows[1:]:
            levels[r[0]] = {c: {"dice": d, "mean": int(m)} for c, d, m in zip(columns, r[1:], means[r[0]], strict=True)}
    elif tid == "resistances-weaknesses":
        for r in rows[1:]:
            levels[r[0]] = {"maximum": int(r[1]), "minimum": int(r[2])}
    elif tid == "skills":  # CSV: Extreme, High, Moderate, Low, Terrible where the book prints Low "a to b"
        for r in rows[1:]:
            e, h, m, lo, te = (int(x) for x in r[1:])
            levels[r[0]] = {"extreme": e, "high": h, "moderate": m, "low": [te, lo]}
    else:
        for r in rows[1:]:
            vals = {c: int(v) for c, v in zip(columns, r[1:], strict=True)}
            if tid == "attribute-modifiers" and r[0] in ("-1", "0"):
                vals["extreme"] = None  # printed "—"
            levels[r[0]] = vals
    return {
        "id": f"pf2e:table:creature-building/{tid}",
        "name": title,
        "book": GM_CORE,
        "page": page,
        "page_checked": page_ref is not None,
        "columns": columns,
        "levels": levels,
        "source": {"repo": SOURCE_REPO, "commit": SOURCE_COMMIT, "path": f"{SOURCE_DIR}/{fname}",
                   "reference": page_ref or AON_BUILDING},
    }


def _rules() -> dict[str, dict]:
    out = {}
    with gzip.open(DATA / "rules.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            out[d["id"]] = d
    return out


def _md_rows(text: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def _first_int(s: str) -> int:
    return int(re.search(r"-?\d+", s.replace("\u2013", "-")).group())


def _encounter_tables(rules: dict[str, dict]) -> list[dict]:
    budget_e = rules["pf2e:rule:gm-screen--encounter-budget"]
    rows = _md_rows(budget_e["text"])[1:]
    budget = {r[0].lower(): {"budget": _first_int(r[1]), "per_character": _first_int(r[2])} for r in rows}
    xp_e = rules["pf2e:rule:gm-screen--xp-awards"]
    xp: dict[str, int] = {}
    for r in _md_rows(xp_e["text"]):
        m = re.match(r"Party level(?:\s*([+-])\s*(\d+))?$", r[0].replace("\u2013", "-"))
        if m:
            delta = 0 if not m.group(1) else int(m.group(2)) * (1 if m.group(1) == "+" else -1)
            xp[str(delta)] = _first_int(r[2])
    src = dict(budget_e["source"])
    return [
        {"id": "pf2e:table:encounter-budget", "name": "Encounter Budget", "book": budget_e["book"], "page": budget_e["page"],
         "corpus_entry": budget_e["id"], "threats": budget, "source": src},
        {"id": "pf2e:table:creature-xp", "name": "XP for a creature by level relative to the party", "book": xp_e["book"],
         "page": xp_e["page"], "corpus_entry": xp_e["id"], "xp_by_level_delta": xp, "source": dict(xp_e["source"])},
    ]


def _adjustments(rules: dict[str, dict]) -> dict:
    e = rules["pf2e:rule:gm-screen--monster-adjustments"]
    elite_txt, weak_txt = e["text"].split("## Weak Adjustment")

    def bands(txt: str, verb: str) -> list[dict]:
        line = next(ln for ln in txt.splitlines() if "HP based on" in ln)
        out = []
        # the sentence lists "<range>, add|subtract N HP" clauses separated by ";" or "and"
        for clause in re.split(r";\s*(?:and\s+)?", line.split(":", 1)[1]):
            m = re.search(r"(\d+)(?: or lower| to (\d+)| or (\d+)|\+)?,? (?:add|subtract) (\d+) HP", clause)
            if not m:
                continue
            lo, hi = int(m.group(1)), m.group(2) or m.group(3)
            if "or lower" in clause:
                lo, hi = -99, lo
            elif "+" in clause.split(",")[0]:
                hi = 99
            out.append({"min_level": lo, "max_level": int(hi) if hi is not None else lo, "hp": int(m.group(4)) * (1 if verb == "add" else -1)})
        return out

    return {
        "id": "pf2e:table:monster-adjustments", "name": "Elite and Weak Adjustments", "book": e["book"], "page": e["page"],
        "corpus_entry": e["id"],
        "elite": {"level": 1, "level_if": {"-1": 2, "0": 2}, "modifier": 2, "damage": 2, "damage_limited": 4, "hp": bands(elite_txt, "add")},
        "weak": {"level": -1, "level_if": {"1": -2}, "modifier": -2, "damage": -2, "damage_limited": -4, "hp": bands(weak_txt, "subtract")},
        "source": dict(e["source"]),
    }


def build(git_dir: Path) -> dict:
    rules = _rules()
    return {
        "about": "Tables printed in GM Core and Monster Core (ORC License), as data; rebuilt by scripts/build_creature_tables.py",
        "building": {tid: _building_table(git_dir, tid) for tid in BUILDING},
        "encounter": {t["id"].rsplit(":", 1)[1]: t for t in _encounter_tables(rules)},
        "adjustments": _adjustments(rules),
    }


CHECK_REPO = "Daomephsta/ttrpg_scribe"
# The last version with the tables as tab-separated text, printed means included. The next commit
# (025c7c42, "Refactor statistics Table ctor to use python arrays") rewrote them as Python literals and
# garbled the Strike Damage rows from level 6 up (this cross-check is how that was seen).
CHECK_COMMIT = "6a60932e894d59218a3ba710d585a9382c71517e"
CHECK_PATH = "subprojects/pf2e_compendium/ttrpg_scribe/pf2e_compendium/creature/statistics.py"
CHECK_TABLES = {"ATTRIBUTE_MODIFIERS": "attribute-modifiers", "PERCEPTION": "perception", "SKILLS": "skills",
                "ARMOR_CLASS": "armor-class", "SAVING_THROWS": "saving-throws", "HIT_POINTS": "hit-points",
                "RESISTANCES": "resistances-weaknesses", "STRIKE_ATTACK_BONUS": "strike-attack-bonus",
                "STRIKE_DAMAGE": "strike-damage", "SPELL_DC": "spell-dc", "SPELL_ATTACK_BONUS": "spell-attack"}


def _their_cell(text: str):
    """"+5" -> 5, "—" -> None, "8 to 7" -> [7, 8], "1d6+1 (4)" -> {"dice": "1d6+1", "mean": 4}."""
    t = text.strip().replace("\u2013", "-").replace("\u2212", "-")
    if t in ("\u2014", "-", ""):
        return None
    if m := re.fullmatch(r"(\S+) \((\d+)\)", t):
        return {"dice": m.group(1), "mean": int(m.group(2))}
    if " to " in t:
        a, b = (int(x) for x in t.split(" to "))
        return sorted([a, b])
    return int(t)


def cross_check(data: dict, git_dir: Path) -> tuple[list[str], int]:
    """Every cell where the independent transcription differs from ``data``. Their string tables are read
    as text (never executed). Their resistance High/Low are compared with GM Core's Maximum/Minimum."""
    text = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{CHECK_COMMIT}:{CHECK_PATH}"],
                          check=True, capture_output=True, text=True).stdout
    diffs: list[str] = []
    seen = 0
    # NAME = Table('NAME', Cell, <triple-quoted header and rows>): the string is read as text, never executed
    for m in re.finditer(r"^(\w+) = Table\('\w+', \w+, '''(.*?)'''\)", text, re.M | re.S):
        if m.group(1) not in CHECK_TABLES:
            continue
        ours = data["building"][CHECK_TABLES[m.group(1)]]
        header, *rows = m.group(2).strip().splitlines()
        cols = [c.lower() for c in header.split()[1:]]
        if ours["id"].endswith("resistances-weaknesses"):
            cols = [{"high": "maximum", "low": "minimum"}.get(c, c) for c in cols]
        for row in rows:
            level, *cells = row.split("\t") if "\t" in row else row.split()
            level = level.replace("\u2013", "-")
            for col, cell in zip(cols, cells, strict=True):
                if col not in ours["levels"][level]:
                    continue
                mine, theirs = ours["levels"][level][col], _their_cell(cell)
                if isinstance(mine, list) and isinstance(theirs, int):
                    theirs = [theirs, theirs]
                seen += 1
                if mine != theirs and not (mine is None or theirs is None):
                    diffs.append(f"{ours['id']} level {level} {col}: ours {mine!r}, {CHECK_REPO} {theirs!r}")
                elif (mine is None) != (theirs is None):
                    diffs.append(f"{ours['id']} level {level} {col}: ours {mine!r}, {CHECK_REPO} {theirs!r}")
    if not seen:
        diffs.append("nothing compared: the cross-check source's layout changed")
    return diffs, seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source-git", type=Path, required=True, help=f"git dir of a {SOURCE_REPO} clone")
    ap.add_argument("--cross-check-git", type=Path, help=f"git dir of a {CHECK_REPO} clone: compare, print differences")
    args = ap.parse_args()
    data = build(args.source_git)
    if args.cross_check_git:
        diffs, cells = cross_check(data, args.cross_check_git)
        print("\n".join(diffs) or f"cross-check against {CHECK_REPO}@{CHECK_COMMIT[:8]}: {cells} cells, no differences")
        if diffs:
            raise SystemExit(1)
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
