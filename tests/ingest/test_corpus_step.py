"""The corpus scripts' shared steps (``ingest/corpus_step.py``): manifest entries owned per script, a bad
corpus line stops the script with its error instead of writing a corpus without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gmprep.ingest import corpus_step


def test_replace_sources_keeps_the_place_and_the_others():
    ours = corpus_step.owned_by("a/b", "weapon ")
    sources = [{"repo": "x/y", "what": "one"}, {"repo": "a/b", "what": "weapon old"}, {"repo": "a/b", "what": "creature"}]
    new = [{"repo": "a/b", "what": "weapon new"}]
    out = corpus_step.replace_sources(sources, ours, new)
    assert out == [sources[0], new[0], sources[2]]
    assert corpus_step.replace_sources(out, ours, new) == out  # a rerun changes nothing
    assert corpus_step.replace_sources([sources[0]], ours, new) == [sources[0], new[0]]  # appended when absent


def _corpus(tmp_path: Path, lines: list[str]) -> Path:
    (tmp_path / "things.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def test_a_bad_line_stops_the_step_with_its_error(tmp_path, capsys):
    corpus = _corpus(tmp_path, [json.dumps({"id": "x:1", "name": "One", "type": "feat"}), "{not json"])
    with pytest.raises(corpus_step.CorpusStepError, match=r"things.jsonl:2"):
        corpus_step.transform(corpus, list)

    def main() -> int:
        corpus_step.transform(corpus, list)
        return 0

    assert corpus_step.run(main) == 1
    err = capsys.readouterr().err
    assert "things.jsonl:2: skipped malformed corpus line" in err and "Traceback" not in err


def test_write_replaces_only_the_scripts_entry(tmp_path):
    rec = {"id": "x:1", "name": "One", "type": "feat", "text": "t", "book": "Pathfinder Player Core"}
    corpus = _corpus(tmp_path, [json.dumps(rec)])
    (corpus / "manifest.json").write_text(json.dumps({"sources": [{"repo": "x/y", "what": "kept"}]}), encoding="utf-8")
    records = corpus_step.transform(corpus, list)
    corpus_step.write(corpus, records, corpus_step.owned_by("a/b", "pages "), [{"repo": "a/b", "what": "pages of 1"}])
    manifest = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    assert [s["what"] for s in manifest["sources"]] == ["kept", "pages of 1"]
    assert corpus_step.transform(corpus, list)[0]["name"] == "One"
