"""Labelling aid: every span a matcher might hover in the fetched real notes, for a person to judge.

Two passes over each note's raw text (front matter, HTML, links and code included):
- ``matcher``: what the hover path reports today (``gmprep.evals.real_notes.predict``);
- ``broad``: every name-index key in any form: each run of up to 6 word tokens whose key, or the
  key with its last word de-inflected ("trips", "stood", "elven", "holding"-less plurals), is a name,
  alias or legacy name. Spans inside a longer broad span are dropped (the longer one is judged).

Prints one JSON line per candidate: {"doc", "start", "end", "text", "ids", "matcher", "context"}.
This only proposes spans; the labels in labels/*.jsonl are a person's judgement of them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

_TOKEN = re.compile(r"\+?[A-Za-z0-9]+(?:['\u2019\-][A-Za-z0-9]+)*")
# irregular forms a GM writes; regular ones are handled by _deinflect
_IRREGULAR = {"stood": "stand", "elven": "elf", "dwarven": "dwarf", "gnomish": "gnome", "halfling": "halfling",
              "orcish": "orc", "goblins": "goblin", "fled": "flee", "hid": "hide", "drew": "draw", "struck": "strike",
              "sought": "seek", "fell": "fall", "leapt": "leap", "swam": "swim", "cast": "cast", "dwarves": "dwarf",
              "elves": "elf", "undead": "undead"}


def _deinflect(word: str) -> set[str]:
    out = set()
    if word in _IRREGULAR:
        out.add(_IRREGULAR[word])
    for suf, rep in (("ies", "y"), ("ied", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("d", ""),
                     ("ing", ""), ("ing", "e"), ("ped", "p"), ("ping", "p"), ("ged", "g"), ("ging", "g"),
                     ("ted", "t"), ("ting", "t"), ("ned", "n"), ("ning", "n")):
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            out.add(word[: len(word) - len(suf)] + rep)
    out.discard(word)
    return out


def broad(text: str, names) -> list[dict]:
    """Every name-index key in any form, anywhere in the raw text."""
    toks = [(m.start(), m.end(), m.group().replace("\u2019", "'").lower()) for m in _TOKEN.finditer(text)]
    keys = names._keys  # the index's own table: the same names hover can ever show
    found: list[dict] = []
    for i in range(len(toks)):
        for n in range(6, 0, -1):
            if i + n > len(toks):
                continue
            span = toks[i:i + n]
            if any("\n\n" in text[a[1]:b[0]] for a, b in zip(span, span[1:], strict=False)):
                continue
            words = [t[2] for t in span]
            last = words[-1].removesuffix("'s")
            forms = [tuple(words[:-1] + [last])] + [tuple(words[:-1] + [f]) for f in _deinflect(last)]
            ids: list[str] = []
            for f in forms:
                for c in keys.get(f, []):
                    if c.node_id not in ids:
                        ids.append(c.node_id)
            if ids:
                found.append({"start": span[0][0], "end": span[-1][1], "ids": ids})
                break
    found.sort(key=lambda c: (c["start"], -c["end"]))
    kept: list[dict] = []
    for c in found:  # drop spans inside a longer one
        if kept and kept[-1]["start"] <= c["start"] and c["end"] <= kept[-1]["end"]:
            continue
        kept.append(c)
    return kept


def main() -> int:
    from gmprep.evals.real_notes import load_sources, load_text, note_scanner, predict_all
    from gmprep.server.state import RulesBook

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", type=Path, default=None)
    p.add_argument("--split", default="both")
    args = p.parse_args()
    names = RulesBook.from_corpus().names
    scanner = note_scanner(names)
    for src in load_sources(HERE):
        if args.split != "both" and src.split != args.split:
            continue
        text = load_text(src, args.cache)
        pred = {(m.start, m.end): m.node_id for m in predict_all(text, scanner)}
        cands = {(c["start"], c["end"]): c["ids"] for c in broad(text, names)}
        for span, nid in pred.items():
            ids = cands.get(span, [])
            cands[span] = [nid] + [i for i in ids if i != nid]
        for (a, b), ids in sorted(cands.items()):
            ctx = text[max(0, a - 60):a] + "[[" + text[a:b] + "]]" + text[b:b + 60]
            print(json.dumps({"doc": src.id, "start": a, "end": b, "text": text[a:b], "ids": ids,
                              "matcher": pred.get((a, b)), "context": ctx.replace("\n", "⏎")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
