"""Hovers on notes as GMs write them, through a real client (pytest-lsp) over stdio: HTML blocks,
parts of proper names, inflected actions, "did you mean", and the user's controls (ignore comments,
the workspace word list and the code action that fills it). No store is needed: names come from
the bundled corpus."""

from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import CAPS, SERVER_CMD, call, make_client, open_doc, position_of
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

NOTE = """---
title: Session 9
tags: [trip, frightened]
---
# Session 9 -- the Everlight cellar

<div class="statblock">
<div>Trip</div><span>frightened 2</span>
</div>

We met the Hands of the Everlight; their leader is frightened 2.
The ranger Hunted Prey, then the goblin trips and stood up.
Aldo Tripped the guard. An elven archer waits.
Tovan uses Trip on the ogre.

<!-- gmprep-ignore-next-line -->
Demoralize is silenced here.
Demoralize is hovered here.

Commander Vex has Shield Block and can Raise a Shield.

<!-- gmprep-ignore -->
Tovan uses Shove inside the ignored block.

Aldo uses Shove again, still ignored.
<!-- gmprep-ignore-end -->
Mirelle uses Shove after the block.
"""


# Forms GMs write that are no entry's name: initials, a statistic's value, a roll before a skill,
# compounds written open, hyphenated or closed (kg/names.py derives each from the names themselves).
FORMS_NOTE = """# Round 2

- Veris uses RK on the ooze, then LoH on Ducim.
- The ooze has resist 10 to acid and weakness 5 to fire.
- Jack rolled 38 perception to spot it.
- Loot: a +1 composite short bow, two short-bows and a suit of chainmail.
- Ducim failed his save against zombie rot; 4 suits of studded leather and two Potions of Shared Memories.

The guards were rats in a cage; his dad knows a lot of lore, and the rk typo stays.

> House rule: the player should call “I want to Recall
> Knowledge to learn about” the ooze, whose build
> has +fireball in it.
"""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("notes-ws")
    (root / "session-09.md").write_text(NOTE, encoding="utf-8")
    (root / "round-2.md").write_text(FORMS_NOTE, encoding="utf-8")
    return root


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[*SERVER_CMD, "--no-build"], client_factory=make_client), scope="module"
)
async def client(lsp_client: LanguageClient, workspace: Path):
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=CAPS, root_uri=workspace.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=workspace.as_uri(), name="notes")],
            initialization_options={"storeDir": str(workspace / ".no-store")},
        )
    )
    for _ in range(600):
        if (await call(lsp_client, "gmprep/status"))["namesReady"]:
            break
        await asyncio.sleep(0.1)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
def note(client: LanguageClient, workspace: Path) -> str:
    return open_doc(client, workspace / "session-09.md")


async def _hover(client, uri, needle, nth=0, shift=1, text=NOTE):
    pos = position_of(text, needle, nth)
    pos = lsp.Position(line=pos.line, character=pos.character + shift)
    return await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=pos)
    )


def _id(h) -> str | None:
    if h is None:
        return None
    import re

    m = re.search(r"`([a-z0-9]+:[a-z0-9-]+:[^`\s]+)`", h.contents.value)
    return m.group(1) if m else None


async def test_html_blocks_and_front_matter_get_no_hovers(client, note):
    assert await _hover(client, note, "div", nth=0) is None
    assert await _hover(client, note, "Trip</div>") is None
    assert await _hover(client, note, "frightened 2</span>") is None
    assert await _hover(client, note, "trip, frightened") is None
    assert await _hover(client, note, "frightened]") is None
    # the same words in prose are hovered, with the exact range
    h = await _hover(client, note, "frightened 2.")
    assert _id(h) == "pf2e:condition:frightened"
    start = position_of(NOTE, "frightened 2.")
    assert (h.range.start.line, h.range.start.character, h.range.end.character) == (
        start.line, start.character, start.character + len("frightened 2"),
    )


async def test_parts_of_proper_names_get_no_hovers(client, note):
    assert await _hover(client, note, "Everlight;") is None
    assert await _hover(client, note, "Commander") is None


async def test_inflected_actions_and_adjectives(client, note):
    assert _id(await _hover(client, note, "Hunted Prey")) == "pf2e:action:hunt-prey"
    assert _id(await _hover(client, note, "Tripped")) == "pf2e:action:trip"
    assert _id(await _hover(client, note, "trips")) == "pf2e:action:trip"
    # "stood up" is matched as Stand (tests/kg/test_note_scan.py); the scorer is unsure of it, so only
    # strictness "loose" shows it (test_strictness_setting)


async def test_forms_that_are_no_name(client, workspace):
    uri = open_doc(client, workspace / "round-2.md")

    async def hover_id(needle: str) -> str | None:
        return _id(await _hover(client, uri, needle, text=FORMS_NOTE))

    assert await hover_id("RK on") == "pf2e:action:recall-knowledge"
    assert await hover_id("LoH on") == "pf2e:spell:lay-on-hands"
    h = await _hover(client, uri, "resist 10", text=FORMS_NOTE)
    assert _id(h) == "pf2e:rule:player-core--resistance"
    start = position_of(FORMS_NOTE, "resist 10")
    assert (h.range.start.character, h.range.end.character) == (start.character, start.character + len("resist 10"))
    assert await hover_id("weakness 5") == "pf2e:rule:player-core--weakness"
    assert await hover_id("perception to") == "pf2e:skill:perception"
    assert await hover_id("short bow,") == "pf2e:equipment:composite-shortbow"
    assert await hover_id("short-bows") == "pf2e:equipment:shortbow"
    assert await hover_id("chainmail") == "pf2e:equipment:chain-mail"
    # a creature's ability named for it, an armor without "armor", an item's plural head before "of"
    assert await hover_id("zombie rot") == "pf2e:creature:plague-zombie"
    assert await hover_id("studded leather") == "pf2e:equipment:studded-leather-armor"
    assert await hover_id("Potions of") == "pf2e:equipment:potion-of-shared-memories"
    # no sign, no hover: function words are no half of a compound, initials need capitals, a
    # lowercase skill needs a roll, a DC or a skill word
    for needle in ("were rats", "rats in", "dad", "lore,", "rk typo"):
        assert await _hover(client, uri, needle, text=FORMS_NOTE) is None, needle


async def test_a_name_across_the_lines_of_a_quote_is_hovered_on_both(client, workspace):
    uri = open_doc(client, workspace / "round-2.md")
    first = await _hover(client, uri, "Recall\n", text=FORMS_NOTE)
    second = await _hover(client, uri, "Knowledge to", text=FORMS_NOTE)
    assert _id(first) == _id(second) == "pf2e:action:recall-knowledge"
    start, end = position_of(FORMS_NOTE, "Recall\n"), position_of(FORMS_NOTE, "Knowledge to")
    assert (second.range.start.line, second.range.start.character) == (start.line, start.character)
    assert (second.range.end.line, second.range.end.character) == (end.line, end.character + len("Knowledge"))
    # a "+" before a word is no part of it
    assert _id(await _hover(client, uri, "fireball in it", text=FORMS_NOTE)) == "pf2e:spell:fireball"


async def test_ambiguous_name_shows_did_you_mean(client, note):
    h = await _hover(client, note, "Trip on the ogre")
    assert _id(h) == "pf2e:action:trip"
    assert "**Did you mean** " in h.contents.value and "Trip (trait" in h.contents.value


async def test_ignore_block_comments(client, note):
    assert await _hover(client, note, "Shove inside") is None
    assert await _hover(client, note, "Shove again") is None
    assert _id(await _hover(client, note, "Shove after")) == "pf2e:action:shove"


async def test_ignore_next_line_comment(client, note):
    assert await _hover(client, note, "Demoralize is silenced") is None
    assert _id(await _hover(client, note, "Demoralize is hovered")) == "pf2e:action:demoralize"


async def test_dont_hover_code_action_writes_the_workspace_list(client, note, workspace):
    pos = position_of(NOTE, "Shield Block")
    rng = lsp.Range(start=pos, end=pos)
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=note), range=rng, context=lsp.CodeActionContext(diagnostics=[])
        )
    )
    ignore = next(a for a in actions if a.title.startswith("Don't hover"))
    assert isinstance(ignore, lsp.Command)
    assert ignore.title == "Don't hover 'Shield Block' in this workspace"
    await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command=ignore.command, arguments=ignore.arguments)
    )
    data = tomllib.loads((workspace / "gmprep.toml").read_text(encoding="utf-8"))
    assert data["hover"]["ignore_words"] == ["Shield Block"]
    assert await _hover(client, note, "Shield Block") is None
    # other names still hover
    assert _id(await _hover(client, note, "Demoralize is hovered")) == "pf2e:action:demoralize"


async def _strictness(client, value: str) -> None:
    client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"gmprep": {"hover": {"strictness": value}}})
    )
    await call(client, "gmprep/status")  # the notification is handled before this request's answer


def _between_loose_and_normal() -> list[tuple[str, int, str]]:
    """The note's candidates the shipped model puts between "loose" and "normal" (the rules of thumb do not
    rescue them): which ones depends on the calibration, so they are read from it here."""
    from gmprep.ingest.corpus import load_corpus
    from gmprep.kg.mention_scorer import MentionScorer
    from gmprep.kg.names import NameIndex
    from gmprep.kg.note_scan import NoteScanner, staged

    scorer = MentionScorer.load()
    cands = NoteScanner(NameIndex.build([n for n in load_corpus().nodes if n.kind == "entry"]),
                        scorer=scorer).candidates(NOTE)
    confs = staged(scorer.note_stage, cands, scorer.note_weights)
    lo, hi = scorer.threshold_for("loose"), scorer.threshold_for("normal")
    out = [(NOTE[c.start:c.end], NOTE.count(NOTE[c.start:c.end], 0, c.start), c.mention.node_id)
           for c, conf in zip(cands, confs, strict=True)
           if lo <= conf < hi and not (c.heuristic and conf >= scorer.thresholds.get("rescue", lo))
           and c.mention.value is None and c.mention.form != "legacy"]
    assert out, "the note holds no candidate between the loose and normal thresholds"
    return out


async def test_strictness_setting(client, note):
    try:
        await _strictness(client, "strict")  # only what the scorer is sure of: no rules-of-thumb rescue
        assert await _hover(client, note, "stood up") is None
        assert _id(await _hover(client, note, "Hunted Prey")) == "pf2e:action:hunt-prey"
        await _strictness(client, "loose")  # what the scorer is unsure of shows too
        for text, nth, node_id in _between_loose_and_normal():
            assert _id(await _hover(client, note, text, nth)) == node_id
    finally:
        await _strictness(client, "normal")
    # "normal" is chosen for precision on real notes (docs/mention-scorer.md): the unsure ones stay hidden
    assert await _hover(client, note, "stood up") is None
    for text, nth, _ in _between_loose_and_normal():
        assert await _hover(client, note, text, nth) is None
    assert _id(await _hover(client, note, "Hunted Prey")) == "pf2e:action:hunt-prey"


ENCOUNTER = ("## Encounter\n\n- 3 zombies (creature 1), weak to fire\n\nThe zombie trait: mindless undead.\n\n"
             "The zombies shambled toward us from the crypt and we ran back to town.\n")
NARRATION = "We walked to the crypt. The zombies shambled toward us from the crypt and we ran back to town.\n"


async def test_a_confident_mention_of_the_entry_lifts_its_narration(client, workspace):
    """One sense per discourse (kg/note_evidence.py): the narration's lowercase "zombies" hovers where the
    note names the zombie trait outright, and not in a note where it stands alone."""
    from gmprep.kg.mention_scorer import MentionScorer

    stage = MentionScorer.load().note_stage
    if stage is None or "entry_gap" not in stage.evidence:
        pytest.skip("the shipped model's note stage does not read the entry evidence")
    enc = open_doc(client, workspace / "encounter.md", ENCOUNTER)
    alone = open_doc(client, workspace / "narration.md", NARRATION)
    assert _id(await _hover(client, enc, "zombies shambled", text=ENCOUNTER)) == "pf2e:trait:zombie"
    assert await _hover(client, alone, "zombies shambled", text=NARRATION) is None


SHORTHAND = "## Round 1\n\nveris strat bandit 2: 20 would hit. shared strat to elphira.\n"


async def test_workspace_aliases_hover_a_gms_shorthand(client, workspace):
    doc = open_doc(client, workspace / "shorthand.md", SHORTHAND)
    assert await _hover(client, doc, "strat bandit", text=SHORTHAND) is None
    aliases = {"strat": "Devise a Stratagem", "shared strat": "Shared Stratagem"}
    try:
        client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"gmprep": {"hover": {"aliases": aliases}}})
        )
        await call(client, "gmprep/status")
        assert _id(await _hover(client, doc, "strat bandit", text=SHORTHAND)) == "pf2e:action:devise-a-stratagem"
        assert _id(await _hover(client, doc, "shared strat", text=SHORTHAND)) == "pf2e:feat:shared-stratagem"
    finally:
        client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"gmprep": {"hover": {"aliases": {}}}})
        )
        await call(client, "gmprep/status")
    assert await _hover(client, doc, "strat bandit", text=SHORTHAND) is None


OTHER_BOOKS = ("## Party\n\n- Sierra (Marshal): Defiant Banner, Gather to Me\n- Loot: two Tracking Tags\n\n"
               "Sierra raised her Defiant Banner and the guards fell back.\n")


async def _other_books(client, on: bool) -> None:
    client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"gmprep": {"hover": {"other_books": on}}})
    )
    await call(client, "gmprep/status")


async def test_names_of_books_gmprep_does_not_hold_say_which_book(client, workspace):
    """``hover.other_books``: a name only another book prints hovers a card naming that book and saying there is no
    text to show; off (the default), nothing hovers there. The name index is loaded again when the setting
    changes, so the card comes once that load is done."""
    doc = open_doc(client, workspace / "other-books.md", OTHER_BOOKS)
    assert await _hover(client, doc, "Defiant Banner", text=OTHER_BOOKS) is None
    try:
        await _other_books(client, True)
        card = None
        for _ in range(300):  # the reload takes a few seconds
            card = await _hover(client, doc, "Defiant Banner", text=OTHER_BOOKS)
            if card is not None:
                break
            await asyncio.sleep(0.1)
        assert card is not None
        text = card.contents.value
        assert "Defiant Banner" in text and "Battlecry!" in text and "no rule text" in text
        assert "`other:defiant-banner`" in text
        plural = await _hover(client, doc, "Tracking Tags", text=OTHER_BOOKS)
        assert plural is not None and "Howl of the Wild" in plural.contents.value
    finally:
        await _other_books(client, False)
    for _ in range(300):
        if await _hover(client, doc, "Defiant Banner", text=OTHER_BOOKS) is None:
            break
        await asyncio.sleep(0.1)
    assert await _hover(client, doc, "Defiant Banner", text=OTHER_BOOKS) is None
