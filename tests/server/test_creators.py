"""The GM creators through the real language server (pytest-lsp over stdio): encounter blocks' inlay
hints, code lens, hover and diagnostics; the build-encounter and insert-statblock actions; statblock
checks with their quick fix; and the chat routing a build request to the deterministic builder.

Expected XP values are GM Core's (Encounter Budget, p. 75: a creature 4 levels below the party is
worth 10 XP, 2 below 20, 1 below 30, the party's level 40, 2 above 80; for 4 characters moderate is
80 XP and severe 120), and Monster Core's elite adjustment (+1 level)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import call, open_doc, position_of
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

NOTE = """# Session 5 -- The Reed Maze

Party: 4 PCs, level 3.

## Encounter (4 PCs, level 3)

- 2 goblin warriors
- goblin war chanter
- elite wolf

Encounter (4 PCs, level 3): 2 goblin warriors, goblin war chanter, elite wolf

```encounter
3 zombie shamblers
goblin warior
```

```encounter
party: 4 PCs, level 1
2 cave bears
```

moderate encounter for 4 level-3 PCs, undead, in a swamp

level 4 brute: a bog troll

## Encounter at the toll bridge (4 PCs, level 3)

- 2 bandits (level 2)
- bandit captain (creature 4, NPC Core)
"""

STATBLOCK = """# Villains

## Bog Hag

**Creature 3** (uncommon, medium, humanoid)

**Perception** +9

**AC** 25; **Fort** +9, **Ref** +7, **Will** +11

**HP** 45
"""


def _ident(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


def _whole(text: str) -> lsp.Range:
    return lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=text.count("\n") + 1, character=0))


def _label(h: lsp.InlayHint) -> str:
    return h.label if isinstance(h.label, str) else "".join(p.value for p in h.label)


async def _hints(client: LanguageClient, uri: str, text: str) -> dict[int, list[str]]:
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(text_document=_ident(uri), range=_whole(text)))
    out: dict[int, list[str]] = {}
    for h in hints or []:
        out.setdefault(h.position.line, []).append(_label(h).strip())
    return out


async def _diagnostics(client: LanguageClient, uri: str, code: str) -> list[lsp.Diagnostic]:
    for _ in range(100):
        found = [d for d in client.diagnostics.get(uri, []) if d.code == code]
        if found:
            return found
        await asyncio.sleep(0.1)
    return []


def _line(text: str, needle: str) -> int:
    return position_of(text, needle).line


async def _actions(client: LanguageClient, uri: str, line: int, title: str) -> list[lsp.CodeAction]:
    """The code actions at ``line`` (no diagnostics given) whose title starts with ``title``."""
    rng = lsp.Range(start=lsp.Position(line=line, character=4), end=lsp.Position(line=line, character=4))
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=_ident(uri), range=rng, context=lsp.CodeActionContext(diagnostics=[])))
    return [a for a in actions or [] if isinstance(a, lsp.CodeAction) and a.title.startswith(title)]


@pytest.fixture(scope="module")
def note(client: LanguageClient, workspace: Path) -> str:
    return open_doc(client, workspace / "session-05.md", NOTE)


async def test_inlay_hints_give_xp_per_creature_and_total_threat(client, note):
    hints = await _hints(client, note, NOTE)
    heading = _line(NOTE, "## Encounter")
    assert hints[heading] == ["70 XP · moderate (4 PCs, level 3)"]
    assert hints[_line(NOTE, "- 2 goblin warriors")] == ["2 × 10 = 20 XP (level -1)"]
    assert hints[_line(NOTE, "- goblin war chanter")] == ["20 XP (level 1)"]
    assert hints[_line(NOTE, "- elite wolf")] == ["30 XP (elite, level 2)"]
    # the one-line form: the total at the end of the line and one hint after each creature on it
    one = _line(NOTE, "Encounter (4 PCs, level 3): 2 goblin")
    assert sorted(hints[one]) == sorted(["70 XP · moderate (4 PCs, level 3)", "2 × 10 = 20 XP (level -1)",
                                         "20 XP (level 1)", "30 XP (elite, level 2)"])
    # a fenced block without a party line takes the note's "Party:" line: 3 zombie shamblers (level -1)
    fence = _line(NOTE, "```encounter")
    assert hints[fence] == ["30 XP · trivial (4 PCs, level 3)"]
    assert hints[_line(NOTE, "3 zombie shamblers")] == ["3 × 10 = 30 XP (level -1)"]
    # hints are only given for the requested range
    only = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        text_document=_ident(note), range=lsp.Range(start=lsp.Position(line=fence, character=0),
                                                     end=lsp.Position(line=fence + 3, character=0))))
    assert {h.position.line for h in only} == {fence, fence + 1}


async def test_code_lens_shows_total_threat_and_budget(client, note):
    lenses = await client.text_document_code_lens_async(lsp.CodeLensParams(text_document=_ident(note)))
    titles = {lens.range.start.line: lens.command.title for lens in lenses}
    heading = _line(NOTE, "## Encounter")
    assert titles[heading].startswith("Encounter: 70 XP · moderate (4 PCs, level 3)")
    assert "moderate 80" in titles[heading] and "severe 120" in titles[heading]


async def test_hover_on_block_explains_the_arithmetic_with_citations(client, note):
    pos = position_of(NOTE, "## Encounter")
    h = await client.text_document_hover_async(lsp.HoverParams(text_document=_ident(note), position=pos))
    assert h is not None
    md = h.contents.value
    assert "### Encounter: 70 XP, moderate" in md
    assert "| Goblin Warrior | -1 | 10 | 2 | 20 |" in md
    assert "| elite Wolf | 2 (+1 base) | 30 | 1 | 30 |" in md
    assert "**moderate 80**" in md
    assert "GM Core" in md and "p. 75" in md  # the Encounter Budget rule, cited
    assert "Monster Core" in md  # the creatures' and the elite adjustment's book
    # a rule name inside the block still gets its rule card
    w = await client.text_document_hover_async(lsp.HoverParams(
        text_document=_ident(note), position=position_of(NOTE, "goblin war chanter", 0)))
    assert "`pf2e:creature:goblin-war-chanter`" in w.contents.value


async def test_unknown_creature_diagnostic_suggests_and_quick_fix_replaces(client, note):
    diags = await _diagnostics(client, note, "encounter-unknown-creature")
    assert len(diags) == 1
    d = diags[0]
    assert "goblin warior" in d.message and "did you mean" in d.message and "Goblin Warrior" in d.message
    assert 'write its level: "goblin warior (level N)"' in d.message
    start = position_of(NOTE, "goblin warior")
    assert (d.range.start.line, d.range.start.character) == (start.line, start.character)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=_ident(note), range=d.range, context=lsp.CodeActionContext(diagnostics=[d])))
    fixes = [a for a in actions if isinstance(a, lsp.CodeAction) and a.kind == lsp.CodeActionKind.QuickFix]
    assert fixes and fixes[0].title == 'Did you mean "Goblin Warrior"?'
    (edit,) = fixes[0].edit.changes[note]
    assert edit.new_text == "Goblin Warrior" and edit.range == d.range


async def test_a_creature_from_another_book_counts_at_the_level_written(client, note):
    # bandits are in no book gmprep holds: the GM writes their level and the block is counted, with no unknown-creature
    # diagnostic (before, both lines were "not a Monster Core creature" and the block had no total)
    hints = await _hints(client, note, NOTE)
    assert hints[_line(NOTE, "## Encounter at the toll bridge")] == ["120 XP · severe (4 PCs, level 3)"]
    assert hints[_line(NOTE, "- 2 bandits (level 2)")] == ["2 × 30 = 60 XP (level 2)"]
    assert hints[_line(NOTE, "- bandit captain")] == ["60 XP (level 4)"]
    unknown = await _diagnostics(client, note, "encounter-unknown-creature")
    assert not [d for d in unknown if "bandit" in d.message]
    h = await client.text_document_hover_async(lsp.HoverParams(
        text_document=_ident(note), position=position_of(NOTE, "## Encounter at the toll bridge")))
    assert h is not None and "| bandits (level as written) | 2 | 30 | 2 | 60 |" in h.contents.value
    assert "as written: not a Monster Core creature" in h.contents.value


async def test_a_creature_with_its_level_written_offers_its_statblock(client, note):
    # the people the encounter builder writes ("1 bandit boss (level 5)") have no entry: on their line the action builds
    # their statblock, inserted below the block
    line = _line(NOTE, "- bandit captain (creature 4")
    inserts = await _actions(client, note, line, "Insert creature statblock")
    # titled with the role it is built as: the Bandit background's skirmisher
    assert [a.title for a in inserts] == ["Insert creature statblock: level 4 skirmisher (bandit captain)"]
    (edit,) = inserts[0].edit.changes[note]
    assert "**Creature 4**" in edit.new_text and "Bandit" in edit.new_text
    assert edit.range.start.line == line + 1  # the block's last line is the captain's
    # a Monster Core creature's line offers nothing of the kind
    assert not await _actions(client, note, _line(NOTE, "- goblin war chanter"), "Insert creature")


async def test_a_creature_the_note_stats_itself_is_counted_at_its_level(client, workspace):
    # the GM's own Bog Hag (Creature 3, statted in the note) in the note's encounter: counted at its statblock's level
    # (before: "not a Monster Core creature" and no total)
    text = STATBLOCK + "\n## Encounter in the fen (4 PCs, level 3)\n\n- 2 bog hags\n- goblin war chanter\n"
    uri = open_doc(client, workspace / "fen.md", text)
    hints = await _hints(client, uri, text)
    assert hints[_line(text, "## Encounter in the fen")] == ["100 XP · severe (4 PCs, level 3)"]
    assert hints[_line(text, "- 2 bog hags")] == ["2 × 40 = 80 XP (level 3)"]
    await asyncio.sleep(0.5)
    assert not [d for d in client.diagnostics.get(uri, []) if d.code == "encounter-unknown-creature"]


async def test_build_encounter_action_for_people_monster_core_lacks(client, workspace):
    # pirates: no Monster Core creature is close, so the options are GM Core's quick groups of pirates to build, each
    # line with its level (before: three budget-fitting monsters, none of them pirates)
    text = "# Boarding\n\nsevere encounter for 4 level-3 PCs, pirates\n"
    uri = open_doc(client, workspace / "boarding.md", text)
    builds = await _actions(client, uri, 2, "Build encounter")
    assert builds and "Boss and Lackeys" in builds[0].title and "pirate boss (level 5)" in builds[0].title
    (edit,) = builds[0].edit.changes[uri]
    assert "- 1 pirate boss (level 5)\n- 4 pirate lackeys (level -1)" in edit.new_text


async def test_warning_for_a_creature_far_above_the_party(client, note):
    diags = await _diagnostics(client, note, "encounter-warning")
    bear = [d for d in diags if "Cave Bear" in d.message]
    assert bear and "more than 4 levels above" in bear[0].message
    assert any("above the extreme budget" in d.message for d in diags)
    # an unknown creature is reported once, on its name (not again as a warning on the block)
    assert not [d for d in diags if "goblin warior" in d.message]


async def test_build_encounter_action_inserts_a_block_that_evaluates_to_the_threat(client, note, workspace):
    line = _line(NOTE, "moderate encounter for 4 level-3 PCs")
    builds = await _actions(client, note, line, "Build encounter")
    assert 1 <= len(builds) <= 3
    assert all("moderate" in a.title for a in builds)
    (edit,) = builds[0].edit.changes[note]
    assert edit.range.start.line == line + 1
    assert edit.new_text.lstrip("\n").startswith("```encounter\nparty: 4 PCs, level 3\n")
    # the inserted block, opened in a note, evaluates to a moderate encounter for that party
    text = "# Swamp\n\n" + edit.new_text.strip("\n") + "\n"
    uri = open_doc(client, workspace / "built.md", text)
    hints = await _hints(client, uri, text)
    assert hints[2][0].endswith("· moderate (4 PCs, level 3)")
    # undead were asked for: the first option's creatures are undead
    first = builds[0].title.split(": ", 1)[1]
    assert any(w in first.lower() for w in ("zombie", "skeleton", "ghoul", "ghost", "wight", "mummy", "wraith", "vampire"))


async def test_build_encounter_from_the_first_line_of_a_block(client, note):
    line = _line(NOTE, "## Encounter")
    builds = await _actions(client, note, line, "Build another encounter")
    assert builds and "moderate" in builds[0].title
    (edit,) = builds[0].edit.changes[note]
    assert "party: 4 PCs, level 3" in edit.new_text


async def test_chat_build_request_is_answered_by_the_builder(client, note):
    question = "build a moderate encounter for 4 level 3 PCs with undead"
    result = await call(client, "gmprep/ask", {"question": question, "uri": note})
    answer = result["answer"]
    assert answer["outcome"] == "answered"
    assert "```encounter" in answer["text"] and "party: 4 PCs, level 3" in answer["text"]
    assert "Option 1" in answer["text"]
    books = {c["book"] for c in answer["citations"]}
    assert {c["type"] for c in answer["citations"]} >= {"rule", "creature"}
    assert any("GM Core" in (b or "") for b in books) and any("Monster Core" in (b or "") for b in books)
    # a rules question about encounters still goes to rules retrieval
    rules = await call(client, "gmprep/ask", {"question": "What is the XP budget of a moderate encounter?", "uri": note})
    assert "```encounter" not in rules["answer"]["text"]


async def test_the_chat_edits_the_last_build_of_its_conversation(client, note):
    # the prep file's saved conversation carries the build: "make it a level 7 instead" edits it (it built a level 7
    # soldier titled "It Instead"), and the edit is saved in the conversation like any answer
    first = await call(client, "gmprep/ask", {"question": "make a level 5 bandit captain", "uri": note})
    conv = first["conversationId"]
    assert "**Creature 5**" in first["answer"]["text"]
    edited = await call(client, "gmprep/ask", {"question": "make it a level 7 instead", "uri": note,
                                               "conversationId": conv})
    text = edited["answer"]["text"]
    assert text.startswith("_Read as the request above (“make a level 5 bandit captain”) with level 7._"), text[:160]
    assert "### Bandit Captain" in text and "**Creature 7**" in text and "It Instead" not in text
    full = await call(client, "gmprep/conversation", {"id": conv})
    assert full["conversation"]["messageCount"] == 4
    # a new conversation has no build to edit, and says so
    alone = await call(client, "gmprep/ask", {"question": "make it severe", "uri": note})
    assert alone["answer"]["outcome"] == "partial" and "nothing asked above" in alone["answer"]["text"]


async def test_insert_statblock_action_writes_a_cited_statblock_that_checks_clean(client, note, workspace):
    line = _line(NOTE, "level 4 brute: a bog troll")
    inserts = await _actions(client, note, line, "Insert creature statblock")
    assert len(inserts) == 1 and inserts[0].title == "Insert creature statblock: level 4 brute (bog troll)"
    (edit,) = inserts[0].edit.changes[note]
    assert edit.range.start.line == line + 1
    md = edit.new_text
    assert "**Creature 4**" in md and "**AC**" in md and "**HP**" in md and "**Melee" in md
    assert "GM Core, p. 117" in md  # the AC table, cited
    assert "Monster Core" in md  # abilities suggested from real creatures, cited
    # the inserted statblock, in a note, gets no statblock diagnostics: every number is a table value
    text = "# Villains\n\n" + md.strip("\n") + "\n"
    uri = open_doc(client, workspace / "inserted.md", text)
    await asyncio.sleep(0.5)
    assert not [d for d in client.diagnostics.get(uri, []) if d.code == "statblock-number"]


async def test_the_editor_builds_the_statblock_the_cli_builds(client, workspace):
    # no role said: the editor reads the class and the background the concept names, as `gmprep creature` does
    text = "# NPCs\n\nCreate a level 6 court wizard\n\nCreate a level 2 goblin merchant\n"
    uri = open_doc(client, workspace / "npcs.md", text)
    built = {}
    for needle in ("court wizard", "goblin merchant"):
        line = _line(text, needle)
        (insert,) = await _actions(client, uri, line, "Insert creature statblock")
        built[needle] = insert.edit.changes[uri][0].new_text
    assert "built as a spellcaster <!-- the Wizard's build -->" in built["court wizard"]
    assert "**Arcane Prepared Spells**" in built["court wizard"]  # GM Core's road map for a wizard
    assert "- **Drain Bonded Item** (action;" in built["court wizard"]
    assert "built as a skill paragon <!-- the Merchant background's build -->" in built["goblin merchant"]
    assert "Diplomacy +" in built["goblin merchant"] and "Mercantile Lore +" in built["goblin merchant"]


async def test_the_editor_builds_a_hazard_and_a_scaled_creature_as_the_chat_does(client, workspace):
    # one owner (``core.creators.build``): a hazard word builds a hazard, a Monster Core creature named whole is itself
    text = "# Vault\n\nMake a level 3 trap\n\nScale the ogre warrior to level 6\n"
    uri = open_doc(client, workspace / "vault.md", text)
    (hazard,) = await _actions(client, uri, _line(text, "level 3 trap"), "Insert hazard")
    assert hazard.title == "Insert hazard: level 3 (trap)"
    assert "**Stealth** DC 20 (trained)" in hazard.edit.changes[uri][0].new_text
    (ogre,) = await _actions(client, uri, _line(text, "ogre warrior"), "Insert creature statblock")
    assert ogre.title == "Insert creature statblock: ogre warrior at level 6"
    assert "**Creature 6** (common, large, giant, humanoid)" in ogre.edit.changes[uri][0].new_text


async def test_an_elite_creature_in_a_block_offers_its_adjusted_statblock(client, note):
    # Monster Core's elite adjustments on the Wolf's own stat block (level 1 -> 2), inserted below the block
    (insert,) = await _actions(client, note, _line(NOTE, "- elite wolf"), "Insert creature statblock")
    assert insert.title == "Insert creature statblock: elite Wolf"
    new_text = insert.edit.changes[note][0].new_text
    assert "### Elite Wolf" in new_text and "**Creature 2** (common, medium, animal)" in new_text
    assert "Elite and Weak Adjustments (Pathfinder Monster Core, pp. 6-7)" in new_text


async def test_statblock_diagnostic_and_quick_fix(client, workspace):
    uri = open_doc(client, workspace / "villains.md", STATBLOCK)
    diags = await _diagnostics(client, uri, "statblock-number")
    assert len(diags) == 1
    d = diags[0]
    assert d.message.startswith("AC 25 is above extreme (22) for level 3; high is 19")
    assert d.message.count("GM Core, p. 117") == 1  # the table, cited once
    at = position_of(STATBLOCK, "25")
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (at.line, at.character, at.character + 2)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=_ident(uri), range=d.range, context=lsp.CodeActionContext(diagnostics=[d])))
    fixes = [a for a in actions if isinstance(a, lsp.CodeAction) and a.kind == lsp.CodeActionKind.QuickFix]
    assert len(fixes) == 1 and fixes[0].is_preferred
    (edit,) = fixes[0].edit.changes[uri]
    assert edit.range == d.range and edit.new_text == "22"
    # applied, the note checks clean
    fixed = STATBLOCK.replace("**AC** 25", "**AC** 22")
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=fixed)]))
    for _ in range(50):
        if not [x for x in client.diagnostics.get(uri, []) if x.code == "statblock-number"]:
            break
        await asyncio.sleep(0.1)
    assert not [x for x in client.diagnostics.get(uri, []) if x.code == "statblock-number"]


async def test_hints_on_a_document_that_is_not_open_are_a_one_line_error(client, note, workspace):
    from pygls.exceptions import JsonRpcException

    missing = (workspace / "never-opened.md").as_uri()
    with pytest.raises(JsonRpcException) as err:
        await client.text_document_inlay_hint_async(lsp.InlayHintParams(
            text_document=_ident(missing), range=_whole("x")))
    assert "is not open in the editor" in str(err.value) and "Traceback" not in str(err.value)
    # the server is still up
    assert (await _hints(client, note, NOTE))[_line(NOTE, "## Encounter")]


HAZARDS = """# Session 6 -- The Vault

## Encounter (4 PCs, level 3)

- 2 goblin warriors
- scythe blades
- wheel of misery
"""


async def test_a_hazard_in_an_encounter_counts_by_gm_cores_hazard_xp(client, workspace):
    # GM Core's Hazard Experience: a complex hazard's XP is a creature's of its level, a simple one's a fifth of it
    # (before, both lines were unknown creatures and the block had no total)
    uri = open_doc(client, workspace / "session-06.md", HAZARDS)
    hints = await _hints(client, uri, HAZARDS)
    assert hints[_line(HAZARDS, "- scythe blades")] == ["12 XP (simple hazard, level 4)"]
    assert hints[_line(HAZARDS, "- wheel of misery")] == ["120 XP (complex hazard, level 6)"]
    assert hints[_line(HAZARDS, "## Encounter (4 PCs, level 3)")] == ["152 XP · extreme (4 PCs, level 3)"]
    h = await client.text_document_hover_async(lsp.HoverParams(
        text_document=_ident(uri), position=position_of(HAZARDS, "## Encounter (4 PCs, level 3)")))
    assert h is not None and "| Scythe Blades (simple hazard) | 4 | 12 | 1 | 12 |" in h.contents.value
    assert "Hazard Experience" in h.contents.value
    await asyncio.sleep(0.5)
    assert not [d for d in client.diagnostics.get(uri, []) if d.code == "encounter-unknown-creature"]
