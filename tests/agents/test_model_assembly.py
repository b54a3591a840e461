"""Assembling a GGUF from ordered part files: hash checked, partial file removed on a mismatch."""

from __future__ import annotations

import hashlib

import pytest

from gmprep.common.errors import GmprepError
from gmprep.core.llm.models import ModelSpec, assemble, part_paths, resolve_model_path


def _parts(tmp_path):
    paths = []
    for i, data in enumerate([b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]):
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(data)
        paths.append(p)
    return paths, hashlib.sha256(b"".join(p.read_bytes() for p in paths)).hexdigest()


def test_parts_are_concatenated_in_order_and_hash_checked(tmp_path):
    paths, digest = _parts(tmp_path)
    seen: list[int] = []
    out = assemble(paths, tmp_path / "models" / "m.gguf", digest, progress=seen.append)
    assert out.read_bytes() == b"".join(p.read_bytes() for p in paths)
    assert sum(seen) == out.stat().st_size
    assert not (tmp_path / "models" / "m.gguf.partial").exists()


def test_a_bad_hash_leaves_nothing_behind(tmp_path):
    paths, _ = _parts(tmp_path)
    dest = tmp_path / "models" / "m.gguf"
    with pytest.raises(GmprepError, match="sha256"):
        assemble(list(reversed(paths)), dest, "0" * 64)
    assert not dest.exists() and not dest.with_name("m.gguf.partial").exists()


def test_missing_part_packages_are_named():
    spec = ModelSpec(name="x", file_name="x.gguf", sha256="0" * 64, size=0,
                     part_module="gmprep_no_such_part_{i}", parts=2, license="-")
    with pytest.raises(GmprepError, match="gmprep-no-such-part-1==0.2.0 gmprep-no-such-part-2"):
        part_paths(spec)


def test_a_configured_model_path_must_exist(tmp_path):
    with pytest.raises(GmprepError, match="not found"):
        resolve_model_path(str(tmp_path / "nope.gguf"))
