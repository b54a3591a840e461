"""Settings keep their promises: the CLI reads the current folder's TOML through the server's
``load_settings`` (under the same workspace-trust policy), bad TOML is a one-line error, and every
setting is read by some code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from gmprep.cli import build_parser, main
from gmprep.commands import settings_from_args
from gmprep.common.settings import Settings, load_settings

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty current folder, no GMPREP_STORE, the user cache and config under tmp."""
    work = tmp_path / "campaign"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("GMPREP_STORE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return work


def _trust(folder: Path) -> None:
    """The user lists ``folder`` in trusted_workspaces of their config file."""
    config = folder.parent / "config" / "gmprep" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'trusted_workspaces = ["{folder}"]\n', encoding="utf-8")


def _cli_settings(*argv: str) -> Settings:
    return settings_from_args(build_parser().parse_args([*argv, "index", "status"]))


def test_cli_without_toml_keeps_the_cache_store(folder: Path):
    assert _cli_settings().store_dir == folder.parent / "cache" / "gmprep" / "store"


def test_cli_reads_gmprep_toml_of_the_current_folder(folder: Path):
    (folder / "gmprep.toml").write_text(
        'notes_dir = "homebrew"\nbooks = ["Pathfinder GM Core"]\n[search]\nrerank = false\n', encoding="utf-8"
    )
    s = _cli_settings()
    assert s.notes_dir == "homebrew" and s.books == ["Pathfinder GM Core"] and s.search.rerank is False
    # the same function the server uses, with its workspace default store instead of the cache
    server = load_settings(folder)
    assert server.search == s.search and server.books == s.books and server.store_dir == folder / ".gmprep"


def test_cli_applies_the_workspace_trust_policy(folder: Path, capsys: pytest.CaptureFixture[str]):
    (folder / "gmprep.toml").write_text(
        'store_dir = "rules-index"\n[llm]\nbackend = "openai"\nurl = "http://collector.example/v1"\n', encoding="utf-8"
    )
    s = _cli_settings()
    assert s.llm.backend == "auto" and s.llm.url is None  # a cloned folder cannot send notes away (auto: local only)
    assert s.store_dir == folder.parent / "cache" / "gmprep" / "store"
    err = capsys.readouterr().err
    assert "ignored" in err and "llm.url" in err and len(err.strip().splitlines()) == 1
    _trust(folder)  # the user trusts the folder: its file may set everything
    s = _cli_settings()
    assert s.store_dir == folder / "rules-index" and s.llm.url == "http://collector.example/v1"


def test_cli_reads_tool_gmprep_in_pyproject_and_gmprep_toml_wins(folder: Path):
    (folder / "pyproject.toml").write_text('[tool.gmprep]\nnotes_dir = "homebrew"\n[tool.gmprep.search]\nseed_k = 7\n',
                                           encoding="utf-8")
    assert _cli_settings().notes_dir == "homebrew" and _cli_settings().search.seed_k == 7
    (folder / "gmprep.toml").write_text('[search]\nseed_k = 9\n', encoding="utf-8")
    assert _cli_settings().search.seed_k == 9 and _cli_settings().notes_dir == "homebrew"


def test_environment_and_flags_beat_the_toml(folder: Path, monkeypatch: pytest.MonkeyPatch):
    _trust(folder)
    (folder / "gmprep.toml").write_text('store_dir = "from-toml"\n', encoding="utf-8")
    assert _cli_settings().store_dir == folder / "from-toml"
    monkeypatch.setenv("GMPREP_STORE", str(folder / "from-env"))
    assert _cli_settings().store_dir == folder / "from-env"
    assert _cli_settings("--store", str(folder / "from-flag")).store_dir == folder / "from-flag"


def test_the_cli_uses_the_toml_store(folder: Path, capsys: pytest.CaptureFixture[str]):
    _trust(folder)
    (folder / "gmprep.toml").write_text('store_dir = "toml-store"\n', encoding="utf-8")
    assert main(["index", "status"]) == 1
    err = capsys.readouterr().err
    assert "toml-store" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("toml", "says"),
    [("store_dir = [unclosed", "cannot read settings from"), ('[search]\nseed_k = "many"\n', "invalid setting search.seed_k")],
)
def test_bad_toml_is_one_clear_line(folder: Path, capsys: pytest.CaptureFixture[str], toml: str, says: str):
    (folder / "gmprep.toml").write_text(toml, encoding="utf-8")
    assert main(["index", "status"]) == 1
    err = capsys.readouterr().err.strip()
    assert says in err and "Traceback" not in err and len(err.splitlines()) == 1, err


def _leaves(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, field in model.model_fields.items():
        sub = field.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            out += _leaves(sub, f"{prefix}{name}.")
        else:
            out.append(prefix + name)
    return out


def test_every_setting_is_read_somewhere():
    """A key nothing reads is a promise the code does not keep (``embedder`` was one)."""
    sources = [
        p.read_text(encoding="utf-8")
        for folder in ("common", "ingest", "kg", "core", "server", "gmprep")
        for p in (REPO / folder).rglob("*.py")
        if p != REPO / "common" / "settings.py"
    ]
    code = "\n".join(sources)
    unread = [key for key in _leaves(Settings) if not re.search(rf"\.{key.rsplit('.', 1)[-1]}\b", code)]
    assert not unread, f"settings nothing reads: {unread}"
    assert "embedder" not in Settings.model_fields
