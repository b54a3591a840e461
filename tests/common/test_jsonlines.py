"""The one JSON-lines reader: gzip members appended line by line, a torn last line skipped."""

from __future__ import annotations

import json

import pytest

from gmprep.common.jsonlines import json_objects, open_text


@pytest.mark.parametrize("name", ["rows.jsonl", "rows.jsonl.gz"])
def test_appended_rows_read_back_and_a_torn_last_line_is_skipped(tmp_path, name):
    path = tmp_path / name
    for i in range(3):  # one append per row, as the generation job writes
        with open_text(path, "at") as f:
            f.write(json.dumps({"node_id": f"n{i}", "questions": [f"q{i}"]}) + "\n")
    with open_text(path, "at") as f:
        f.write('{"node_id": "n3", "questi')  # a job killed mid-write
    with open_text(path, "at") as f:
        f.write("[1, 2]\n")  # valid JSON but not an object
    assert [row["node_id"] for row in json_objects(path)] == ["n0", "n1", "n2"]
