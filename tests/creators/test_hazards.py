"""A hazard from GM Core's Building Hazards tables, read from the corpus's rules entries (``core/creators/hazards.py``),
through the builder, the chat and the CLI (real SQLite store)."""

from __future__ import annotations

from gmprep.cli import main


def test_a_hazard_request_is_every_word_a_hazard_word():
    from gmprep.core.creators.hazards import hazard_request

    assert hazard_request(3, "trap").model_dump() == {"level": 3, "kind": "trap", "complex": False, "magical": False,
                                                      "name": ""}
    assert hazard_request(5, "complex magical trap").model_dump() == {"level": 5, "kind": "trap", "complex": True,
                                                                      "magical": True, "name": ""}
    assert hazard_request(7, "haunt").kind == "haunt" and hazard_request(2, "environmental hazard").kind == "environmental"
    assert hazard_request(3, "trap master") is None and hazard_request(3, "kobold trapmaker") is None


def test_a_hazard_the_gm_names_is_that_hazard(resolver):
    from gmprep.core.creators.chat import creators_answer
    from gmprep.core.creators.hazards import hazard_request

    # a hazard word at the head names the thing a hazard, the words before it say which: its title ("Hazard
    # Collapsing Ceiling" was a level 5 soldier creature)
    req = hazard_request(3, "collapsing ceiling complex trap")
    assert req is not None and (req.kind, req.complex, req.name) == ("trap", True, "collapsing ceiling")
    assert hazard_request(5, "hazard collapsing ceiling").name == "collapsing ceiling"
    assert hazard_request(4, "weeping widow haunt").kind == "haunt"
    assert hazard_request(4, "trap-making kobold") is None and hazard_request(3, "trap master") is None
    answer = creators_answer("I need a hazard for a level 5 party, a collapsing ceiling", lambda: resolver)
    assert answer is not None and answer.text.startswith("### Collapsing Ceiling (level 5)\n\n**Hazard 5** (common, "
                                                         "mechanical, trap)"), answer.text[:120]


def test_a_simple_trap_takes_gm_cores_table_values(resolver):
    from gmprep.core.creators.hazards import build_hazard, hazard_request, render_hazard_markdown

    # level 3: Table 2–13 high 20, Table 2–14 moderate rank trained, Table 2–15 HAC 19, H Save +12, L Save +6,
    # Hardness 10–12, HP 42–46; Table 2–16 S. Atk +16, Simple Dmg 2d10+13, HDC 20, EDC 23
    md = render_hazard_markdown(build_hazard(hazard_request(3, "trap"), resolver.hazard_rules))
    assert "**Hazard 3** (common, mechanical, trap)" in md
    assert "**Stealth** DC 20 (trained)" in md and "**Disable** DC 20 Thievery (trained)" in md
    assert "**AC** 19; **Fort** +12, **Ref** +6; **Hardness** 10; **HP** 44 (BT 22)" in md
    assert "Strike +16, **Damage** 2d10+13 _type_, or a DC 20 save (DC 23 for an extreme one)" in md
    assert "Stealth and Disable (Pathfinder GM Core, p. 109)" in md


def test_a_complex_haunt_has_a_routine_and_no_defenses(resolver):
    from gmprep.core.creators.hazards import build_hazard, hazard_request

    haunt = build_hazard(hazard_request(7, "complex haunt"), resolver.hazard_rules)
    md = "\n".join(haunt.lines)
    assert "**Stealth** +17 (trained)" in md and "Religion" in md and "**AC**" not in md
    assert "**Routine**" in md and "Strike +18, **Damage** 2d10+9" in md
    assert "pf2e:rule:gm-core--defenses" not in {c.id for c in haunt.citations}


def test_the_chat_and_the_cli_build_a_trap(resolver, store_dir, capsys):
    from gmprep.core.creators.chat import creators_answer

    answer = creators_answer("Make a level 3 trap", lambda: resolver)
    assert answer is not None and answer.text.startswith("### Trap (level 3)") and answer.outcome == "answered"
    assert {c.source_id for c in answer.citations} >= {"pf2e:rule:gm-core--stealth-and-disable",
                                                       "pf2e:rule:gm-core--offense"}
    assert main(["--store", str(store_dir), "creature", "complex magical trap", "--level", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("### Complex Magical Trap (level 5)") and "dispel magic" in out
