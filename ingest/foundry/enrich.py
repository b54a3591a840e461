"""Foundry VTT pf2e description markup -> the corpus's Markdown text.

Pack documents hold HTML with Foundry "enrichers": ``@UUID[...]{Label}`` links, ``@Damage[...]``,
``[[/r ...]]`` inline rolls, ``@Check[...]``, ``@Template[...]``, ``[[/act ...]]`` and ``@Localize[KEY]``
(text kept in the system's language files). Each becomes the words a reader of the book sees; links
are reported to the caller, which turns them into corpus ids.
"""

from __future__ import annotations

import ast
import html
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

# A UUID resolver: (compendium pack, document id or name, label) -> (display name, corpus id or None).
Resolver = Callable[[str, str, str | None], tuple[str, str | None]]

GLYPHS = {
    "1": "[one-action]", "a": "[one-action]", "2": "[two-actions]", "d": "[two-actions]",
    "3": "[three-actions]", "t": "[three-actions]", "r": "[reaction]", "f": "[free-action]",
}
_SAVES = {"fortitude": "Fortitude", "reflex": "Reflex", "will": "Will"}
_LABEL = r"(?:\{(?P<label>[^{}]*)\})?"
_UUID = re.compile(r"@UUID\[(?P<uuid>[^\]]+)\]" + _LABEL)
_LOCALIZE = re.compile(r"@Localize\[(?P<key>[^\]]+)\]")
_DAMAGE = re.compile(r"@Damage\[(?P<body>(?:[^\[\]]|\[(?:[^\[\]]|\[[^\[\]]*\])*\])*)\]" + _LABEL)
_CHECK = re.compile(r"@Check\[(?P<body>[^\]]+)\]" + _LABEL)
_TEMPLATE = re.compile(r"@Template\[(?P<body>[^\]]+)\]" + _LABEL)
_ACT = re.compile(r"\[\[/act (?P<body>[^\]]+)\]\]" + _LABEL)
_ROLL = re.compile(r"\[\[/b?r (?P<body>(?:[^\[\]]|\[[^\[\]]*\])*?)\]\]" + _LABEL)
_EMBED = re.compile(r"@Embed\[[^\]]*\]" + _LABEL)
_ID = re.compile(r"^[A-Za-z0-9]{16}$")


@dataclass
class Enriched:
    """Markdown text plus the corpus ids it links to and the references it could not resolve."""

    text: str
    links: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)


def _params(body: str) -> tuple[str | None, dict[str, str]]:
    """``reflex|dc:20|basic:true`` or ``type:reflex|dc:20`` -> (first bare value, key/value pairs)."""
    first, out = None, {}
    for part in body.split("|"):
        if ":" in part:
            key, _, value = part.partition(":")
            out[key.strip()] = value.strip()
        elif first is None:
            first = part.strip()
    return first, out


# Foundry's roll-data functions (its Math helpers) that pack formulas use.
_FUNCS: dict[str, Callable[..., float]] = {
    "floor": math.floor, "ceil": math.ceil, "round": round, "abs": abs, "max": max, "min": min,
    "ternary": lambda c, a, b: a if c else b, "gte": operator.ge, "gt": operator.gt, "lte": operator.le,
    "lt": operator.lt, "eq": operator.eq,
}
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_REF = re.compile(r"@(?:item|actor)\.[A-Za-z0-9_.]+")
# The character's roll data a book states in words.
_LEVEL = "@actor.level"
_ACTOR_WORDS = {_LEVEL: "your level", "@actor.abilities.str.mod": "your Strength modifier",
                "@actor.abilities.dex.mod": "your Dexterity modifier", "@actor.abilities.con.mod": "your Constitution modifier",
                "@actor.abilities.int.mod": "your Intelligence modifier", "@actor.abilities.wis.mod": "your Wisdom modifier",
                "@actor.abilities.cha.mod": "your Charisma modifier"}
_LEVEL_WORDS = {_LEVEL: "your level", f"2*{_LEVEL}": "twice your level", f"floor({_LEVEL}/2)": "half your level",
                f"ceil({_LEVEL}/2)": "half your level (rounded up)"}
_DICE_PER_LEVEL = {_LEVEL: "per level", f"floor({_LEVEL}/2)": "per 2 levels", f"ceil({_LEVEL}/2)": "per 2 levels"}


def _eval(node: ast.AST) -> float:
    """An arithmetic expression tree of numbers, + - * /, unary minus and ``_FUNCS`` calls; else ValueError."""
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords:
        return _FUNCS[node.func.id](*[_eval(a) for a in node.args])
    raise ValueError("not arithmetic")


def evaluate(expr: str, values: Mapping[str, float]) -> int | None:
    """``floor(@item.rank/2)`` with ``{"item.rank": 3}`` -> 1; None when a reference has no value or the
    expression is not plain arithmetic (Python's parser reads it; nothing is executed)."""
    text = _REF.sub(lambda m: str(values[m.group(0)[1:]]) if m.group(0)[1:] in values else m.group(0), expr)
    if "@" in text:
        return None
    try:
        value = _eval(ast.parse(text.strip(), mode="eval"))
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError):
        return None
    return int(value) if float(value).is_integer() else None


def _balanced(expr: str) -> bool:
    depth = 0
    for ch in expr:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0


def _split_dice(formula: str) -> tuple[str, str] | None:
    """``(floor(@item.rank/2))d8`` or ``floor(@item.level/2)d6`` -> (the count expression, ``d8``/``d6``)."""
    m = re.fullmatch(r"(?P<count>.+?)(?P<die>d\d+)", formula)
    if not m or not _balanced(m.group("count")) or not re.search(r"[@(]", m.group("count")):
        return None
    count = m.group("count")
    while count.startswith("(") and count.endswith(")") and _balanced(count[1:-1]):
        count = count[1:-1]
    return count, m.group("die")


def _per_levels(count: str) -> str | None:
    """``@actor.level`` -> "per level"; ``floor(@actor.level/6)`` -> "per 6 levels"."""
    if count == _LEVEL:
        return "per level"
    m = re.fullmatch(r"(?:floor|ceil)\(@actor\.level/(\d+)\)", count)
    return f"per {m.group(1)} levels" if m else None


_RANKS = {1: "trained", 2: "expert", 3: "master", 4: "legendary"}


def _when(ref: str, threshold: int) -> str | None:
    """The condition ``ref >= threshold`` in words: "at level 5", "at master in Intimidation"."""
    if ref == _LEVEL:
        return f"at level {threshold}"
    m = re.fullmatch(r"@actor\.system\.skills\.([a-z-]+)\.rank", ref)
    if m and threshold in _RANKS:
        return f"at {_RANKS[threshold]} in {m.group(1).replace('-', ' ').title()}"
    return None


def _ladder(expr: str, values: Mapping[str, float]) -> list | None:
    """``ternary(gte(@actor.level,9),3,ternary(gte(@actor.level,5),2,1))`` -> [1, ("at level 5", 2),
    ("at level 9", 3)]: a value that steps up with the character's level or a skill's rank, as the books
    list it; None for any other expression."""
    steps: list[tuple[str, int]] = []
    rest = expr
    while True:
        m = re.fullmatch(r"ternary\(gte\((?P<ref>@[A-Za-z0-9_.]+),(?P<t>\d+)\),(?P<a>[^,()]+),(?P<b>.+)\)", rest)
        if not m:
            break
        when, value = _when(m.group("ref"), int(m.group("t"))), evaluate(m.group("a"), values)
        if when is None or value is None:
            return None
        steps.append((when, value))
        rest = m.group("b")
    base = evaluate(rest, values)
    if not steps or base is None:
        return None
    return [base, *reversed(steps)]


def _in_words(expr: str) -> str:
    """A formula on the character's roll data with the references in words (``2*(1+@actor.level)`` ->
    ``2×(1+your level)``); a reference with no words is "(varies)"."""
    out = re.sub(r"@actor\.[A-Za-z0-9_.]+", lambda m: _ACTOR_WORDS.get(m.group(0), "(varies)"), expr)
    out = _REF.sub("(varies)", out)
    return out.replace("*", "×")


def resolve_formula(formula: str, values: Mapping[str, float]) -> str:
    """A pack formula with roll-data references as the book prints it: the item's level or rank put in
    (``(@item.rank)d6`` at rank 1 -> ``1d6``), the character's level in words (``(@actor.level)d6`` ->
    ``(1d6 per level)``, ``floor(@actor.level/2)`` -> ``half your level``); any other in words as a formula
    (``(2×(1+your level))``), never the raw reference."""
    if "@" not in formula:
        return formula
    formula = re.sub(r"\s+", "", formula)
    while formula.startswith("(") and formula.endswith(")") and _balanced(formula[1:-1]):
        formula = formula[1:-1]
    dice = _split_dice(formula)
    if dice:
        count, die = dice
        n = evaluate(count, values)
        if n is not None and n > 0:
            return f"{n}{die}"
        per = _per_levels(count)
        if per:
            return f"(1{die} {per})"
        ladder = _ladder(count, values)
        if ladder:
            (base, *steps) = ladder
            return f"{base}{die} (" + ", ".join(f"{n}{die} {when}" for when, n in steps) + ")"
        return f"({_in_words(count)}){die}"
    n = evaluate(formula, values)
    if n is not None:
        return str(n)
    summed = _dice_plus_flat(formula, values)
    if summed:
        return summed
    ladder = _ladder(formula, values)
    if ladder:
        (base, *steps) = ladder
        return f"{base} (" + ", ".join(f"{n} {when}" for when, n in steps) + ")"
    if formula in _LEVEL_WORDS:
        return _LEVEL_WORDS[formula]
    return f"({_in_words(formula)})"


def _terms(formula: str) -> list[str]:
    """``1d6+max(0,@item.rank-3)`` -> [``1d6``, ``+max(0,@item.rank-3)``]: split before + and - outside parentheses."""
    terms, depth, cur = [], 0, ""
    for ch in formula:
        if ch in "+-" and depth == 0 and cur:
            terms.append(cur)
            cur = ""
        depth += (ch == "(") - (ch == ")")
        cur += ch
    return [*terms, cur]


def _dice_plus_flat(formula: str, values: Mapping[str, float]) -> str | None:
    """Dice then flat terms on the item's roll data, as the book prints them: ``3d4+@item.level-6`` at level 6
    -> ``3d4``, ``1d6+@item.rank`` at rank 2 -> ``1d6+2``; None unless every flat term has a value."""
    terms = _terms(formula)
    dice = [t for t in terms if re.search(r"\dd\d+|\)d\d+", t)]
    if len(terms) < 2 or not dice or dice != terms[: len(dice)]:
        return None
    rolled = [resolve_formula(t.lstrip("+"), values) if "@" in t else t.lstrip("+") for t in dice]
    if any(not re.fullmatch(r"\d+d\d+", r) for r in rolled):
        return None
    flat = evaluate("".join(terms[len(dice):]).lstrip("+"), values)
    if flat is None:
        return None
    return "+".join(rolled) + (f"+{flat}" if flat > 0 else f"-{-flat}" if flat < 0 else "")


def _formula(expr: str, values: Mapping[str, float] | None = None) -> str:
    """``(1d8+6)[bludgeoning]`` -> ``1d8+6 bludgeoning``; ``3d6[persistent,fire]`` -> ``3d6 persistent fire``;
    roll-data references resolved with ``values`` (``resolve_formula``)."""
    m = re.fullmatch(r"(?P<f>[^\[\]]*?)(?:\[(?P<t>[^\[\]]*)\])?", expr.strip())
    if not m:
        return expr
    raw = m.group("f").strip()
    if "@" in raw:
        formula = resolve_formula(raw, values or {})
    else:
        formula = raw.strip("()")
        formula = re.sub(r"^\((.*)\)$", r"\1", formula)
    kinds = [k.strip() for k in (m.group("t") or "").split(",") if k.strip() and "@" not in k]
    kinds = [k for k in kinds if k not in ("splash",)] + [k for k in kinds if k == "splash"]
    return " ".join([formula, *kinds]).strip()


def _split_rolls(body: str) -> list[str]:
    """Split on commas outside brackets and parentheses (``max(4,@item.rank)d6`` is one roll)."""
    parts, depth, cur = [], 0, ""
    for ch in body:
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


def damage_text(body: str, values: Mapping[str, float] | None = None) -> str:
    """``(1d8+1)[bludgeoning],1d6[acid]`` -> ``1d8+1 bludgeoning plus 1d6 acid``."""
    rolls = [p for p in _split_rolls(body.split("|")[0]) if p.strip()]
    return " plus ".join(_formula(p, values) for p in rolls)


def check_text(body: str) -> str:
    """``type:reflex|dc:20|basic:true`` -> ``DC 20 basic Reflex``, as Foundry prints an inline check: the
    sentence around it says "save" or "check" itself ("a @Check[reflex|dc:17] save")."""
    first, p = _params(body)
    kind = (p.get("type") or first or "").lower()
    dc = p.get("dc", "")
    dc_txt = f"DC {dc} " if dc and re.fullmatch(r"\d+", dc) else ""
    basic = "basic " if p.get("basic") == "true" else ""
    if kind in _SAVES:
        return f"{dc_txt}{basic}{_SAVES[kind]}"
    if kind == "flat":
        return f"{dc_txt}flat check"
    name = kind.replace("-", " ").title() if kind else "check"
    return f"{dc_txt}{name}".strip()


def template_text(body: str) -> str:
    """``type:burst|distance:10`` -> ``10-foot burst``."""
    first, p = _params(body)
    kind = p.get("type") or first or "area"
    dist = p.get("distance")
    return f"{dist}-foot {kind}" if dist else kind


_SMALL_WORDS = {"a", "an", "and", "the", "of", "to", "in", "on", "for", "or", "at", "by", "with"}


def act_name(slug: str, names: Mapping[str, str] | None = None) -> str:
    """``grab-an-edge`` -> the action entry's name in ``names`` (entry id -> name), else "Grab an Edge"."""
    known = (names or {}).get(f"pf2e:action:{slug}")
    if known:
        return known
    return " ".join(w if i and w in _SMALL_WORDS else w.capitalize() for i, w in enumerate(slug.split("-")))


def act_text(body: str) -> str:
    """``escape dc=22`` -> ``Escape (DC 22)``."""
    name, *rest = body.split()
    opts = dict(o.split("=", 1) for o in rest if "=" in o)
    label = act_name(name)
    return f"{label} (DC {opts['dc']})" if "dc" in opts else label


def uuid_target(uuid: str) -> tuple[str, str]:
    """``Compendium.pf2e.conditionitems.Item.Frightened`` -> (``conditionitems``, ``Frightened``)."""
    parts = uuid.split(".")
    if len(parts) >= 3 and parts[0] == "Compendium":
        return parts[2], parts[-1]
    return "", parts[-1]


class _HtmlToMarkdown:
    """Small, tag-by-tag HTML -> Markdown for Foundry descriptions (p, strong, em, lists, hr, tables)."""

    @staticmethod
    def convert(src: str) -> str:
        s = src.replace("\r", "")
        s = re.sub(
            r'<span[^>]*class="[^"]*action-glyph[^"]*"[^>]*>\s*([^<]*?)\s*</span>',
            lambda m: GLYPHS.get(m.group(1).strip().lower(), m.group(1)), s,
        )
        s = re.sub(r"<(strong|b)>\s*(.*?)\s*</\1>", lambda m: f"**{m.group(2)}**" if m.group(2) else "", s, flags=re.S)
        s = re.sub(r"<(em|i)>\s*(.*?)\s*</\1>", lambda m: f"*{m.group(2)}*" if m.group(2) else "", s, flags=re.S)
        s = re.sub(r"<h[1-6][^>]*>(.*?)</h[1-6]>", r"\n\n**\1**\n\n", s, flags=re.S)
        s = re.sub(r"<hr\s*/?>", "\n\n", s)
        s = re.sub(r"<br\s*/?>", "\n", s)
        s = re.sub(r"<li[^>]*>", "\n- ", s)
        s = re.sub(r"</(li|ul|ol)>", "\n", s)
        s = re.sub(r"<tr[^>]*>", "\n|", s)
        s = re.sub(r"<t[hd][^>]*>(.*?)</t[hd]>", r" \1 |", s, flags=re.S)
        s = re.sub(r"</?(p|div|section|table|tbody|thead|blockquote)[^>]*>", "\n\n", s)
        s = re.sub(r"<[^>]+>", "", s)
        s = html.unescape(s)
        s = re.sub(r"[ \t]+\n", "\n", s)
        s = re.sub(r"\n[ \t]+(?=\S)", "\n", s)
        s = re.sub(r"(?<=\S)[ \t]{2,}", " ", s)
        s = re.sub(r"\n{3,}", "\n\n", s)
        return s.strip()


def enrich(
    src: str, resolve: Resolver, localize: Callable[[str], str | None] | None = None, _depth: int = 0,
    values: Mapping[str, float] | None = None,
) -> Enriched:
    """Foundry HTML with enrichers -> Markdown, the corpus ids it links to, the references left unresolved.
    ``values``: the document's roll data (``item.level``, ``item.rank``) for formulas that use it."""
    out = Enriched(text="")

    def loc(m: re.Match) -> str:
        key = m.group("key")
        value = localize(key) if localize else None
        if value is None:
            out.unresolved.append(f"localize:{key}")
            return ""
        if _depth < 3:  # a localized string may itself hold enrichers and further @Localize keys
            inner = enrich(value, resolve, localize, _depth + 1, values)
            out.links.extend(inner.links)
            out.unresolved.extend(inner.unresolved)
            return inner.text
        return value

    def uuid(m: re.Match) -> str:
        pack, ref = uuid_target(m.group("uuid"))
        if pack.endswith("-effects"):  # "Effect: Demonic Blood Magic": Foundry's automation, not rules text
            return ""
        name, entry_id = resolve(pack, ref, m.group("label"))
        if entry_id:
            out.links.append(entry_id)
        else:
            out.unresolved.append(f"{pack}:{name}" if pack else name)
        return m.group("label") or name

    s = _LOCALIZE.sub(loc, src)
    s = _UUID.sub(uuid, s)
    s = _DAMAGE.sub(lambda m: m.group("label") or damage_text(m.group("body"), values), s)
    s = _CHECK.sub(lambda m: m.group("label") or check_text(m.group("body")), s)
    s = _TEMPLATE.sub(lambda m: m.group("label") or template_text(m.group("body")), s)
    s = _ACT.sub(lambda m: m.group("label") or act_text(m.group("body")), s)
    s = _ROLL.sub(lambda m: m.group("label") or damage_text(m.group("body"), values), s)
    s = _EMBED.sub("", s)
    out.text = _HtmlToMarkdown.convert(s) if _depth == 0 else s
    out.links = list(dict.fromkeys(out.links))
    out.unresolved = list(dict.fromkeys(out.unresolved))
    return out


def looks_like_id(ref: str) -> bool:
    """Foundry document ids are 16 alphanumerics; older links name the document instead."""
    return bool(_ID.match(ref))
