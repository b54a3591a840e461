"""Foundry VTT pf2e description markup -> the corpus's Markdown text.

Pack documents hold HTML with Foundry "enrichers": ``@UUID[...]{Label}`` links, ``@Damage[...]``,
``[[/r ...]]`` inline rolls, ``@Check[...]``, ``@Template[...]``, ``[[/act ...]]`` and ``@Localize[KEY]``
(text kept in the system's language files). Each becomes the words a reader of the book sees; links
are reported to the caller, which turns them into corpus ids.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
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


def _formula(expr: str) -> str:
    """``(1d8+6)[bludgeoning]`` -> ``1d8+6 bludgeoning``; ``3d6[persistent,fire]`` -> ``3d6 persistent fire``."""
    m = re.fullmatch(r"\(?(?P<f>[^\[\]]*?)\)?(?:\[(?P<t>[^\[\]]*)\])?", expr.strip())
    if not m:
        return expr
    formula = m.group("f").strip().strip("()")
    formula = re.sub(r"^\((.*)\)$", r"\1", formula)
    kinds = [k.strip() for k in (m.group("t") or "").split(",") if k.strip()]
    kinds = [k for k in kinds if k not in ("splash",)] + [k for k in kinds if k == "splash"]
    return " ".join([formula, *kinds]).strip()


def _split_top(body: str) -> list[str]:
    """Split on commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in body:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


def damage_text(body: str) -> str:
    """``(1d8+1)[bludgeoning],1d6[acid]`` -> ``1d8+1 bludgeoning plus 1d6 acid``."""
    rolls = [p for p in _split_top(body.split("|")[0]) if p.strip()]
    return " plus ".join(_formula(p) for p in rolls)


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


def act_text(body: str) -> str:
    """``escape dc=22`` -> ``Escape (DC 22)``."""
    name, *rest = body.split()
    opts = dict(o.split("=", 1) for o in rest if "=" in o)
    label = name.replace("-", " ").title()
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
) -> Enriched:
    """Foundry HTML with enrichers -> Markdown, the corpus ids it links to, the references left unresolved."""
    out = Enriched(text="")

    def loc(m: re.Match) -> str:
        key = m.group("key")
        value = localize(key) if localize else None
        if value is None:
            out.unresolved.append(f"localize:{key}")
            return ""
        if _depth < 3:  # a localized string may itself hold enrichers and further @Localize keys
            inner = enrich(value, resolve, localize, _depth + 1)
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
    s = _DAMAGE.sub(lambda m: m.group("label") or damage_text(m.group("body")), s)
    s = _CHECK.sub(lambda m: m.group("label") or check_text(m.group("body")), s)
    s = _TEMPLATE.sub(lambda m: m.group("label") or template_text(m.group("body")), s)
    s = _ACT.sub(lambda m: m.group("label") or act_text(m.group("body")), s)
    s = _ROLL.sub(lambda m: m.group("label") or damage_text(m.group("body")), s)
    s = _EMBED.sub("", s)
    out.text = _HtmlToMarkdown.convert(s) if _depth == 0 else s
    out.links = list(dict.fromkeys(out.links))
    out.unresolved = list(dict.fromkeys(out.unresolved))
    return out


def looks_like_id(ref: str) -> bool:
    """Foundry document ids are 16 alphanumerics; older links name the document instead."""
    return bool(_ID.match(ref))
