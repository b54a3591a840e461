"""Monster Core's universal monster abilities (Grab, Improved Grab, Constrict, Knockdown, Push, Swallow
Whole, Trample, Frightful Presence, ...) as corpus entries, taken from the copies embedded in the
creatures' stat blocks.

Why this way: Foundry keeps the glossary text in ``bestiary-ability-glossary-srd`` only as
``@Localize`` keys into ``static/lang/*.json``; the bundled creatures come from the bobrien87/pathfinder-2e
vault, whose importer resolved those keys and copied each glossary ability, word for word, into every
creature that has it (the generic wording says "the monster"). The creature-specific part (range, DC,
damage, size) is a short first paragraph before the generic text. For each ability name (without its
number or parenthesis: "Telepathy 100 feet", "Reactive Strike (Tail Only)") this keeps the paragraphs
every copy shares, when they speak of "the monster" and what precedes them in each copy is at most one
short, sentence-less header. Nothing is written by hand.

With a full foundryvtt/pf2e checkout, ``gmprep corpus build --from DIR`` gives the same entries from the
glossary pack and its language file; this script is for corpora built from the vault.

Usage: python scripts/derive_monster_abilities.py VAULT_CHECKOUT [--corpus ingest/data/pf2e]
(VAULT_CHECKOUT: git clone https://github.com/bobrien87/pathfinder-2e at the commit in the corpus README)
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import yaml

from gmprep.ingest.corpus import corpus_dir, iter_records, slug
from gmprep.ingest.foundry.build import write_corpus
from gmprep.ingest.foundry.enrich import act_text, damage_text

REPO = "bobrien87/pathfinder-2e"
BOOK = "Pathfinder Monster Core"
GLYPH = {"0": "[free-action]", "1": "[one-action]", "2": "[two-actions]", "3": "[three-actions]", "r": "[reaction]"}
PARA = re.compile(r"\s*<br>\s*<br>\s*")
WIKI = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")


def base_name(name: str) -> str:
    """``Regeneration 20 (Deactivated by Cold Iron)`` -> ``Regeneration``; ``Push 10 feet`` -> ``Push``."""
    name = re.sub(r"\s*\([^)]*\)\s*$", "", name.strip())
    name = re.sub(r"\s+\d+(\s+feet)?$", "", name, flags=re.I)
    return name.strip()


def is_header(par: str) -> bool:
    """The creature-specific first paragraph: short, no sentence, no "monster"."""
    return len(par) < 120 and not par.rstrip().endswith(".") and "monster" not in par.lower()


def vault_md(text: str, names: dict[str, str]) -> tuple[str, list[str]]:
    """Vault markup -> corpus Markdown, with the corpus ids of its wiki links."""
    links: list[str] = []

    def wiki(m: re.Match) -> str:
        target, label = m.group(1), m.group(2) or m.group(1).split("/")[-1]
        entry = names.get(slug(target.split("/")[-1]))
        if entry:
            links.append(entry)
        return label

    text = re.sub(r"`pf2:([0-3r])`", lambda m: GLYPH[m.group(1)], text)
    text = re.sub(r"`act ([^`]+)`", lambda m: act_text(m.group(1)), text)
    text = re.sub(r"@Damage\[((?:[^\[\]]|\[[^\[\]]*\])*)\]", lambda m: damage_text(m.group(1)), text)
    text = WIKI.sub(wiki, text)
    text = re.sub(r">\s*\[!\w+\][^\n]*", "", text)  # Foundry effect call-outs, not rules text
    text = re.sub(r"\s*<br>\s*", "\n", text)  # a single break inside a paragraph (degrees of success)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip(), list(dict.fromkeys(links))


def derive(vault: Path, records: list[dict], commit: str) -> list[dict]:
    """The ability entries found in the vault's Monster Core creatures."""
    names = {}
    for r in records:
        if r["type"] in ("condition", "action", "spell", "trait"):
            names.setdefault(slug(r["name"]), r["id"])
    seen: dict[str, list[tuple[str, list[str], str]]] = defaultdict(list)  # base -> (name, paragraphs, path)
    cost: dict[str, str] = {}
    for path in sorted((vault / "8. System" / "Creatures").glob("*/*.md")):
        try:
            meta = yaml.safe_load(path.read_text(encoding="utf-8").split("---", 2)[1])
        except (yaml.YAMLError, IndexError):
            continue
        if not isinstance(meta, dict) or meta.get("sourcebook") != "Monster Core":
            continue
        for key in ("abilities_top", "abilities_mid", "abilities_bot"):
            for ab in meta.get(key) or []:
                desc = (ab.get("desc") or "").strip()
                m = re.match(r"`pf2:([0-3r])`\s*", desc)
                if m:
                    cost[base_name(ab["name"])] = GLYPH[m.group(1)]
                    desc = desc[m.end():]
                pars = [p.strip() for p in PARA.split(desc) if p.strip()]
                if pars:
                    seen[base_name(ab["name"])].append((ab["name"], pars, path.relative_to(vault).as_posix()))
    out = []
    for name, copies in sorted(seen.items()):
        common = copies[0][1]
        for _, pars, _ in copies[1:]:
            n = 0
            while n < min(len(common), len(pars)) and common[-1 - n] == pars[-1 - n]:
                n += 1
            common = common[len(common) - n:] if n else []
        if not common or "monster" not in " ".join(common).lower():
            continue
        prefixes = [pars[: len(pars) - len(common)] for _, pars, _ in copies]
        plain = sum(len(p) <= 1 and (not p or is_header(p[0])) for p in prefixes)
        if plain * 2 < len(copies):  # most copies: generic text after at most a short stat header
            continue
        while common and is_header(common[0]):  # a header every copy shares ("Claw" for Rend)
            common = common[1:]
        creatures = {p for _, _, p in copies}
        # one creature's ability that quotes a glossary text ("As Grab, but ...") is not the glossary entry
        if not common or (len(creatures) < 2 and "monster" not in common[0].lower()):
            continue
        text, links = vault_md("\n\n".join(common), names)
        entry_id = f"pf2e:action:{slug(name)}"
        out.append({
            "id": entry_id, "name": name, "type": "action", "book": BOOK, "page": None, "traits": [],
            "rarity": None, "level": None, "text": text, "links": [x for x in links if x != entry_id],
            "unresolved_links": [], "section": ["Universal Monster Abilities", name],
            "fields": {"category": "universal monster ability", **({"cast": cost[name]} if name in cost else {}),
                       "creatures_with_it": len(creatures)},
            "source": [{"repo": REPO, "commit": commit, "path": p} for p in sorted(creatures)[:3]],
        })
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vault", type=Path)
    ap.add_argument("--corpus", type=Path, default=corpus_dir())
    args = ap.parse_args()
    commit = subprocess.run(["git", "-C", str(args.vault), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    errors: list[str] = []
    records = [r for r in iter_records(args.corpus, errors)
               if (r.get("fields") or {}).get("category") != "universal monster ability"]
    ids = {r["id"] for r in records}
    # A name a player's rule already carries (the Shield Block feat, the Reactive Strike action, the
    # Telepathy spell) stays that rule's: a second entry would take its hovers and searches.
    taken = ids | {f"pf2e:action:{slug(r['name'])}" for r in records if r["type"] in ("feat", "action", "spell")}
    abilities = derive(args.vault, records, commit or "unknown")
    skipped = [a["name"] for a in abilities if a["id"] in taken]
    abilities = [a for a in abilities if a["id"] not in taken]
    by_slug = {slug(a["name"]): a["id"] for a in abilities}
    moved = 0
    for r in records:  # references that had no entry ("plus Grab") now link the ability
        keep = []
        for ref in r.get("unresolved_links") or []:
            target = by_slug.get(slug(ref))
            if target and r["type"] in ("creature", "hazard", "spell", "feat", "equipment", "rule"):
                r["links"] = [*r.get("links", []), target]
                moved += 1
            else:
                keep.append(ref)
        r["unresolved_links"] = keep
    write_corpus(records + sorted(abilities, key=lambda a: a["id"]), args.corpus, {
        "sources": [{"repo": REPO, "commit": commit, "what": "universal monster abilities (scripts/derive_monster_abilities.py)"}],
    })
    print(f"{len(abilities)} universal monster abilities; {moved} references now linked; "
          f"skipped (a feat, action or spell has that name): {', '.join(skipped) or 'none'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
