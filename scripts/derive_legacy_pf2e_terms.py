"""Derive the pre-Remaster Pathfinder 2e names the Remaster dropped, for the other-systems guard.

Writes ``core/agents/data/pf2e-legacy-derived.json.gz``: the names that the four books the Remaster replaced (Core
Rulebook, Advanced Player's Guide, Gamemastery Guide, Bestiary: ``--books``) give their rules, creatures, creature
abilities, afflictions, conditions, actions, variant rules and items, read from Pf2eTools' JSON (a pre-Remaster,
2022 snapshot of those books' open game content), and the source repository with its commit. ``core/sources.py`` loads
them when ``answerability.guard_legacy`` is on; at run time, as for the other derived terms, every name the store's
non-trait entries use is dropped.

Candidates: every object with a ``name`` in the data files (a creature's abilities and afflictions, "Mummy Rot",
inside its creature, but not the creature's own name: "Owlbear" in a question is the asker's monster, whose held rule is
asked; a variant rule's headings inside it) whose own or nearest enclosing ``source`` is one of those
books, lore aside (deities, places, organizations, languages, traits, books, the ancestries' pages). A candidate is kept, as in
``scripts/derive_other_systems_terms.py``, when

- it has 2-4 words, at least two of them content words, neither first nor last a function word, no digit or
  punctuation but a hyphen or an apostrophe; or it is one word of at least five letters rarer in English than
  ``--max-zipf`` (wordfreq), its singular too;
- it is no renamed pre-Remaster name (``kg.legacy``: the Remaster holds it under its new name), no entry name of
  another Pathfinder 2e book, no rules section heading of one nor a publication's title (``other-books.tsv.gz``,
  ``other-rules-sections.tsv.gz``, ``other-publications.tsv``: those are declined as another book's, the book named;
  the Core Rulebook's spells and feats are there);
- a name whose every word is common in English (wordfreq zipf at least ``--common-zipf``, 3.0: "Cult Leader",
  "Invisible Stalker") or one word ending in -ing or -ed ("Gibbering") is kept, marked to be matched only as written,
  capitalised (the asker's own words in lower case), unless it names an affliction ("mummy rot");
- (``--store``) no non-trait entry of the bundled corpus uses it or its singular (a current entry's name included) and one of its words
  is used by at most ``--max-word-entries`` (10) of those entries (a phrase made only of words the held books use
  widely reads as their own words put together).

Reproduce (the source a git directory, e.g. from ``git clone --bare``; the commit below is the one recorded):

    .venv/bin/python scripts/derive_legacy_pf2e_terms.py --pf2etools /path/Pf2eTools.git --store /path/store
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from derive_other_systems_terms import (  # noqa: E402  (a sibling script: the same filters, one owner)
    _STORE_WORD,
    _TERM_OK,
    FUNCTION_WORDS,
    git_files,
    git_head,
    git_show,
    loose_key,
    norm,
    pf2e_names,
    singular,
    store_uses,
    word_key,
    write_json_gz,
    zipf,
)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "core" / "agents" / "data" / "pf2e-legacy-derived.json.gz"
SYSTEM = "Pathfinder 2e (pre-Remaster)"
# lore and indexes, not rules: a deity, a place or a human ethnicity ("Varisian": the ancestries' lore) the Remaster
# keeps may be spelt in its lore
SKIP = re.compile(r"^data/(?:book|adventure|generated|deities|fluff-|places|organizations|languages|traits|books|ancestries|"
                  r"adventures|changelog|licenses|renderdemo|tables|quickrules|groups)|/fluff-|/index\.json$")


def clean(name: str) -> str:
    name = re.sub(r"\{@\w+ ([^|}]*)[^}]*\}", r"\1", name)  # "{@condition frightened 1}" -> "frightened 1"
    return re.sub(r"\s+", " ", name.replace("’", "'")).strip(" .:")


def names(value, source: str, books: set[str], out: dict[str, str], kind: str) -> None:
    """Every ``name`` in ``value`` whose own or nearest enclosing ``source`` is one of ``books``."""
    if isinstance(value, list):
        for v in value:
            names(v, source, books, out, kind)
    elif isinstance(value, dict):
        source = value.get("source", source) if isinstance(value.get("source"), str) else source
        # a creature's own name ("Owlbear", "Guildmaster") is the asker's monster, the scene of a question that asks a
        # held rule ("How often do I roll Survival to follow the owlbear's prints?"): its abilities are kept, not it
        creature = "creatureType" in value or "hp" in value
        if source in books and isinstance(value.get("name"), str) and not creature:
            # a creature's affliction ("Mummy Rot") is written in lower case in a question, like a disease
            out.setdefault(clean(value["name"]), "afflictions" if value.get("type") == "affliction" else kind)
        for k, v in value.items():
            if k not in ("otherSources", "source"):
                names(v, source, books, out, kind)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pf2etools", required=True, help="git directory of Pf2eTools (a pre-Remaster snapshot)")
    ap.add_argument("--books", default="CRB,APG,GMG,B1", help="the pre-Remaster books the Remaster replaced")
    ap.add_argument("--store", help="the bundled corpus's store: drop names its non-trait entries use")
    ap.add_argument("--max-zipf", type=float, default=2.5)
    ap.add_argument("--max-word-entries", type=int, default=10)
    ap.add_argument("--common-zipf", type=float, default=3.0,
                    help="a name whose every word is at least this common in English is matched only as written")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    books = set(args.books.split(","))
    found: dict[str, str] = {}
    paths = [p for p in git_files(args.pf2etools, "data") if p.endswith(".json") and not SKIP.search(p)]
    for path in paths:
        kind = path.removeprefix("data/").split("/")[0].removesuffix(".json")
        names(json.loads(git_show(args.pf2etools, path)), "", books, found, kind)
    banned = {loose_key(k) for k in pf2e_names()}
    rows: dict[tuple[str, ...], dict] = {}
    for name, kind in found.items():
        if not _TERM_OK.fullmatch(name):
            continue
        key = norm(name)
        words = list(key)
        if not 1 <= len(words) <= 4 or loose_key(key) in banned or key in rows:
            continue
        if len(words) == 1:
            one = norm(singular(name) or name)
            if len(words[0]) < 5 or max(zipf(words[0]), zipf(one[0])) >= args.max_zipf:
                continue
        else:
            content = [w for w in words if w not in FUNCTION_WORDS]
            if len(content) < 2 or words[0] in FUNCTION_WORDS or words[-1] in FUNCTION_WORDS:
                continue
        rows[key] = {"term": name, "system": SYSTEM, "kind": kind}
        # a name made only of common English words ("Cult Leader", "Invisible Stalker", "Bedside Manner") or one word
        # that is a verb's form ("Gibbering") is the asker's own words in lower case: matched only as written,
        # capitalised, as other games' feats are. An affliction's name is written in lower case ("mummy rot")
        if kind != "afflictions" and (min(zipf(w) for w in words) >= args.common_zipf
                                      or (len(words) == 1 and re.search(r"(?:ing|ed)$", words[0]))):
            rows[key]["written"] = True
    print(f"{len(found)} names of {sorted(books)}, {len(rows)} kept by the word filters", file=sys.stderr)
    dropped = common = 0
    if args.store:
        # a plural the store uses in the singular ("Arcane Schools", "arcane school") is the store's too
        ones = {k: norm(singular(r["term"]) or r["term"]) for k, r in rows.items()}
        used, entries = store_uses(args.store, [*rows, *ones.values()])
        used = {k for k in rows if k in used or ones[k] in used}
        dropped = len(used)
        for key in used:
            del rows[key]
        many = [k for k, r in rows.items()
                if min(entries[word_key(w)] for w in _STORE_WORD.findall(r["term"])) > args.max_word_entries]
        common = len(many)
        for key in many:
            del rows[key]
        print(f"store: {dropped} used by its non-trait entries, {common} of widely used words dropped", file=sys.stderr)
    out = {
        "about": "Pre-Remaster Pathfinder 2e names the Remaster books do not use, derived by "
                 "scripts/derive_legacy_pf2e_terms.py; only the names are kept, no rules text",
        "books": sorted(books), "max_zipf": args.max_zipf, "common_zipf": args.common_zipf, "max_word_entries": args.max_word_entries,
        "dropped_store_terms": dropped, "dropped_common_words": common,
        "sources": [{"system": SYSTEM, "repository": "https://github.com/Git-GoR/Pf2eTools (a fork of "
                     "https://github.com/Pf2eToolsOrg/Pf2eTools)", "commit": git_head(args.pf2etools), "paths": "data",
                     "licence": "Open Game Content of the Pathfinder Roleplaying Game (Second Edition) by Paizo Inc., "
                                "OGL 1.0a; the repository's code MIT"}],
        "terms": sorted(rows.values(), key=lambda r: r["term"].lower()),
    }
    write_json_gz(args.out, out)
    print(f"{len(rows)} terms -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
