"""Derive other game systems' rules vocabularies from complete open sources, for the other-systems guard.

Writes ``core/agents/data/other-systems-derived.json.gz``: the terms of D&D 5e (SRD 5.1 and 5.2), Pathfinder 1st
Edition and Starfinder (1st Edition) that name a rule of theirs, each with its system and how often that system's own
text uses it, and the source repositories with commit and licence. ``core/sources.py`` loads them beside the hand list
(``core/agents/patterns/other-systems.yaml``) when ``answerability.guard_derived`` is on; at run time, as for the hand
list, every term the store's non-trait entries use is dropped.

Candidates are the names a system gives its rules: the titles and headings of its rules sections, its conditions,
class features and racial traits (not its spells, monsters or items: those names collide with Pathfinder 2e's), and
phrases of 2-4 capitalised words its rules text uses mid-sentence ("Resolve Points", "Stamina Points"). A candidate is
kept when

- the system's own text uses it at least ``--min-uses`` times (a rules term recurs; a chapter heading such as "Keep
  Things Interesting" does not), counting a plural heading's singular too ("Spell-Like Abilities", "spell-like ability");
- it has 2-4 words, at least two of them content words, neither first nor last a function word or a common verb's
  -ing form ("Being Chased", "Making the Check"), no digit or
  punctuation but a hyphen or an apostrophe; or it is one word rarer in English than ``--max-zipf`` (wordfreq, as
  ``answerability.unknown_name_repeats`` reads it, the singular's too: "Blindsense", not "Rage" or "Boons");
- it is no pre-Remaster Pathfinder 2e name (``kg.legacy``), no entry name of another Pathfinder 2e book and no rules
  section heading of one or a publication's title, singular or plural (``core/agents/data/other-books.tsv.gz``,
  ``other-rules-sections.tsv.gz``, ``other-publications.tsv``: those are declined as another book's, with the book
  named; the Gamemastery Guide's "Resolve Points", the "Core Rulebook"), and (``--store``) no non-trait entry of the
  bundled corpus uses it and one of its words is used by at most ``--max-word-entries`` (10) of those entries (a
  phrase made only of words the held books use widely, "Speed Bonus", reads as their own words put together).

Measured choices (docs/answerability.md, "Other games' rules vocabularies, derived from their open sources").

Reproduce (each source a git directory, e.g. from ``git clone --bare``; the commits below are those recorded):

    .venv/bin/python scripts/derive_other_systems_terms.py \\
        --dnd5e /path/5e-database.git --pf1 /path/pathfinder-data-1-e.git --sf1 /path/Starfinder-SRD-Markdown.git \\
        --store /path/store
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "core" / "agents" / "data" / "other-systems-derived.json.gz"
DATA = ROOT / "core" / "agents" / "data"

FUNCTION_WORDS = frozenset(
    "a an the of and or to in on at by for with from into onto as is are be was were it its this that these those "
    "your you my our their his her how what when where why who which than then vs not no all any each every other "
    "using use about over under out up off per via like being making having getting taking doing".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
_TERM_OK = re.compile(r"[A-Za-z][A-Za-z'’ -]*[A-Za-z]")
_CAPS_PHRASE = re.compile(r"(?<=[a-z,;] )((?:[A-Z][a-z]+(?:-[A-Za-z]+)*)(?: (?:[A-Z][a-z]+(?:-[A-Za-z]+)*)){1,3})\b")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.MULTILINE)
_LEAD_IN = re.compile(r"(?:^|\n)\s*\*{2,3}([^*\n]{3,50}?)[.:]?\*{2,3}|@HL\[([^\]\n]{3,50}?):?\]")
_CREDITS = re.compile(r"Copyright|©|\bAuthors?:|Open Game License|Section 15", re.IGNORECASE)


def git_show(repo: str, path: str, commit: str = "HEAD") -> str:
    return subprocess.run(["git", "-C", repo, "show", f"{commit}:{path}"], check=True, capture_output=True,
                          text=True).stdout


def git_files(repo: str, under: str, commit: str = "HEAD") -> list[str]:
    out = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", commit, under], check=True,
                         capture_output=True, text=True).stdout
    return [p for p in out.splitlines() if p]


def git_head(repo: str) -> str:
    return subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


def strings(value) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    return []


def headings(text: str) -> list[str]:
    """Markdown headings and bold lead-ins ("***Bonus Actions.***") of a rules text."""
    return [m.group(1) for m in _HEADING.finditer(text)] + [m.group(1) or m.group(2) for m in _LEAD_IN.finditer(text)]


def capitalised(texts: list[str]) -> list[str]:
    """Phrases of 2-4 capitalised words a rules text uses mid-sentence ("... spend 1 Resolve Point to ..."), credit
    lines aside (authors' and publishers' names)."""
    return [m.group(1) for t in texts for line in t.splitlines() if not _CREDITS.search(line)
            for m in _CAPS_PHRASE.finditer(line)]


def clean(term: str) -> str:
    term = re.sub(r"\s*\((?:Ex|Su|Sp|Ex or Su|Ex, Sp, or Su)\)\s*$", "", term.strip())  # "Blindsense (Ex)"
    return re.sub(r"\s+", " ", term.replace("’", "'")).strip(" .:")


# --- the sources -------------------------------------------------------------------------------------------------

class Source:
    """What a reader takes from one system: candidate terms, its rules text (mined for capitalised phrases), all its
    text (where uses are counted) and the names of its spells, creatures and items (never terms here)."""

    def __init__(self) -> None:
        self.candidates: list[str] = []
        self.rules_text: list[str] = []
        self.text: list[str] = []
        self.entity_names: set[str] = set()
        self.entries: list[str] = []  # names of the system's named rules entries (feats): terms however rarely used
        self.spells: list[str] = []  # its spells' names (entity names; entries too with ``--spells``)


def dnd5e(repo: str) -> Source:
    """The 5e SRD (2014: SRD 5.1; 2024: SRD 5.2), English."""
    src = Source()
    rules = ("Rule-Sections", "Rules", "Conditions", "Features", "Traits", "Feats", "Weapon-Properties",
             "Weapon-Mastery-Properties")
    for edition in ("2014", "2024"):
        for path in git_files(repo, f"src/{edition}/en"):
            if not path.endswith(".json"):
                continue
            data = json.loads(git_show(repo, path))
            kind = path.rsplit("5e-SRD-", 1)[-1].removesuffix(".json")
            src.text += strings(data)
            for item in data:
                if kind in rules:
                    src.candidates.append(item["name"])
                    for s in strings(item.get("desc", "")):
                        src.candidates += headings(s)
                        src.rules_text.append(s)
                elif kind in ("Spells", "Monsters", "Magic-Items", "Equipment", "Poisons", "Backgrounds", "Races",
                              "Species", "Subraces", "Subspecies", "Classes", "Subclasses", "Languages"):
                    src.entity_names.add(item["name"])
    return src


def pf1(repo: str) -> Source:
    """Pathfinder 1e (the app's JSON of the PRD): rules topics and their headings, class abilities."""
    src = Source()
    for path in git_files(repo, "json"):
        if not path.endswith(".json"):
            continue
        data = json.loads(git_show(repo, path))
        name = path.rsplit("/", 1)[-1]
        items = data.values() if isinstance(data, dict) else data
        for item in items:
            if not isinstance(item, dict):
                continue
            desc = "\n".join(strings(item.get("description", [])))
            src.text.append(desc)
            title = next((item[k] for k in ("name", "title") if isinstance(item.get(k), str)), "")
            if name.startswith(("rules_", "class_abilities")):
                src.candidates += [title, *headings(desc)]
                src.rules_text.append(desc)
            elif re.fullmatch(r"feat\d+\.json", name) and title and title != "Unknown":
                src.entries.append(title)
            elif re.fullmatch(r"spells\d*\.json", name) and title and title != "Unknown":
                src.spells.append(title)
                src.entity_names.add(title)
            elif name.startswith(("spells", "monsters", "npcs", "magic_", "equipment_", "faiths", "races",
                                  "archetypes_", "class_ability_", "classes", "monster_", "traits", "haunts", "traps",
                                  "drugs", "diseases", "curses", "sidekicks", "occult_")):
                src.entity_names.add(title)
    return src


def sf1(repo: str) -> Source:
    """Starfinder 1e (the SRD's Markdown vault): rules pages' titles and headings."""
    src = Source()
    for path in git_files(repo, "Rules/SF1E") + git_files(repo, "Compendium/SF1E"):
        if not path.endswith(".md"):
            continue
        body = git_show(repo, path)
        src.text.append(body)
        if path.startswith("Rules/"):
            src.candidates += headings(body)
            src.rules_text.append(body)
        elif "/Feats/" in path:
            src.entries.append(path.rsplit("/", 1)[-1].removesuffix(".md"))
        else:
            src.entity_names.add(path.rsplit("/", 1)[-1].removesuffix(".md"))
    return src


# --- filters ------------------------------------------------------------------------------------------------------

def norm(term: str) -> tuple[str, ...]:
    return tuple(w.lower().replace("’", "'") for w in re.split(r"[-\s]+", term.strip()) if w)


def singular(term: str) -> str | None:
    words = term.split(" ")
    last = words[-1]
    if re.search(r"[^aeiou]ies$", last, re.IGNORECASE):
        return " ".join([*words[:-1], last[:-3] + "y"])
    if re.search(r"[^su]s$", last, re.IGNORECASE):
        return " ".join([*words[:-1], last[:-1]])
    return None


def loose_key(key: tuple[str, ...]) -> tuple[str, ...]:
    """``key`` with every word singular ("attacks of opportunity" -> "attack of opportunity")."""
    return tuple(re.sub(r"(?<=[^aeiou])ies$", "y", re.sub(r"(?<=[^su])s$", "", w)) for w in key)


def ngram_counts(texts: list[str], wanted: set[tuple[str, ...]], longest: int = 4) -> Counter:
    """How often each wanted word sequence occurs in ``texts`` (words joined by spaces or hyphens, any case)."""
    counts: Counter = Counter()
    for t in texts:
        words = [w.lower().replace("’", "'") for w in re.findall(r"[A-Za-z][A-Za-z'’]*", t)]
        for i in range(len(words)):
            for n in range(1, longest + 1):
                g = tuple(words[i:i + n])
                if len(g) == n and g in wanted:
                    counts[g] += 1
    return counts


def zipf(word: str) -> float:
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, "en"))


def pf2e_names() -> set[tuple[str, ...]]:
    """Pre-Remaster names, other Pathfinder 2e books' entry names and rules section headings."""
    out: set[tuple[str, ...]] = set()
    try:
        from gmprep.kg.legacy import LEGACY_NAMES

        out |= {norm(n) for n in LEGACY_NAMES}
    except ImportError:
        print("warning: gmprep not importable; legacy names not dropped", file=sys.stderr)
    for name in ("other-books.tsv.gz", "other-rules-sections.tsv.gz"):
        with gzip.open(DATA / name, "rt", encoding="utf-8") as f:
            out |= {norm(r["name"]) for r in csv.DictReader(f, delimiter="\t")}
    with open(DATA / "other-publications.tsv", encoding="utf-8") as f:  # "Core Rulebook", "Advanced Player's Guide"
        out |= {norm(r["title"]) for r in csv.DictReader(f, delimiter="\t")}
    return out


_STORE_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*(?:-[A-Za-z][A-Za-z'’]*)*")


def word_key(word: str) -> str:
    """A word as the store's word counts read it: lower case, a possessive's "'s" dropped, hyphenated parts kept."""
    return re.sub(r"['’]s?$", "", word.lower())


def store_uses(store_dir: str, terms: list[tuple[str, ...]]) -> tuple[set[tuple[str, ...]], Counter]:
    """The terms the store's non-trait entries use, and for every word (hyphenated compounds as one word) how many
    of those entries use it."""
    from gmprep.kg.store import Store

    store = Store.open(Path(store_dir), create=False)
    texts = [f"{n.name}\n{n.text}" for n in store.iter_nodes(("entry",)) if n.type != "trait"]
    counts = ngram_counts(texts, set(terms))
    entries: Counter = Counter()
    for t in texts:
        entries.update({word_key(w) for w in _STORE_WORD.findall(t)})
    return {t for t in terms if counts[t]}, entries


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dnd5e", required=True, help="git directory of 5e-bits/5e-database")
    ap.add_argument("--pf1", required=True, help="git directory of jasontankapps/pathfinder-data-1-e")
    ap.add_argument("--sf1", required=True, help="git directory of Obsidian-TTRPG-Community/Starfinder-SRD-Markdown")
    ap.add_argument("--store", help="the bundled corpus's store: drop terms its non-trait entries use")
    ap.add_argument("--min-uses", type=int, default=5)
    ap.add_argument("--capitalised", action=argparse.BooleanOptionalAction, default=True,
                    help="also mine phrases of capitalised words from the rules text")
    ap.add_argument("--max-zipf", type=float, default=2.5)
    ap.add_argument("--max-word-entries", type=int, default=10,
                    help="with --store: keep a term only if one of its words is used by at most this many entries")
    ap.add_argument("--common-min-uses", type=int, default=0,
                    help="with --max-word-entries: keep a term of widely used words when its system's text uses it at "
                         "least this often (0: never)")
    ap.add_argument("--feats", action=argparse.BooleanOptionalAction, default=True,
                    help="also the names of Pathfinder 1e's and Starfinder's feats (used at least once)")
    ap.add_argument("--spells", action=argparse.BooleanOptionalAction, default=False,
                    help="with --feats: Pathfinder 1e's spells' names too (measured, not shipped)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    sources = [
        ("Dungeons & Dragons 5th Edition", "5e-bits/5e-database", args.dnd5e, dnd5e,
         "System Reference Document 5.1 and 5.2 by Wizards of the Coast LLC, CC-BY-4.0 "
         "(https://creativecommons.org/licenses/by/4.0/); the repository's code MIT",
         "src/2014/en, src/2024/en"),
        ("Pathfinder 1st Edition", "jasontankapps/pathfinder-data-1-e", args.pf1, pf1,
         "Open Game Content of the Pathfinder Roleplaying Game by Paizo Inc., OGL 1.0a (the repository's "
         "OPENGAMECONTENT.md); the app's own code GPL-3.0", "json"),
        ("Starfinder (1st Edition)", "Obsidian-TTRPG-Community/Starfinder-SRD-Markdown", args.sf1, sf1,
         "no licence file; the notes are the Starfinder Reference Document: Open Game Content of the Starfinder "
         "Roleplaying Game by Paizo Inc., OGL 1.0a", "Rules/SF1E, Compendium/SF1E"),
    ]
    banned = {loose_key(k) for k in pf2e_names()}
    rows: dict[tuple[str, ...], dict] = {}
    meta = []
    read: list[tuple[str, Source, dict[tuple[str, ...], str]]] = []
    # the feats' names that no rules heading or phrase gives: a named entry is a term however rarely its text uses it
    named: set[tuple[str, ...]] = set()
    for system, repo_name, repo, reader, licence, paths in sources:
        src = reader(repo)
        cands = src.candidates + (capitalised(src.rules_text) if args.capitalised else [])
        if args.spells:
            src.entries += src.spells
            src.entity_names -= set(src.spells)
        entities = {loose_key(norm(clean(n))) for n in src.entity_names}
        if args.feats:
            others = {norm(clean(c)) for c in cands}
            cands += src.entries
            named |= {norm(clean(n)) for n in src.entries} - others
        forms: dict[tuple[str, ...], str] = {}
        for c in cands:
            c = clean(c)
            if not _TERM_OK.fullmatch(c):
                continue
            for form in (c, singular(c)):
                if form and 1 <= len(norm(form)) <= 4 and loose_key(norm(form)) not in entities:
                    forms.setdefault(norm(form), form)
        read.append((system, src, forms))
        meta.append({"system": system, "repository": f"https://github.com/{repo_name}", "commit": git_head(repo),
                     "paths": paths, "licence": licence, "candidates": len(forms)})
    wanted = {k for _, _, forms in read for k in forms}
    # a term is the system's whose own text uses it most ("concentration check": Pathfinder 1e, not 5e)
    uses = {system: ngram_counts([t for t in src.text if not _CREDITS.search(t[:2000]) or len(t) > 2000], wanted)
            for system, src, _ in read}
    for system, _, forms in read:
        for key, shown in forms.items():
            words = list(key)
            content = [w for w in words if w not in FUNCTION_WORDS]
            best = max(uses, key=lambda sy: uses[sy][key])
            if best != system or key in rows:
                continue
            count = uses[system][key]
            one = norm(singular(shown) or shown)
            if count < (1 if key in named else args.min_uses) or loose_key(key) in banned:
                continue
            if len(words) == 1:
                if len(words[0]) < 5 or max(zipf(words[0]), zipf(one[0])) >= args.max_zipf:
                    continue
            elif len(content) < 2 or words[0] in FUNCTION_WORDS or words[-1] in FUNCTION_WORDS:
                continue
            rows[key] = {"term": shown, "system": system, "uses": count}
            if key in named:
                rows[key]["kind"] = "feat"  # matched only as written, capitalised (``core/sources.py``)
    for m in meta:
        m["kept"] = sum(1 for r in rows.values() if r["system"] == m["system"])
        print(f"{m['system']}: {m['candidates']} candidates, {m['kept']} kept", file=sys.stderr)
    dropped = 0
    if args.store:
        used, entries = store_uses(args.store, list(rows))
        dropped = len(used)
        for key in used:
            del rows[key]
        print(f"store: {dropped} terms used by its non-trait entries dropped", file=sys.stderr)
        if args.max_word_entries:
            # a phrase composed only of words the held books use widely ("Speed Bonus", "Legendary Item") reads as
            # those books' own words put together; a rules term of another game holds a word they rarely use
            # ("spell-like ability", "casting defensively", "minor crew action")
            common = [k for k, r in rows.items()
                      if min(entries[word_key(w)] for w in _STORE_WORD.findall(r["term"])) > args.max_word_entries
                      and not (args.common_min_uses and r.get("kind") != "feat" and r["uses"] >= args.common_min_uses)]
            for key in common:
                del rows[key]
            print(f"store: {len(common)} terms of words in more than {args.max_word_entries} entries each dropped",
                  file=sys.stderr)
    for m in meta:  # after the store's filters
        m["kept"] = sum(1 for r in rows.values() if r["system"] == m["system"])
    out = {
        "about": "Other game systems' rules terms, derived by scripts/derive_other_systems_terms.py; only the terms "
                 "(names of rules) are kept, no rules text",
        "min_uses": args.min_uses, "max_zipf": args.max_zipf, "max_word_entries": args.max_word_entries,
        "capitalised": args.capitalised, "dropped_store_terms": dropped,
        "sources": meta,
        "terms": sorted(rows.values(), key=lambda r: (r["system"], r["term"].lower())),
    }
    write_json_gz(args.out, out)
    print(f"{len(rows)} terms -> {args.out}", file=sys.stderr)
    return 0


def write_json_gz(path: Path, data: dict) -> None:
    """``data`` as indented JSON, gzipped with no timestamp: the same bytes on any machine."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as raw, gzip.GzipFile("", "wb", fileobj=raw, mtime=0) as f:
        f.write(json.dumps(data, indent=1, ensure_ascii=False).encode("utf-8"))


if __name__ == "__main__":
    raise SystemExit(main())
