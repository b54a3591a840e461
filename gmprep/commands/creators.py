"""``gmprep encounter`` (evaluate or build), ``gmprep creature`` (build) and ``gmprep statblock check``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import cast

from gmprep.commands import settings_from_args
from gmprep.common.errors import GmprepError
from gmprep.core.creators.models import Threat


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``encounter``, ``creature`` and ``statblock`` commands."""
    e = sub.add_parser("encounter", help="XP and threat of an encounter, or `encounter build` for options",
                       description='gmprep encounter --party 4 --level 3 "2 goblin warriors, elite wolf" | '
                                   "gmprep encounter build --party 4 --level 3 --threat moderate --traits undead")
    e.add_argument("text", nargs="*", help='the creatures ("2 goblin warriors, goblin war chanter"), or "build"')
    e.add_argument("--party", type=int, help="number of characters")
    e.add_argument("--level", type=int, help="party level")
    e.add_argument("--threat", help="build: trivial|low|moderate|severe|extreme (default moderate)")
    e.add_argument("--traits", action="append", default=[], help="build: creature traits or theme words (repeatable, or comma-separated)")
    e.add_argument("--terrain", action="append", default=[], help="build: terrain words (swamp, forest, ...)")
    e.add_argument("-n", type=int, default=3, help="build: how many options (default 3)")
    e.add_argument("--boss", action="store_true",
                   help="build: a boss fight (a solo boss, GM Core's Boss and Lackeys / Boss and Lieutenant first)")
    e.add_argument("--json", action="store_true", help="print JSON")
    e.set_defaults(func=run_encounter)
    c = sub.add_parser("creature", help="build a creature/NPC statblock from GM Core's tables (or a hazard: \"trap\", "
                                        "\"complex haunt\")")
    c.add_argument("concept", nargs="?", default="", help='name or idea ("ogre bouncer")')
    c.add_argument("--level", type=int, default=None,
                   help="the creature's level (not needed for \"elite ogre warrior\" / \"weak troll\": a Monster Core "
                        "creature with Monster Core's elite or weak adjustments)")
    c.add_argument("--role", default=None, help="brute, skirmisher, sniper, soldier, spellcaster, skill paragon, magical striker "
                   "(default: a role the concept says, 'bugbear brute'; else the build of the class or creature kind the concept names, 'court wizard': spellcaster; else soldier)")
    c.add_argument("--traits", action="append", default=[], help="traits (repeatable, or comma-separated)")
    c.add_argument("--tradition", choices=("arcane", "divine", "occult", "primal"),
                   help="a caster's spell tradition (default: the closest spellcasting creature's, else arcane)")
    c.add_argument("--json", action="store_true", help="print the statblock as JSON")
    c.set_defaults(func=run_creature)
    s = sub.add_parser("statblock", help="check statblocks against GM Core's creature-building tables")
    s.set_defaults(func=lambda args: (s.print_help(), 2)[1])  # `gmprep statblock` alone: its own help
    ssub = s.add_subparsers(dest="statblock_command", metavar="SUBCOMMAND")
    chk = ssub.add_parser("check", help="numbers off the tables for the statblock's level (exit 1 if any)")
    chk.add_argument("file", help="markdown file with one statblock")
    chk.add_argument("--level", type=int, help="level (default: the statblock's 'Creature N')")
    chk.add_argument("--json", action="store_true", help="print the issues as JSON")
    chk.set_defaults(func=run_statblock_check)


def _words(values: list[str]) -> list[str]:
    return [w.strip() for v in values for w in v.split(",") if w.strip()]


def _resolver(args: argparse.Namespace):
    from gmprep.core.creators.resolver import CreatureResolver
    from gmprep.kg.store import Store

    store = Store.open(settings_from_args(args).store_dir, create=False)
    try:
        return CreatureResolver.from_store(store)
    finally:
        store.close()


def run_encounter(args: argparse.Namespace) -> int:
    from gmprep.core.creators.encounter import (
        build_encounters,
        evaluate_encounter,
        parse_encounter,
        render_encounter_block,
        unknown_message,
        unmatched_theme,
    )

    if args.text[:1] == ["build"]:
        if args.party is None or args.level is None:
            raise GmprepError("encounter build needs --party and --level")
        words = _words(args.traits) + _words(args.terrain) + _words(args.text[1:])
        # checked by build_encounters (an unknown threat is a one-line error, exit 1)
        # a boss fight is severe unless said otherwise: GM Core's severe threat is "confronting a final boss"
        threat = cast(Threat, (args.threat or ("severe" if args.boss else "moderate")).lower())
        resolver = _resolver(args)
        reports = build_encounters(args.party, args.level, threat, words, resolver, n=args.n, boss=args.boss)
        if not reports:
            raise GmprepError(f"no Monster Core encounter fits a {threat} budget for {args.party} characters of level {args.level}")
        note = unmatched_theme(args.level, words, resolver, reports)
        if args.json:
            print(json.dumps([r.cli_json() for r in reports], indent=2))
            if note:
                print(note, file=sys.stderr)
            return 0
        if note:
            print(note + "\n")
        for i, r in enumerate(reports, 1):
            shape = f" — {r.structure} (GM Core's Quick Adventure Groups, p. 75)" if r.structure and \
                r.structure != "Solo boss" else f" — {r.structure}" if r.structure else ""
            print(f"Option {i}: {r.xp} XP, {r.threat} (budget {r.budget[r.threat]}){shape}")
            print(render_encounter_block(r))
        return 0
    text = " ".join(args.text).strip()
    if not text:
        raise GmprepError('give the creatures, e.g. gmprep encounter --party 4 --level 3 "2 goblin warriors, elite wolf"')
    spec = parse_encounter(text)
    if not spec.lines:
        raise GmprepError(f"no creatures found in {text!r}")
    report = evaluate_encounter(spec, _resolver(args), args.party, args.level)
    if report.unknown:
        raise GmprepError("; ".join(unknown_message(u) for u in report.unknown))
    if args.json:
        print(json.dumps(report.cli_json(), indent=2))
        return 0
    print(f"{report.xp} XP: {report.threat} for {report.party_size} characters of level {report.party_level}")
    for line in report.explanation:
        print(f"  {line}")
    for w in report.warnings:
        print(f"warning: {w}")
    return 0


def run_creature(args: argparse.Namespace) -> int:
    from gmprep.core.creators.build import build_request
    from gmprep.core.creators.creature import ROLES
    from gmprep.core.creators.models import CreatureRequest

    role = args.role.lower().replace("-", " ").replace("_", " ") if args.role else None
    if role is not None and role not in ROLES:
        raise GmprepError(f"unknown role '{args.role}': one of {', '.join(ROLES)}")
    if args.level is None:
        return _run_adjusted(args)
    if not -1 <= args.level <= 24:
        raise GmprepError("creature level must be between -1 and 24 (the tables' range)")
    try:
        resolver = _resolver(args)
    except GmprepError as exc:  # no store: numbers still come from the tables; no ability suggestions
        print(f"note: no ability suggestions ({exc})", file=sys.stderr)
        resolver = None
    req = CreatureRequest(level=args.level, role=role, concept=args.concept, traits=_words(args.traits),
                          tradition=args.tradition)
    try:
        built = build_request(req, resolver)  # a hazard, a Monster Core creature at the level, or a built statblock
    except ValueError as exc:
        raise GmprepError(str(exc)) from None
    print(built.model.model_dump_json(indent=2) if args.json else built.markdown, end="" if not args.json else "\n")
    return 0


def _run_adjusted(args: argparse.Namespace) -> int:
    """``gmprep creature "elite ogre warrior"`` (no --level): the Monster Core creature with Monster Core's elite or
    weak adjustments (``core.creators.adjust``)."""
    from gmprep.core.creators.adjust import adjust_creature, render_adjusted_markdown
    from gmprep.core.creators.intent import said_adjustment

    said = said_adjustment(args.concept or "")
    if said is None:
        raise GmprepError('creature needs --level (or an elite/weak Monster Core creature: "elite ogre warrior")')
    resolver = _resolver(args)
    node = resolver.resolve(said[1])
    if node is None or node.level is None:
        hint = resolver.suggest(said[1])
        raise GmprepError(f"'{said[1]}' is not a Monster Core creature to adjust"
                          + (f"; did you mean {', '.join(hint)}?" if hint else "")
                          + f' (or give --level to build a {said[0]} one: gmprep creature "{args.concept}" --level N)')
    adjusted = adjust_creature(node, said[0])
    print(adjusted.model_dump_json(indent=2) if args.json else render_adjusted_markdown(adjusted),
          end="" if not args.json else "\n")
    return 0


def run_statblock_check(args: argparse.Namespace) -> int:
    from gmprep.core.creators.statblock import check_statblock, statblock_level

    path = Path(args.file)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GmprepError(f"cannot read {path}: {exc.__class__.__name__}") from None
    if args.level is None and statblock_level(text) is None:
        raise GmprepError(f"{path}: no level found (write 'Creature N' or give --level)")
    issues = check_statblock(text, args.level)
    if args.json:
        print(json.dumps([i.model_dump() for i in issues], indent=2))
    else:
        for i in issues:
            line = text.count("\n", 0, i.start) + 1
            col = i.start - (text.rfind("\n", 0, i.start) + 1) + 1
            print(f"{path}:{line}:{col}: {i.message} (fix: {i.fix_text})")
        if not issues:
            print(f"{path}: every number is within GM Core's tables")
    return 1 if issues else 0
