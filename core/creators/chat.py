"""The chat's creators route: a question that is an encounter or creature request is answered by the
deterministic builders (cited) instead of rules retrieval.

``gmprep.core.answer.answer_question`` calls :func:`creators_answer` first, so the chat panel
(``gmprep/ask``) and ``gmprep ask`` route the same way. An encounter option is written as core's
``render_encounter_block`` writes it, as the editor's "Build encounter" action inserts it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gmprep.core.creators import tables
from gmprep.core.creators.encounter import render_encounter_block
from gmprep.core.creators.intent import (
    EncounterRequest,
    encounter_check_candidates,
    level_beyond_tables,
    missing_party_or_level,
    parse_adjust_request,
    parse_count_question,
    parse_creature_request,
    parse_encounter_request,
    said_party,
)
from gmprep.core.creators.models import Citation as CreatorCitation
from gmprep.core.creators.models import CreatureRequest, EncounterReport
from gmprep.kg.models import Citation

if TYPE_CHECKING:
    from gmprep.core.answer import Answer

log = logging.getLogger(__name__)


def party_label(size: int, level: int) -> str:
    """``4 PCs, level 3``: the party as encounter blocks state it."""
    return f"{size} PC{'s' if size != 1 else ''}, level {level}"


def creature_line(count: int, adjustment: str | None, name: str, level: int | None = None) -> str:
    """One creature group as an encounter line: ``2 elite Zombie Shambler``; ``4 bandit lackeys (level -1)`` for one
    with no entry (``level``: the level it is counted at)."""
    written = f"{name} (level {level})" if level is not None else name
    return " ".join(p for p in (str(count) if count > 1 else "", adjustment or "", written) if p)


def option_summary(report: EncounterReport) -> str:
    """``80 XP, moderate``; ``120 XP, severe, Boss and Lackeys`` for one built on a quick adventure group."""
    return f"{report.xp} XP, {report.threat}" + (f", {report.structure}" if report.structure else "")


def budget_line(report: EncounterReport) -> str:
    """The budgets for the party, in threat order."""
    return budget_line_of(report.budget)


def budget_line_of(budget: dict[str, int]) -> str:
    return ", ".join(f"{t} {xp}" for t, xp in budget.items())


def _citation(c: CreatorCitation) -> Citation:
    """A creators citation as the chat's: a building table, an entry of the type its id says (creature, class,
    background) or a rule."""
    m = re.match(r"pf2e:([a-z-]+):", c.id)
    type_ = m.group(1) if m else "rule"
    return Citation(source_id=c.id, name=c.name, type=type_, book=c.book or None, page=c.page)


def report_citations(report: EncounterReport) -> list[Citation]:
    """The rules the arithmetic follows, then each creature's Monster Core entry."""
    out = [_citation(c) for c in report.citations]
    for c in report.creatures:
        if c.id:  # a creature counted at the level the GM wrote has no entry to cite
            out.append(Citation(source_id=c.id, name=c.name, type="creature", book=c.book, page=c.page))
    return _unique(out)


def report_markdown(r: EncounterReport, party_from: str | None = None) -> str:
    """The arithmetic of one encounter: creatures, total, the budget row, the threat, citations (the editor's hover on
    an encounter block and the chat's answer to "how hard is this encounter")."""
    party = party_label(r.party_size, r.party_level)
    where = "" if party_from in (None, "block") else f" (party from {party_from})"
    parts = [f"### Encounter: {r.xp} XP, {r.threat}", f"Party: **{party}**{where}"]
    rows = ["| Creature | Level | XP each | Count | XP |", "|---|---:|---:|---:|---:|"]
    for c in r.creatures:
        name = f"{c.adjustment} {c.name}" if c.adjustment else c.name
        name += "" if c.id else " (level as written)"
        name += f" ({c.hazard} hazard)" if c.hazard else ""
        lvl = f"{c.level} ({c.base_level:+d} base)" if c.adjustment else str(c.level)
        rows.append(f"| {name} | {lvl} | {c.xp_each} | {c.count} | {c.xp_each * c.count} |")
    rows.append(f"| **Total** | | | | **{r.xp}** |")
    parts.append("\n".join(rows))
    parts.append("Budget for this party: " + " · ".join(
        f"**{t} {xp}**" if t == r.threat else f"{t} {xp}" for t, xp in r.budget.items()
    ))
    if r.explanation:
        parts.append("\n".join(f"- {line}" for line in r.explanation))
    if r.warnings:
        parts.append("\n".join(f"- ⚠ {w}" for w in r.warnings))
    if r.unknown:
        parts.append("\n".join(
            f"- not counted: \"{u.text}\"" + (f" (did you mean {', '.join(u.suggestions)}?)" if u.suggestions else "")
            for u in r.unknown
        ))
    # the rules, then each creature's entry with its id (once: the report cites each entry once)
    cites = [f"{c.label()} `{c.id}`" if ":creature:" in c.id else c.label() for c in r.citations]
    if cites:
        parts.append("**Sources:** " + " · ".join(dict.fromkeys(cites)))
    return "\n\n".join(parts)


def encounter_options_markdown(req: EncounterRequest, reports: list[EncounterReport], note: str | None = None) -> str:
    """The chat answer for an encounter request: each option as a block with its XP and threat; ``note``: what to say
    first (``encounter.unmatched_theme``)."""
    party = party_label(req.party_size, req.party_level)
    head = f"**{req.threat.capitalize()} encounter for {party}**"
    if req.size_assumed:
        head += " (four PCs: the party's size was not said, and GM Core's budgets are written for four)"
    if req.threat_word:
        head += f" (“{req.threat_word}” read as GM Core's {req.threat} threat)"
    if req.words:
        head += f" (matching: {', '.join(req.words)})"
    if not reports:
        return head + "\n\nNo combination of Monster Core creatures fits that budget with those words."
    parts = [head, *([note] if note else []),
             f"Budgets for this party: {budget_line(reports[0])} XP (GM Core, Encounter Budget)."]
    for i, r in enumerate(reports, 1):
        parts.append(f"**Option {i}** — {option_summary(r)}")
        parts.append(render_encounter_block(r).rstrip("\n"))
        if r.warnings:
            parts.append("\n".join(f"- ⚠ {w}" for w in r.warnings))
    return "\n\n".join(parts)


def creators_answer(question: str, resolver_factory, earlier: Sequence[str] = ()) -> Answer | None:
    """The builders' answer when ``question`` asks to build an encounter or a creature, else None.
    ``resolver_factory()`` gives the ``CreatureResolver`` (only called for a creators question). ``earlier``: the
    conversation's earlier user messages, oldest first, for an edit of the last build ("make it level 7",
    ``revise.revise``)."""
    from gmprep.core.answer import Answer
    from gmprep.core.creators.revise import points_back, revise
    from gmprep.core.traces import TraceStep

    revision = revise(question, earlier) if earlier else None
    if revision is not None:
        revised = _encounter_answer(revision.encounter, question, resolver_factory) if revision.encounter else \
            _creature_answer(revision.creature, question, resolver_factory) if revision.creature else None
        if revised is not None:
            revised.text = (f"_Read as the request above (“{revision.earlier.strip()}”) with "
                            f"{', '.join(revision.changed.values())}._\n\n") + revised.text
            revised.steps.insert(0, TraceStep(name="revise_request", status="ok",
                                              input={"earlier": revision.earlier}, output={"changed": revision.changed}))
            return revised
    if points_back(question):
        # "make it severe" with no build above it changes, or with none it can change: say so (it built a "Level 7
        # Soldier", or went to the rules)
        text = (f"“{question.strip()}” changes a build, and nothing asked above in this conversation is one it "
                "changes: ask for the build itself (“make a level 5 bandit captain”, “build a moderate encounter for 4 "
                "level 3 PCs”), then change it (a level, a role, a tradition, a threat, a party).")
        return Answer(text=text, outcome="partial", citations=[], question=question, backend="creators",
                      steps=[TraceStep(name="revise_request", status="ok", input={"question": question},
                                       output={"earlier": None})])
    enc = parse_encounter_request(question)
    if enc is not None:
        return _encounter_answer(enc, question, resolver_factory)
    counted = _counted(question, resolver_factory, earlier)
    if counted is not None:
        return counted
    checked = _rated_encounter(question, resolver_factory)
    if checked is not None:
        step = TraceStep(name="rate_encounter", status="ok", input={"question": question},
                         output={"xp": checked.xp, "threat": checked.threat})
        return Answer(text=report_markdown(checked), outcome="answered", citations=report_citations(checked),
                      steps=[step], question=question, backend="creators")
    adjusted = parse_adjust_request(question)
    if adjusted is not None:
        from gmprep.core.creators.adjust import adjust_creature, render_adjusted_markdown

        node = resolver_factory().resolve(adjusted[1])
        if node is not None and node.level is not None:
            a = adjust_creature(node, adjusted[0])
            step = TraceStep(name="adjust_creature", status="ok", input={"adjustment": adjusted[0], "name": node.name},
                             output={"name": a.name, "level": a.level})
            return Answer(text=render_adjusted_markdown(a), outcome="answered",
                          citations=_unique([_citation(c) for c in a.citations]), steps=[step], question=question,
                          backend="creators")
        if parse_creature_request(question) is None:  # no level to build one either: say which names there are
            hint = resolver_factory().suggest(adjusted[1])
            return Answer(text=f"“{adjusted[1]}” is not a Monster Core creature to make {adjusted[0]}"
                          + (f"; did you mean {', '.join(hint)}?" if hint else ".")
                          + f" To build one from GM Core's tables instead, give a level (“a level 4 {adjusted[1]}”).",
                          outcome="partial", citations=[], question=question, backend="creators",
                          steps=[TraceStep(name="adjust_creature", status="ok", input={"name": adjusted[1]},
                                           output={"unknown": True})])
    req = parse_creature_request(question)
    if req is not None:
        return _creature_answer(req, question, resolver_factory)
    return _without_level(question, resolver_factory, earlier)


def _without_level(question: str, resolver_factory, earlier: Sequence[str]) -> Answer | None:
    """A build request that lacks its party's or its own level ("build an encounter with wolves", "make an innkeeper
    NPC"): built for the party the conversation stated last, and the chat says so; without one, the chat asks for it
    (it went to the rules, which quoted GM Core's Encounters, or declined)."""
    from gmprep.core.answer import Answer
    from gmprep.core.traces import TraceStep

    beyond = level_beyond_tables(question)
    if beyond is not None:
        return Answer(text=f"GM Core's tables build creatures, hazards and encounters from level -1 to 24; level {beyond} "
                      "is beyond them. Ask for a level in that range (a level 24 creature is GM Core's highest).",
                      outcome="partial", citations=[], question=question, backend="creators",
                      steps=[TraceStep(name="build_request", status="ok", input={"question": question},
                                       output={"level": beyond})])
    missing = missing_party_or_level(question)
    if missing is None:
        return None
    if missing == "creature":
        named = parse_creature_request(f"{question.strip().rstrip('.!')} for 4 level 1 PCs")
        if named is not None and named.concept and resolver_factory().resolve(named.concept) is not None:
            return None  # "stats for a goblin warrior": Monster Core's own stat block, which the rules answer quotes
    party = next((p for p in map(said_party, reversed(earlier)) if p is not None), None)
    if party is not None:
        size, level = party[0] or 4, party[1]
        stated = f"{question.strip().rstrip('.!')} for {size} level {level} PCs"
        note = f"_For the party stated earlier in this conversation: {party_label(size, level)}._\n\n"
        enc = parse_encounter_request(stated) if missing == "encounter" else None
        req = parse_creature_request(stated) if missing == "creature" else None
        answer = _encounter_answer(enc, question, resolver_factory) if enc is not None else \
            _creature_answer(req, question, resolver_factory) if req is not None else None
        if answer is not None:
            answer.text = note + answer.text
            return answer
    ask = ("the party it is for (“... for 4 level 3 PCs”): GM Core's budgets are by the party's size and level"
           if missing == "encounter" else
           "its level (“a level 3 ...”) or its party's (“... for my level 3 party”): GM Core's tables are by level")
    return Answer(text=f"To build that, say {ask}.", outcome="partial", citations=[], question=question,
                  backend="creators", steps=[TraceStep(name="build_request", status="ok", input={"question": question},
                                                       output={"missing": missing})])


def _encounter_answer(enc: EncounterRequest, question: str, resolver_factory) -> Answer:
    """The encounter options for ``enc``, cited."""
    from gmprep.core.answer import Answer
    from gmprep.core.creators.encounter import build_encounters, unmatched_theme
    from gmprep.core.traces import TraceStep

    resolver = resolver_factory()
    reports = build_encounters(enc.party_size, enc.party_level, enc.threat, enc.phrases or enc.words, resolver,
                               boss=enc.boss)
    note = unmatched_theme(enc.party_level, enc.phrases or enc.words, resolver, reports)
    cites: list[Citation] = []
    for r in reports:
        cites += report_citations(r)
    step = TraceStep(name="build_encounter", status="ok", input=enc.model_dump(),
                     output={"options": [option_summary(r) for r in reports]})
    return Answer(text=encounter_options_markdown(enc, reports, note), outcome="answered" if reports else "partial",
                  citations=_unique(cites), steps=[step], question=question, backend="creators")


def _creature_answer(req: CreatureRequest, question: str, resolver_factory) -> Answer:
    """The statblock (or hazard) built for ``req``, cited, with how the request was read where the chat must say it."""
    from gmprep.core.answer import Answer
    from gmprep.core.creators.build import build_request
    from gmprep.core.traces import TraceStep

    built = build_request(req, resolver_factory())
    cites = [_citation(c) for c in built.citations]
    step = TraceStep(name={"hazard": "build_hazard", "scaled": "scale_creature"}.get(built.kind, "build_creature"),
                     status="ok", input=req.model_dump(), output={"name": built.name, "level": built.level})
    text = built.markdown
    abilities = getattr(built.model, "abilities", None) or []
    cites += [Citation(source_id=a.source_id, name=a.source_name, type=a.source_type, book=a.book, page=a.page)
              for a in abilities]
    if built.role_default:
        # said where the chat shows it (the statblock's own comment is hidden once the markdown is rendered)
        text = (f"_Nothing in “{req.concept}” names a class, creature, background or archetype gmprep holds, so "
                "this is GM Core's soldier, the all-round build; name a role for another (“a level "
                f"{req.level} {req.concept} spellcaster”)._\n\n") + text
    if (req.boss_threat is not None or req.lackeys is not None) and req.party_level is not None:
        text = party_part_note(req) + text
        cites += [_citation(tables.xp_citation()), _citation(tables.budget_citation())]
    return Answer(text=text, outcome="answered", citations=_unique(cites),
                  steps=[step], question=question, backend="creators")


def party_part_note(req: CreatureRequest) -> str:
    """How "a boss for my level 7 party" or "4 goblin minions for my level 3 party" was read: the boss at the level whose
    XP alone is its threat for the party, the lackeys at party level - 2 (and what the number asked comes to)."""
    size = req.party_size or 4
    party_level = req.party_level if req.party_level is not None else req.level
    xp = tables.creature_xp(req.level, party_level)
    assumed = "" if req.party_size else " (four: the size GM Core's budgets are written for, as none was said)"
    cited = "(GM Core, Creature XP and Role and Encounter Budget)"
    if req.boss_threat is None:
        note = (f"_Lackeys for {size} PCs of level {party_level}{assumed}: level {req.level}, GM Core's strongest lackey "
                f"(party level - 2, {xp} XP each; - 3 and - 4 are weaker) {cited}.")
        if req.lackeys:
            total = req.lackeys * xp
            threat = tables.threat_for_xp(total, tables.encounter_budget(size))
            note += f" The {req.lackeys} asked for are {total} XP: {_a(threat)} {threat} encounter on their own."
        return note + "_\n\n"
    return (f"_A boss for {size} PCs of level {party_level}{assumed}: level {req.level}, the highest level whose XP "
            f"alone ({xp} XP) is {_a(req.boss_threat)} {req.boss_threat} encounter for them {cited}. For another, give "
            f"the creature's own level (“a level {party_level + 2} ...”) or the threat (“a deadly boss”)._\n\n")


def _a(word: str) -> str:
    return "an" if word[:1] in ("a", "e", "i", "o", "u") else "a"


def _counted(question: str, resolver_factory, earlier: Sequence[str] = ()):
    """The answer to "How many goblin warriors make a moderate encounter for 4 level 1 PCs?": the most of that Monster
    Core creature whose XP stays within the threat's budget and is that threat (GM Core's Encounter Budget), with the
    arithmetic; "how many of them ..." counts the creature the conversation built last (``revise.last_creature``).
    None unless the question asks that of a creature the books hold or the chat built."""
    from gmprep.core.answer import Answer
    from gmprep.core.creators.encounter import evaluate_encounter
    from gmprep.core.creators.models import EncounterLine, EncounterSpec
    from gmprep.core.traces import TraceStep

    asked = parse_count_question(question)
    note = ""
    if asked is None and earlier:
        # "how many ogres make a severe fight?" after the party was stated: for that party, said so
        party = next((p for p in map(said_party, reversed(earlier)) if p is not None), None)
        if party is not None:
            size_then, level_then = party[0] or 4, party[1]
            asked = parse_count_question(f"{question.strip().rstrip('?.!')} for {size_then} level {level_then} PCs?")
            note = f"_For the party stated earlier in this conversation: {party_label(size_then, level_then)}._\n\n"
    if asked is None:
        return None
    said, adjustment, threat, size, level = asked
    resolver = resolver_factory()
    node = resolver.resolve(said)
    if (node is None or node.level is None) and _THEM.fullmatch(said):
        built = _counted_build(question, earlier, threat, size, level)
        if built is not None:
            built.text = note + built.text
        return built
    if node is None or node.level is None:
        return None
    each = tables.creature_xp(tables.adjusted_level(node.level, adjustment), level)
    budget = tables.encounter_budget(size)
    counts = _counts(each, threat, budget)
    name = f"{adjustment} {node.name}" if adjustment else node.name
    if each == 0 or not counts:
        return Answer(text=note + _no_number(name, threat, size, level, each, budget), outcome="answered", citations=[_citation(tables.budget_citation()),
                      _citation(tables.xp_citation())], question=question, backend="creators",
                      steps=[TraceStep(name="count_creatures", status="ok", input={"name": node.name}, output={})])
    spec = EncounterSpec(party_size=size, party_level=level,
                         lines=[EncounterLine(text=f"{max(counts)} {name}", name=node.name, count=max(counts),
                                              adjustment=adjustment)])
    report = evaluate_encounter(spec, resolver)
    lo = min(counts)
    head = (f"**{max(counts)} × {name}** make {_a(threat)} {threat} encounter for {party_label(size, level)}"
            + (f" ({lo} to {max(counts)} do: each is {each} XP, and {threat} is up to {budget[threat]} XP)"
               if lo != max(counts) else f" (each is {each} XP, and {threat} is up to {budget[threat]} XP)") + ".")
    step = TraceStep(name="count_creatures", status="ok", input={"name": node.name, "threat": threat},
                     output={"count": max(counts)})
    return Answer(text=note + head + "\n\n" + report_markdown(report), outcome="answered",
                  citations=report_citations(report), steps=[step], question=question, backend="creators")


def _counts(each: int, threat: str, budget: dict[str, int]) -> list[int]:
    """How many creatures of ``each`` XP make the ``threat`` encounter: within its budget and rated that threat."""
    return [n for n in range(1, 41) if n * each <= budget[threat] and tables.threat_for_xp(n * each, budget) == threat]


def _no_number(name: str, threat: str, size: int, level: int, each: int, budget: dict[str, int]) -> str:
    return (f"No number of {name} makes {_a(threat)} {threat} encounter for {party_label(size, level)}: each is worth "
            f"{each} XP against budgets of {budget_line_of(budget)} XP (GM Core, Encounter Budget).")


_THEM = re.compile(r"(?:of\s+)?(?:them|those|these|it|they|that|this)(?:\s+ones?)?", re.I)


def _counted_build(question: str, earlier: Sequence[str], threat: str, size: int, level: int) -> Answer | None:
    """"How many of them make a moderate encounter for 4 level 3 PCs?" after the chat built a creature: the most of it
    (at its level) whose XP is that threat for the party (GM Core's Creature XP and Encounter Budget)."""
    from gmprep.core.answer import Answer
    from gmprep.core.creators.revise import last_creature
    from gmprep.core.traces import TraceStep

    build = last_creature(earlier)
    if build is None or build.creature is None:
        return None
    req = build.creature
    name = f"{(req.name or req.concept or 'creature').title()} (level {req.level}, built above)"
    each = tables.creature_xp(req.level, level)
    budget = tables.encounter_budget(size)
    counts = _counts(each, threat, budget)
    cites = [_citation(tables.xp_citation()), _citation(tables.budget_citation())]
    step = TraceStep(name="count_creatures", status="ok", input={"built": build.earlier, "threat": threat},
                     output={"count": max(counts) if counts else 0})
    if each == 0 or not counts:
        text = _no_number(name, threat, size, level, each, budget)
    else:
        lo, hi = min(counts), max(counts)
        text = (f"**{hi} × {name}** make {_a(threat)} {threat} encounter for {party_label(size, level)} "
                + (f"({lo} to {hi} do: " if lo != hi else "(")
                + f"each is {each} XP, a level {req.level} creature against party level {level}, and {threat} is up to "
                f"{budget[threat]} XP; GM Core, Creature XP and Encounter Budget).")
    return Answer(text=text, outcome="answered", citations=cites, steps=[step], question=question, backend="creators")


def _rated_encounter(question: str, resolver_factory) -> EncounterReport | None:
    """The encounter ``question`` asks to rate ("How hard is this encounter for 4 level 3 PCs: 2 goblin warriors and an
    ogre warrior?"), evaluated as a note's block is; None unless it states a party and a list whose every creature is
    a Monster Core entry or has its level written (a rules question naming one creature is no list)."""
    candidates = encounter_check_candidates(question)
    if not candidates:
        return None
    from gmprep.core.creators.encounter import evaluate_encounter

    resolver = resolver_factory()
    for spec in candidates:
        report = evaluate_encounter(spec, resolver)
        if report.creatures and not report.unknown and len(report.creatures) == len(spec.lines):
            return report
    return None


def _unique(cites: list[Citation]) -> list[Citation]:
    """The citations in order, each source once (its first citation kept)."""
    first: dict[str, Citation] = {}
    for c in cites:
        first.setdefault(c.source_id, c)
    return list(first.values())
