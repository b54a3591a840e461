"""``llm.backend = "auto"``: which backend a question would use and why (``resolve_backend``), and
``gmprep doctor --json`` / ``gmprep ask --json`` that report it. The GPU and model probes are
replaced; the backends are not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from smollm import smollm2_path

from gmprep.cli import main
from gmprep.common.settings import LLMSettings, Settings
from gmprep.core.llm import factory


@pytest.fixture()
def probes(monkeypatch, tmp_path):
    """Set what the machine has: ``probes(gpu=..., model=..., llamacpp=..., transformers=...)``."""
    def set_(gpu=False, model: Path | None = None, llamacpp=True, transformers=True):
        monkeypatch.setattr(factory, "gpu_available", lambda device=None: gpu if device is None else device.startswith("cuda"))
        monkeypatch.setattr(factory, "installed_gguf", lambda: model)
        monkeypatch.setattr(factory, "llamacpp_available", lambda: llamacpp)
        monkeypatch.setattr(factory, "transformers_available", lambda: transformers)
    return set_


def test_default_is_auto_and_the_suite_sees_no_model():
    assert Settings().llm.backend == "auto"
    assert factory.installed_gguf() is None  # tests/conftest.py: GMPREP_MODELS_DIR is an empty folder
    choice = factory.resolve_backend(Settings())
    assert choice.backend == "extractive" and choice.auto


def test_nothing_installed_is_extractive_with_the_command_that_turns_the_model_on(probes):
    probes(gpu=True, model=None)
    choice = factory.resolve_backend(Settings())
    assert choice.backend == "extractive" and choice.llm.backend == "extractive"
    assert "no local model is installed" in choice.reason and factory.ENABLE_MODEL in choice.reason
    assert "\n" not in choice.reason


def test_cpu_with_the_default_gguf_is_llamacpp_on_the_machines_cores(probes, tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    probes(gpu=False, model=gguf)
    choice = factory.resolve_backend(Settings())
    assert (choice.backend, choice.device, choice.model) == ("llamacpp", "cpu", str(gguf))
    assert choice.threads == factory.cpu_threads() and choice.llm.n_threads == choice.threads
    assert choice.llm.model_path == str(gguf)


def test_gpu_with_a_model_is_transformers_on_the_gpu(probes, tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    probes(gpu=True, model=gguf)
    choice = factory.resolve_backend(Settings())
    assert (choice.backend, choice.device) == ("transformers", "cuda") and choice.llm.model_path == str(gguf)
    probes(gpu=True, model=gguf, transformers=False)  # no torch/transformers: the CPU path
    assert factory.resolve_backend(Settings()).backend == "llamacpp"


def test_no_llamacpp_and_no_gpu_is_extractive(probes, tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    probes(gpu=False, model=gguf, llamacpp=False)
    choice = factory.resolve_backend(Settings())
    assert choice.backend == "extractive" and "xllamacpp" in choice.reason


def test_an_explicit_backend_is_kept():
    choice = factory.resolve_backend(Settings(llm=LLMSettings(backend="extractive")))
    assert choice.backend == "extractive" and not choice.auto and "set to extractive" in choice.reason


def test_doctor_json_says_which_backend_and_why(probes, store_dir, capsys):
    probes(gpu=False, model=smollm2_path())
    assert main(["--store", str(store_dir), "doctor", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["backend"] == "llamacpp" and info["configured"] == "auto"
    assert info["model"] == str(smollm2_path()) and info["model_bytes"] > 1_000_000
    assert info["device"] == "cpu" and info["threads"] >= 1 and "no GPU" in info["reason"]
    assert info["store"]["usable"] and info["store"]["entries"] > 5000 and info["ok"]


def test_doctor_reports_a_missing_store(probes, tmp_path, capsys):
    probes(model=None)
    assert main(["--store", str(tmp_path / "none"), "doctor"]) == 1
    out = capsys.readouterr().out
    assert "backend: extractive (auto)" in out and "gmprep model install" in out and "NOT usable" in out


@pytest.mark.slow
def test_ask_json_with_the_real_model(probes, store_dir, capsys):
    pytest.importorskip("xllamacpp")
    probes(gpu=False, model=smollm2_path())  # auto picks the (test) GGUF: llama.cpp on the CPU
    assert main(["--store", str(store_dir), "ask", "What does the prone condition do?", "--no-save", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"backend", "model", "outcome", "text", "citations", "used", "timings_ms"} <= set(out)
    assert out["backend"] == "llamacpp" and out["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert out["tokens"]["model_calls"] == 1
    t = out["timings_ms"]
    assert t["sources"] <= t["first_token"] <= t["total"]
    assert [c["n"] for c in out["citations"]] == list(range(1, len(out["citations"]) + 1))
    assert "pf2e:condition:prone" in [c["source_id"] for c in out["citations"]]
    assert all(c["used"] == (c["source_id"] in out["used"]) for c in out["citations"])


def test_ask_prints_the_sources_before_the_answer(store_dir, capsys):
    assert main(["--store", str(store_dir), "ask", "What does the prone condition do?", "--no-save"]) == 0
    captured = capsys.readouterr()
    assert captured.out.index("Sources:") < captured.out.index("From the books")
    assert "[1] Prone (condition" in captured.out
    assert "gmprep model install" in captured.err  # auto found no model: said once, with the command
