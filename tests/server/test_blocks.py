"""The encounter finder of the editor (server/blocks.py): the three encounter forms, the note's party
line, and the chunked parse giving exactly what parsing the whole
note at once gives (on generated notes with fences, comments, loose lists and headings)."""

from __future__ import annotations

import random

from gmprep.server.blocks import _chunks, _find_in, find_blocks
from gmprep.server.documents import DocumentMentions

NOTE = """# Session 5

Party: 4 PCs, level 3.

## Encounter (4 PCs, level 3)

Goblins in the reeds.

- 2 goblin warriors
- goblin war chanter

- elite wolf

Encounter (4 PCs, level 3): 2 goblin warriors, goblin war chanter, elite wolf

```encounter
party: 5 PCs, level 2
3 zombie shamblers
```

```markdown
## Encounter (1 PC, level 1)
- not a block: inside a code example
```

## Bog Hag

**Creature 3** (uncommon, medium, humanoid)

**AC** 25; **Fort** +9

### Tactics
She flees.

## Next
text
"""


def _blocks(text: str):
    return find_blocks(text, DocumentMentions("x", 1, text, []).line_starts)


def test_three_forms_and_the_party_line():
    nb = _blocks(NOTE)
    kinds = [(e.kind, e.first_line) for e in nb.encounters]
    assert kinds == [("heading", 4), ("line", 13), ("fence", 15)]
    heading = nb.encounters[0]
    # a paragraph between the heading and its list, and a loose list, are one block
    assert heading.text == "## Encounter (4 PCs, level 3)\n2 goblin warriors\ngoblin war chanter\nelite wolf"
    assert heading.item_lines == [4, 8, 9, 11]
    # every piece maps back onto the same characters of the note
    for e in nb.encounters:
        for t0, d0, n in e.pieces:
            assert e.text[t0 : t0 + n] == NOTE[d0 : d0 + n]
    assert nb.party_lines == [(2, "Party: 4 PCs, level 3.")]


def _random_note(rng: random.Random) -> str:
    parts = ["# Prep"]
    pieces = [
        "## Encounter ({n} PCs, level {l})\n\n- {n} goblin warriors\n- elite wolf",
        "## Encounter at the gate\n\nThey wait.\n\n- 2 zombie shamblers\n\n- ghoul stalker",
        "Encounter ({n} PCs, level {l}): 2 goblin warriors, wolf",
        "```encounter\nparty: {n} PCs, level {l}\n{n} kobold scouts\n```",
        "```\n## Encounter (1 PC, level 1)\n- inside a fence\n\nplain\n```",
        "<!--\n\n## Encounter (2 PCs, level 2)\n- in a comment\n-->",
        "Party: {n} PCs, level {l}.",
        "- a list item\n\n  indented continuation\n- another",
        "> a quote\n\n> Encounter (3 PCs, level 2): harpy",
        "Plain prose about the {n} roads.\nSecond line.",
        "### Ogre\n**Creature {l}** (large)\n\n**AC** 30",
        "    indented code with Encounter (1 PC, level 1): wolf",
    ]
    for _ in range(rng.randint(5, 25)):
        parts.append(rng.choice(pieces).format(n=rng.randint(1, 6), l=rng.randint(1, 9)))
    sep = rng.choice(["\n\n", "\n\n\n", "\n"])
    return sep.join(parts) + "\n"


def test_chunked_parse_equals_parsing_the_whole_note():
    rng = random.Random(7)
    for _ in range(200):
        text = _random_note(rng)
        starts = DocumentMentions("x", 1, text, []).line_starts
        whole = _find_in(text, starts)
        chunked = find_blocks(text, starts)
        assert [(e.kind, e.first_line, e.last_line, e.text, e.pieces, e.item_lines) for e in chunked.encounters] == [
            (e.kind, e.first_line, e.last_line, e.text, e.pieces, e.item_lines) for e in whole.blocks.encounters
        ], text
        assert chunked.party_lines == whole.blocks.party_lines, text
        assert len(_chunks(text, starts)) >= 1


def test_a_fence_being_typed_is_read_up_to_its_first_blank_line():
    text = "# Prep\n\n```encounter\nparty: 4 PCs, level 3\n2 goblin warriors\n\nSome prose.\n\n- a list\n"
    (block,) = _blocks(text).encounters
    assert block.kind == "fence" and block.text == "party: 4 PCs, level 3\n2 goblin warriors"
    assert (block.first_line, block.last_line) == (2, 4)
