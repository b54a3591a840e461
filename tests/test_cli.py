"""The CLI: --store before or after the subcommand; clear errors without tracebacks."""

import pytest

from gmprep.cli import build_parser, main


def test_store_option_anywhere():
    parser = build_parser()
    assert parser.parse_args(["--store", "/a", "index", "build"]).store == "/a"
    assert parser.parse_args(["index", "build", "--store", "/b"]).store == "/b"
    assert parser.parse_args(["index", "build"]).store is None


def test_missing_store_is_a_clear_error(tmp_path, capsys):
    assert main(["index", "status", "--store", str(tmp_path / "nowhere")]) == 1
    err = capsys.readouterr().err
    assert "no index" in err and "gmprep index build" in err and "Traceback" not in err


@pytest.mark.parametrize(("question", "said"), [("   ", "the question is empty"),
                                                ("Flanking? " * 1000, "the question is 10,000 characters")])
def test_a_blank_or_pasted_page_question_is_one_line_before_anything_loads(tmp_path, capsys, question, said):
    # refused before the store opens (the store here does not exist) and before anything is saved
    assert main(["ask", question, "--store", str(tmp_path / "nowhere")]) == 1
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and "Traceback" not in err


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "usage" in capsys.readouterr().out


@pytest.mark.parametrize("notes", ["does-not-exist"])
def test_index_build_rejects_missing_notes_folder(tmp_path, capsys, notes):
    assert main(["index", "build", "--store", str(tmp_path / "s"), "--notes", str(tmp_path / notes)]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_a_defect_is_one_line_not_a_traceback(monkeypatch, capsys):
    import gmprep.commands.creators as creators

    # a defect of ours (here: a command that raises) reaches the user as one line; -v shows the traceback
    def broken(args):
        raise AttributeError("'NoneType' object has no attribute 'name'")

    monkeypatch.setattr(creators, "run_encounter", broken)
    assert main(["encounter", "--party", "4", "--level", "3", "2 wolves"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("gmprep: internal error: AttributeError: 'NoneType' object has no attribute 'name'")
    with pytest.raises(AttributeError):
        main(["-v", "encounter", "--party", "4", "--level", "3", "2 wolves"])
