"""The vault's inline codes, printed as the books print them.

The vault's conversion of the Foundry packs wrote Foundry's ``[[/act ...]]`` and ``[[/r ...]]`` enrichers as
inline code for an Obsidian plugin: "attempts to `act grapple` the creature", "a successful DC 15 check to
`act escape dc=15`", "regains `r 4d8[healing] #Treat Wounds` Hit Points", "can't Wail again for `gmr 1d4 #Recharge
Wail` rounds". Hovers, quotes and answers showed the code. ``printed`` writes the action's name ("Grapple",
"Grab an Edge"), an Escape's DC where the sentence does not already say it, and a roll's dice ("4d8"; a check's "+15"),
as the books and a pack's own enrichers (``enrich.act_text``) print them.

The vault also printed each link to a Foundry effect item as a paragraph of its own ("Effect link: Effect: Aid")
or an Obsidian callout ("> [!danger] Effect: Engulf and Swallow Whole"): 550 in all. The books print nothing
there, except where the link was a word of the sentence ("The target is then temporarily immune to Treat Wounds
actions", "you gain panache"): ``without_effect_links`` keeps that word and drops the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from gmprep.ingest.foundry.enrich import act_name

_CODE = re.compile(r"`(?P<kind>act|r|gmr|br) (?P<body>[^`\n]+)`")
_FLAVOR = re.compile(r"\[[^\]]*\]")


def _act(body: str, before: str, after: str, names: Mapping[str, str]) -> str:
    slug, *opts = body.split()
    name = act_name(slug, names)
    dc = dict(o.split("=", 1) for o in opts if "=" in o).get("dc")
    if not dc or re.search(rf"\bDC {re.escape(dc)}\b[^.]*$", before[-80:]):
        return name  # "a successful DC 15 check to Escape": the sentence says the DC already
    if before.endswith("(") and after.startswith(")"):
        return f"{name} DC {dc}"  # "(Escape DC 28)"
    return f"{name} (DC {dc})"


def _roll(body: str) -> str:
    """``4d8[healing] #Treat Wounds`` -> ``4d8``: the dice; the words around the code say what they are."""
    formula = re.sub(r"(\d)D(\d)", r"\1d\2", _FLAVOR.sub("", body.split("#", 1)[0])).replace(" ", "")
    modifier = re.fullmatch(r"1d20([+-]\d+)", formula)
    return modifier.group(1) if modifier else formula  # "a 1d20+15 modifier" is printed "a +15 modifier"


def printed(text: str, action_names: Mapping[str, str]) -> str:
    """``text`` with every vault inline code written as the books print it (``action_names``: entry id -> name)."""
    if "`" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        body = m.group("body").strip()
        if m.group("kind") == "act":
            return _act(body, text[: m.start()], text[m.end():], action_names)
        return _roll(body)

    return _CODE.sub(one, text)


_EFFECT_LINE = re.compile(r"^(?:Effect link: |> \[!\w+\] )(?P<label>Effect: .*)$")
_SENTENCE_END = re.compile(r"[.!?:;)\]*>|]\s*$")


def _effect_word(label: str) -> str:
    """``Effect: Spell Effect: Panache (Temporary)`` -> ``panache``: the word the link stood for."""
    word = re.sub(r"\s*\([^)]*\)\s*$", "", label.rsplit("Effect: ", 1)[-1]).strip()
    return word.lower()


def without_effect_links(text: str) -> str:
    """``text`` without the vault's effect-link paragraphs and callouts; one inside a sentence becomes its word."""
    if "Effect: " not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _EFFECT_LINE.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        prev = next((k for k in range(len(out) - 1, -1, -1) if out[k].strip()), None)
        nxt = lines[j] if j < len(lines) else ""
        if prev is not None and not _SENTENCE_END.search(out[prev]) and re.match(r"[ ,.;:a-z]", nxt):
            # a word of the sentence: "... temporarily " + "immune" + " to Treat Wounds ..."
            sep = "" if nxt[0] in " ,.;:" else " "
            out[prev] = f"{out[prev].rstrip()} {_effect_word(m.group('label'))}{sep}{nxt}"
            del out[prev + 1:]
            i = j + 1
            continue
        # a paragraph of its own: dropped; a blank line after it still parts the paragraphs around it
        if j > i + 1 and out and out[-1].strip() and j < len(lines):
            out.append("")
        i = j
    return "\n".join(out).rstrip() if text == text.rstrip() else "\n".join(out)
