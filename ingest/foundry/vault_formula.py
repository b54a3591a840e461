"""The vault's roll-data formulas with their lost parentheses restored.

The vault's conversion of the Foundry packs printed a ``@Damage[...]`` formula with its parentheses
deleted and each comma written " plus ": ``(floor(@item.level/2))d10`` became ``floor@item.level/2d10``,
``(max(4,@item.rank-1))d6`` became ``max4 plus @item.rank-1d6``. ``restore`` reads such a string back into
a Foundry formula, which ``enrich.resolve_formula`` renders as it renders a pack's own. A mangled string
can come from several formulas; every reading that obeys the rules below is tried (a chart parse that keeps
one formula per distinct value), and the string is restored only when all readings give the same values
over the reference's range (the item's rank/level from its base up, the character's level 1-20, ...);
else it is left as it is and reported.

Rules, each held by every formula of the 30 Foundry documents read for the vault's mangled entries
(ingest/data/foundry-transcribed, tests/ingest/data/vault-formulas.json):

- no arithmetic on two constants (``2*1+@actor.level`` is ``2*(1+@actor.level)``, ``@item.level -8/2``
  is ``(@item.level -8)/2``);
- ``floor``/``ceil``/``round`` round a quotient (``floor@item.rank/2*2`` is ``floor(@item.rank/2)*2``);
- a die is rolled on the whole count before it, never added after a flat term nor subtracted
  (``@item.rank+1d8`` is ``(@item.rank+1)d8``, as Shadow Blast's document and Sunburst's own "8d10 ...
  Heightened (+1) ... by 1d10" show), and no function takes dice;
- ``ternary`` takes a comparison (``gte``, ...) first; a comparison stands nowhere else;
- nothing but a die follows a ``max``, ``min`` or ``ternary``: its last argument runs to the end
  (``max8 plus @item.rank+3d6`` is ``(max(8,@item.rank+3))d6``, as Curse of Death's "Heightened (+1)
  ... by 1d6" shows).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction

from gmprep.ingest.foundry.enrich import resolve_formula

_ARITY = {"floor": 1, "ceil": 1, "round": 1, "abs": 1, "max": 2, "min": 2, "ternary": 3,
          "gte": 2, "gt": 2, "lte": 2, "lt": 2, "eq": 2}
_ROUNDING = {"floor", "ceil", "round"}
_COMPARE = {"gte", "gt", "lte", "lt", "eq"}
_OPEN = {"max", "min", "ternary"}
_FUNC = "(?:" + "|".join(sorted(_ARITY, key=len, reverse=True)) + ")"
_REF = r"@(?:item|actor)\.[A-Za-z0-9_.]*[A-Za-z0-9_]"
# a token of a mangled formula; a function name only glued to its first argument ("floor@", "max0")
_TOKEN = rf"(?:{_FUNC}(?=[@\d]|{_FUNC})|{_REF}|\d+(?:d\d+)?)"
_RUN = re.compile(rf"(?<![\w@.]){_TOKEN}+(?:(?: ?[-+*/] ?| plus ){_TOKEN}+)*")
_LEX = re.compile(rf"(?P<comma> plus )|(?P<op> ?[-+*/] ?)|(?P<func>{_FUNC})(?=[@\d]|{_FUNC})|(?P<ref>{_REF})"
                  r"|(?P<num>\d+)|(?P<die>d\d+)")


@dataclass(frozen=True)
class _Tok:
    kind: str  # comma, op, func, ref, num, die
    text: str


def _lex(span: str) -> list[_Tok]:
    toks, pos = [], 0
    while pos < len(span):
        m = _LEX.match(span, pos)
        if not m or m.end() == pos:
            raise ValueError(f"not a formula: {span!r}")
        kind = m.lastgroup or ""
        text = m.group(0).strip()
        if kind == "ref" and (d := re.search(r"(?<=[a-z])d\d+$", text)):  # "@item.leveld6": the reference, then its die
            toks += [_Tok("ref", text[: d.start()]), _Tok("die", d.group(0))]
        else:
            toks.append(_Tok(kind, text))
        pos = m.end()
    return toks


# A value: constant part and dice counts, e.g. (3, (("d6", 2),)) for 2d6+3, one per sampled roll data.
_Lin = tuple[Fraction, tuple[tuple[str, Fraction], ...]]


@dataclass(frozen=True)
class _Node:
    text: str  # the Foundry formula, parenthesized where needed
    prec: int  # 3 atom/call/dice, 2 * /, 1 + -
    kind: str  # num, ref, call:<f>, op:<o>, dice
    values: tuple  # one _Lin per environment (None where undefined)
    refs: bool
    dice: bool
    calls: int  # tokens covered by calls: the greedier reading of a last argument wins a tie
    open_end: bool = False  # ends with a max/min/ternary call, whose last argument nothing may follow


def _lin_const(c: Fraction) -> _Lin:
    return (c, ())


def _add(a: _Lin, b: _Lin, sign: int) -> _Lin:
    dice = dict(a[1])
    for k, v in b[1]:
        dice[k] = dice.get(k, Fraction(0)) + sign * v
    return (a[0] + sign * b[0], tuple(sorted((k, v) for k, v in dice.items() if v)))


def _ranges(refs: set[str], level: int | None) -> list[dict[str, Fraction]]:
    """Roll data to compare readings on: each reference over its range, all combinations (at most 400)."""
    base = level if level and level > 0 else 1
    domains = []
    for ref in sorted(refs):
        if ref.startswith("@item."):
            dom = range(base, base + 10)
        elif ref == "@actor.level":
            dom = range(1, 21)
        elif ref.endswith(".rank"):  # a proficiency rank
            dom = range(0, 5)
        elif ref.endswith(".mod"):
            dom = range(-1, 8)
        else:
            dom = range(0, 11)
        domains.append([Fraction(v) for v in dom])
    envs = [dict(zip(sorted(refs), combo, strict=True)) for combo in itertools.islice(itertools.product(*domains), 400)]
    return envs or [{}]


class _Chart:
    """All readings of a token list, one per distinct (value, shape) for each span."""

    def __init__(self, toks: list[_Tok], envs: list[dict[str, Fraction]]):
        self.toks, self.envs = toks, envs
        self.memo: dict[tuple[int, int], list[_Node]] = {}
        self.args_memo: dict[tuple[int, int, int], list[tuple[_Node, ...]]] = {}

    def span(self, i: int, j: int) -> list[_Node]:
        key = (i, j)
        if key not in self.memo:
            self.memo[key] = []  # a span never contains itself
            self.memo[key] = self._dedupe(self._readings(i, j))
        return self.memo[key]

    @staticmethod
    def _dedupe(nodes: Iterator[_Node]) -> list[_Node]:
        best: dict[tuple, _Node] = {}
        for n in nodes:
            key = (n.values, n.kind, n.refs, n.dice)
            if key not in best or (n.calls, -len(n.text)) > (best[key].calls, -len(best[key].text)):
                best[key] = n
        return list(best.values())

    def _readings(self, i: int, j: int) -> Iterator[_Node]:
        toks = self.toks
        if j - i == 1:
            t = toks[i]
            if t.kind == "num":
                yield _Node(t.text, 3, "num", tuple(_lin_const(Fraction(int(t.text))) for _ in self.envs), False, False, 0)
            elif t.kind == "ref":
                yield _Node(t.text, 3, "ref", tuple(_lin_const(e[t.text]) for e in self.envs), True, False, 0)
            return
        if toks[j - 1].kind == "die" and j - 1 > i:
            for count in self.span(i, j - 1):
                if count.dice:
                    continue
                die = toks[j - 1].text
                vals = tuple(None if v is None or v[1] else (Fraction(0), ((die, v[0]),)) for v in count.values)
                text = count.text if count.kind == "num" else f"({count.text})"
                yield _Node(f"{text}{die}", 3, "dice", vals, count.refs, True, count.calls)
        if toks[i].kind == "func":
            yield from self._call(i, j)
        for k in range(i + 1, j - 1):
            if toks[k].kind == "op":
                for left in self.span(i, k):
                    for right in self.span(k + 1, j):
                        node = _binop(toks[k].text, left, right)
                        if node:
                            yield node

    def _call(self, i: int, j: int) -> Iterator[_Node]:
        name = self.toks[i].text
        for args in self._args(i + 1, j, _ARITY[name]):
            if any(a.dice for a in args):
                continue
            if name in _ROUNDING and args[0].kind != "op:/":
                continue
            # a comparison is ternary's first argument and nothing else
            compares = [_is_compare(a) for a in args]
            if compares != ([True] + [False] * (len(args) - 1) if name == "ternary" else [False] * len(args)):
                continue
            vals = tuple(_apply(name, [a.values[e] for a in args]) for e in range(len(self.envs)))
            text = f"{name}({','.join(a.text for a in args)})"
            yield _Node(text, 3, f"call:{name}", vals, any(a.refs for a in args), False,
                        (j - i) + sum(a.calls for a in args), name in _OPEN)

    def _args(self, i: int, j: int, n: int) -> list[tuple[_Node, ...]]:
        key = (i, j, n)
        if key in self.args_memo:
            return self.args_memo[key]
        out: list[tuple[_Node, ...]] = []
        if n == 1:
            out = [(a,) for a in self.span(i, j)] if j > i else []
        else:
            for k in range(i + 1, j - 1):
                if self.toks[k].kind == "comma":
                    for first in self.span(i, k):
                        out += [(first, *rest) for rest in self._args(k + 1, j, n - 1)]
        self.args_memo[key] = out
        return out


def _is_compare(node: _Node) -> bool:
    return node.kind in {f"call:{c}" for c in _COMPARE}


def _apply(name: str, args: list) -> _Lin | None:
    if any(a is None or a[1] for a in args):
        return None
    x = [a[0] for a in args]
    if name in _ROUNDING or name == "abs":
        rounded = {"floor": math.floor(x[0]), "ceil": math.ceil(x[0]), "round": round(x[0]), "abs": abs(x[0])}[name]
        return _lin_const(Fraction(rounded))
    if name in ("max", "min"):
        return _lin_const(max(x) if name == "max" else min(x))
    if name == "ternary":
        return _lin_const(x[1] if x[0] else x[2])
    cmp = {"gte": x[0] >= x[1], "gt": x[0] > x[1], "lte": x[0] <= x[1], "lt": x[0] < x[1], "eq": x[0] == x[1]}[name]
    return _lin_const(Fraction(int(cmp)))


def _binop(op: str, left: _Node, right: _Node) -> _Node | None:
    if not left.refs and not left.dice and not right.refs and not right.dice:
        return None  # arithmetic on two constants: the parentheses that kept them apart were lost
    if right.dice and (op != "+" or not left.dice) or left.dice and op not in "+-":
        return None  # dice come first, are added, never scaled or subtracted
    if left.open_end:
        return None  # a max/min/ternary's last argument runs to the end of the formula or its die
    if _is_compare(left) or _is_compare(right):
        return None
    prec = 1 if op in "+-" else 2
    vals: list[_Lin | None] = []
    for a, b in zip(left.values, right.values, strict=True):
        if a is None or b is None:
            vals.append(None)
        elif op in "+-":
            vals.append(_add(a, b, 1 if op == "+" else -1))
        elif a[1] or b[1] or (op == "/" and b[0] == 0):
            vals.append(None)
        else:
            vals.append(_lin_const(a[0] * b[0] if op == "*" else a[0] / b[0]))
    lt = left.text if left.prec >= prec else f"({left.text})"
    # the right operand of - and / (and of a chain of * /) keeps its parentheses at equal precedence
    rt = right.text if right.prec > prec or (right.prec == prec and op in "+*") else f"({right.text})"
    return _Node(f"{lt}{op}{rt}", prec, f"op:{op}", tuple(vals), left.refs or right.refs, left.dice or right.dice,
                 left.calls + right.calls, right.open_end)


def restore(mangled: str, level: int | None = None) -> str | None:
    """``floor@item.level/2d10`` -> ``(floor(@item.level/2))d10``; None when the string is no formula or
    its readings differ in value (``level``: the item's level or rank, where item references start)."""
    try:
        toks = _lex(mangled)
    except ValueError:
        return None
    refs = {t.text for t in toks if t.kind == "ref"}
    if not refs:
        return None
    chart = _Chart(toks, _ranges(refs, level))
    readings = [n for n in chart.span(0, len(toks)) if all(v is not None for v in n.values)]
    if not readings or len({n.values for n in readings}) > 1:
        return None
    return max(readings, key=lambda n: (n.calls, -len(n.text))).text


@dataclass
class Repaired:
    """A text with its vault formulas rendered, and the formulas left as they were."""

    text: str
    restored: list[tuple[str, str]]  # (mangled, restored Foundry formula)
    left: list[str]


def _pieces(run: str, level: int | None) -> Iterator[tuple[str, str]]:
    """A run split at " plus " where a piece is a whole formula: (separator before it, piece)."""
    parts = run.split(" plus ")
    i = 0
    while i < len(parts):
        for j in range(len(parts), i, -1):  # the longest piece from i that is a formula
            piece = " plus ".join(parts[i:j])
            if j == i + 1 or restore(piece, level) is not None:
                yield (" plus " if i else "", piece)
                i = j
                break


def repair_text(text: str, values: Mapping[str, float]) -> Repaired:
    """Every vault formula of ``text`` rendered on ``values`` (the item's level/rank) as a pack formula is;
    a formula that cannot be restored with confidence is kept as the vault printed it."""
    item_level = values.get("item.level")
    level = int(item_level) if item_level is not None else None
    out: list[str] = []
    restored: list[tuple[str, str]] = []
    left: list[str] = []
    pos = 0
    for m in _RUN.finditer(text):
        if "@" not in m.group(0) or text.count("`", 0, m.start()) % 2:  # an inline roll in backticks kept its parentheses
            continue
        out.append(text[pos:m.start()])
        pos = m.end()
        for sep, piece in _pieces(m.group(0), level):
            out.append(sep)
            formula = restore(piece, level) if "@" in piece else None
            rendered = resolve_formula(formula, values) if formula else ""
            if not formula or "(varies)" in rendered:  # a reference with no value and no words: kept
                out.append(piece)
                if "@" in piece:
                    left.append(piece)
                continue
            restored.append((piece, formula))
            out.append(rendered)
    out.append(text[pos:])
    return Repaired("".join(out), restored, left)
