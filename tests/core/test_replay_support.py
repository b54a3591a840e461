"""bench/replay_support.py on the real store: a saved generation is checked again by the answer path's own check,
with and without the name rule, and the replay reports the outcome and whether the text cites the gold."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _replay():
    spec = importlib.util.spec_from_file_location("replay_support", ROOT / "bench" / "replay_support.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_replay_checks_a_saved_generation_again(store_dir, tmp_path, capsys):
    ids = ["pf2e:spell:gust-of-wind", "pf2e:spell:gale-blast"]
    row = {"id": "q1", "kind": "lookup", "outcome": "answered", "declined": False, "answerable": True,
           "gold": ["pf2e:spell:gust-of-wind"], "shown": ids, "used": ids[:1], "text": "",
           "checked": {"checked": "The Gale Blast spell can knock creatures prone [1].",
                       "question": "Which spell knocks creatures prone with wind?", "passages": ids}}
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"rows": {"llamacpp": [row]}}), encoding="utf-8")
    replay = _replay()
    assert replay.main(["--store", str(store_dir), str(run), "--rows", str(tmp_path / "a.jsonl")]) == 0
    now = json.loads(capsys.readouterr().out)
    # the claim names Gale Blast while citing Gust of Wind: struck, and the passages are quoted instead
    assert now["outcomes"] == {"partial": 1} and now["struck"] == 1 and now["text_cites_gold"] == 1.0
    assert "~~The Gale Blast spell can knock creatures prone.~~" in (tmp_path / "a.jsonl").read_text()
    assert replay.main(["--store", str(store_dir), str(run), "--no-name-rule"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert before["outcomes"] == {"answered": 1} and before["struck"] == 0  # word overlap alone keeps it
    assert replay.main(["--store", str(store_dir), str(run)]) == 0  # the switch held for that replay only
    assert json.loads(capsys.readouterr().out)["outcomes"] == {"partial": 1}
