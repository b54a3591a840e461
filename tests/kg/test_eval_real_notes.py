"""The real-notes hover scorer (``gmprep.evals.real_notes``) on tiny synthetic labels: the matching
rule, false-positive reasons, recall with and without entries the store lacks, drift detection, the
fetch script on a local git repository, and ``gmprep eval hover --real`` end to end."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

from gmprep.cli import main
from gmprep.common.errors import GmprepError
from gmprep.evals.real_notes import Judgement, Predicted, check_offsets, evaluate, overlaps, score

ROOT = Path(__file__).resolve().parents[2]


def _rule(start, end, text, ids, absent=False):
    return Judgement(doc="d", start=start, end=end, text=text, label="rule", ids=ids, absent=absent)


def _noise(start, end, text, reason):
    return Judgement(doc="d", start=start, end=end, text=text, label="noise", reason=reason)


def _pred(start, end, text, nid):
    return Predicted(doc="d", start=start, end=end, text=text, id=nid)


def test_overlap_is_half_open():
    assert overlaps(0, 5, 4, 9)
    assert not overlaps(0, 5, 5, 9)  # touching spans share no character


def test_a_prediction_matches_gold_when_spans_overlap_and_the_id_is_acceptable():
    gold = [
        _rule(0, 12, "frightened 2", ["pf2e:condition:frightened"]),
        _rule(20, 27, "Stealth", [], absent=True),  # the store has no skill entries
        _rule(30, 35, "trips", ["pf2e:action:trip"]),
    ]
    noise = [_noise(40, 43, "div", "markup")]
    preds = [
        _pred(0, 10, "frightened", "pf2e:condition:frightened"),  # shorter span, right id: a hit
        _pred(30, 35, "trips", "pf2e:trait:trip"),  # right span, wrong entry
        _pred(40, 43, "div", "pf2e:trait:div"),  # judged noise
        _pred(50, 55, "light", "pf2e:spell:light"),  # nobody judged it: still a false positive
    ]
    r = score("t", gold + noise, preds)
    assert (r.predicted, r.true_positives, r.precision) == (4, 1, 0.25)
    assert r.false_positives_by_reason == {"wrong entry": 1, "markup": 1, "unjudged": 1}
    assert (r.gold, r.gold_in_store) == (3, 2)
    assert r.recall == round(1 / 3, 4) and r.recall_in_store == 0.5
    assert r.f1 == round(2 * 0.25 * (1 / 3) / (0.25 + 1 / 3), 4)
    assert [m["text"] for m in r.missed] == ["Stealth", "trips"]


def test_two_predictions_on_one_gold_span_count_once_for_recall():
    r = score("t", [_rule(0, 11, "Hunted Prey", ["pf2e:action:hunt-prey"])],
              [_pred(0, 6, "Hunted", "pf2e:action:hunt-prey"), _pred(7, 11, "Prey", "pf2e:action:hunt-prey")])
    assert (r.true_positives, r.precision, r.recall) == (2, 1.0, 1.0)


def test_no_predictions_is_perfect_precision_and_zero_recall():
    r = score("t", [_rule(0, 5, "prone", ["pf2e:condition:prone"])], [])
    assert (r.precision, r.recall, r.f1) == (1.0, 0.0, 0.0)


def test_a_label_whose_text_drifted_is_an_error():
    check_offsets([_rule(4, 9, "prone", ["x"])], {"d": "the prone ogre"})
    with pytest.raises(GmprepError, match="drifted"):
        check_offsets([_rule(0, 5, "prone", ["x"])], {"d": "Prone ogre"})


def _git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


NOTE = "# Session 1\n\nThe goblin was frightened 2 and fell prone.\n\n<div class=\"x\">Balance of power</div>\n"


@pytest.fixture
def real_folder(tmp_path):
    """A bench folder with one source in a local git 'mirror', fetched, and labelled by hand."""
    work = tmp_path / "upstream"
    work.mkdir()
    _git(work, "init", "-q")
    (work / "notes").mkdir()
    (work / "notes" / "s1.md").write_text(NOTE, encoding="utf-8")
    _git(work, "add", ".")
    _git(work, "commit", "-q", "-m", "notes")
    commit = _git(work, "rev-parse", "HEAD").strip()
    mirror = tmp_path / "mirror"
    (mirror / "gm+notes").mkdir(parents=True)
    _git(tmp_path, "clone", "-q", "--bare", str(work), str(mirror / "gm+notes" / "repo"))
    folder = tmp_path / "real"
    (folder / "labels").mkdir(parents=True)
    digest = hashlib.sha256(NOTE.encode()).hexdigest()
    src = {"id": "s1", "gm": "gm", "repo": "gm/notes", "commit": commit, "path": "notes/s1.md",
           "licence": "test", "split": "heldout", "sha256": digest}
    (folder / "sources.json").write_text(json.dumps({"sources": [src]}), encoding="utf-8")

    def at(text, k=1):
        pos = -1
        for _ in range(k):
            pos = NOTE.index(text, pos + 1)
        return pos

    labels = [
        {"doc": "s1", "start": at("frightened 2"), "end": at("frightened 2") + 12, "text": "frightened 2",
         "label": "rule", "ids": ["pf2e:condition:frightened"]},
        {"doc": "s1", "start": at("prone"), "end": at("prone") + 5, "text": "prone", "label": "rule",
         "ids": ["pf2e:condition:prone"]},
        {"doc": "s1", "start": at("div"), "end": at("div") + 3, "text": "div", "label": "noise", "reason": "markup"},
        {"doc": "s1", "start": at("Balance"), "end": at("Balance") + 7, "text": "Balance", "label": "noise",
         "reason": "everyday"},
    ]
    (folder / "labels" / "heldout.jsonl").write_text("\n".join(json.dumps(x) for x in labels), encoding="utf-8")
    return folder, mirror, tmp_path / "cache"


def _fetch_module():
    spec = importlib.util.spec_from_file_location("real_notes_fetch", ROOT / "bench" / "data" / "real-notes" / "fetch.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fetch_rebuilds_the_notes_from_a_local_mirror_and_checks_their_hash(real_folder):
    folder, mirror, cache = real_folder
    fetch = _fetch_module()
    assert fetch.main(["--sources", str(folder / "sources.json"), "--cache", str(cache), "--mirror", str(mirror)]) == 0
    assert (cache / "s1.md").read_text(encoding="utf-8") == NOTE
    data = json.loads((folder / "sources.json").read_text())
    data["sources"][0]["sha256"] = "0" * 64  # the labelled version differs: fetch says so and fails
    (folder / "sources.json").write_text(json.dumps(data))
    assert fetch.main(["--sources", str(folder / "sources.json"), "--cache", str(cache), "--mirror", str(mirror)]) == 1


def test_evaluate_scores_the_hover_scan_of_a_fetched_note(real_folder):
    folder, mirror, cache = real_folder
    _fetch_module().main(["--sources", str(folder / "sources.json"), "--cache", str(cache), "--mirror", str(mirror)])
    (report,) = evaluate(folder, "heldout", cache)
    assert report.gold == 2 and report.judged == 4
    # every prediction is a hit or a false positive with a reason; a valued condition is always found
    assert report.true_positives + sum(report.false_positives_by_reason.values()) == report.predicted
    assert "frightened 2" not in [m["text"] for m in report.missed]
    assert report.recall == round((2 - len(report.missed)) / 2, 4)


def test_eval_hover_real_cli_prints_json(real_folder, capsys):
    folder, mirror, cache = real_folder
    _fetch_module().main(["--sources", str(folder / "sources.json"), "--cache", str(cache), "--mirror", str(mirror)])
    capsys.readouterr()
    assert main(["eval", "hover", "--real", str(folder), "--split", "heldout", "--real-cache", str(cache), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["real"]) == {"heldout"}
    assert {"precision", "recall", "recall_in_store", "f1", "false_positives_by_reason"} <= set(out["real"]["heldout"])


def test_eval_hover_without_a_folder_is_a_clear_error(capsys):
    assert main(["eval", "hover"]) == 1
    assert "--real" in capsys.readouterr().err


def test_split_names_are_tune_or_any_numbered_heldout():
    from gmprep.evals.real_notes import RealSource, check_split

    for name in ("tune", "heldout", "heldout2", "heldout5", "heldout12", "both"):
        assert check_split(name) == name
    for name in ("heldoutx", "held5", "tune2", "", "all"):
        with pytest.raises(GmprepError):
            check_split(name)
    base = {"id": "x", "gm": "g", "repo": "o/r", "commit": "c", "path": "p"}
    assert RealSource(**base, split="heldout7").split == "heldout7"
    with pytest.raises(ValueError):
        RealSource(**base, split="dev")


def test_cli_refuses_an_unknown_split(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "hover", "--real", "x", "--split", "heldoutx"])
    assert "unknown split" in capsys.readouterr().err


def test_a_new_numbered_heldout_split_is_scored_on_its_own(real_folder):
    folder, mirror, cache = real_folder
    data = json.loads((folder / "sources.json").read_text())
    data["sources"][0]["split"] = "heldout9"
    (folder / "sources.json").write_text(json.dumps(data))
    (folder / "labels" / "heldout.jsonl").rename(folder / "labels" / "heldout9.jsonl")
    _fetch_module().main(["--sources", str(folder / "sources.json"), "--cache", str(cache), "--mirror", str(mirror)])
    (report,) = evaluate(folder, "heldout9", cache)
    assert report.split == "heldout9" and report.docs == 1 and report.gold == 2 and report.judged == 4
    (empty,) = evaluate(folder, "heldout", cache)  # other splits do not see its notes
    assert empty.docs == 0 and empty.judged == 0


def test_committed_labels_parse_and_name_listed_sources():
    """Every committed label line parses and belongs to a source of sources.json with a valid split
    (no note text, no scoring: held-out labels are only counted here)."""
    from gmprep.evals.real_notes import load_judgements, load_sources

    folder = ROOT / "bench" / "data" / "real-notes"
    sources = {s.id: s for s in load_sources(folder)}
    by_file: dict[str, set[str]] = {}
    for f in sorted((folder / "labels").glob("*.jsonl")):
        docs = {json.loads(line)["doc"] for line in f.read_text(encoding="utf-8").splitlines() if line.strip()}
        by_file[f.stem] = {sources[d].split for d in docs}
    assert all(splits == {name} for name, splits in by_file.items()), by_file
    assert len(load_judgements(folder)) > 0


def test_eval_hover_setting_overrides():
    import pytest

    from gmprep.common.errors import GmprepError
    from gmprep.evals.hover import _hover_settings

    assert _hover_settings(["context_model=false", "strictness=strict"]).context_model is False
    with pytest.raises(GmprepError, match="--hover takes KEY=VALUE"):
        _hover_settings(["colour=blue"])
    with pytest.raises(GmprepError, match="--hover:"):
        _hover_settings(["strictness=banana"])
