"""Run a tool that finds modules on disk (mypy, import-linter) over the ``gmprep`` import namespace.

pyproject maps ``gmprep.common`` onto ``common/``, ``gmprep.kg`` onto ``kg/`` and so on; setuptools'
editable install resolves that with an import hook, which mypy and import-linter (grimp) do not use.
This script writes the namespace as a folder of symlinks, ``.pkgview/gmprep/{common,kg,...}``, taken from
``[tool.setuptools] package-dir``, and runs the tool over it:

    python scripts/pkgview.py mypy [ARGS]        # paths in the report are the repository's own
    python scripts/pkgview.py lint-imports [ARGS]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VIEW = ROOT / ".pkgview"


def build_view() -> Path:
    """``.pkgview/gmprep`` mirroring the installed package layout with symlinks (rebuilt every run)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_dir: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    top = VIEW / "gmprep"
    if top.exists():
        for entry in top.iterdir():
            entry.unlink()
    top.mkdir(parents=True, exist_ok=True)
    mapped = {name.split(".", 1)[1]: ROOT / folder for name, folder in package_dir.items() if name != "gmprep"}
    for entry in (ROOT / package_dir["gmprep"]).iterdir():
        if entry.name not in mapped and entry.name != "__pycache__":
            (top / entry.name).symlink_to(entry)
    for name, folder in mapped.items():
        (top / name).symlink_to(folder)
    return VIEW


def _real_path(line: str) -> str:
    """``.pkgview/gmprep/kg/x.py:3: ...`` -> ``kg/x.py:3: ...``."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for name, folder in sorted(config["tool"]["setuptools"]["package-dir"].items(), key=lambda kv: -len(kv[0])):
        view_prefix = ".pkgview/" + name.replace(".", "/") + "/"
        if line.startswith(view_prefix):
            return folder + "/" + line[len(view_prefix):]
    return line


def run_mypy(args: list[str]) -> int:
    build_view()
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", *args], cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "MYPYPATH": str(VIEW)},
    )
    for line in proc.stdout.splitlines():
        print(_real_path(line))
    sys.stderr.write(proc.stderr)
    return proc.returncode


def run_lint_imports(args: list[str]) -> int:
    build_view()
    # grimp finds packages with importlib: drop the editable install's hook so the view is found instead
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, str(VIEW))
    for name in [m for m in sys.modules if m == "gmprep" or m.startswith("gmprep.")]:
        del sys.modules[name]
    from importlinter.cli import lint_imports_command

    # lint-imports puts the working folder first on sys.path: make that the view, not the repository
    os.chdir(VIEW)
    sys.argv = ["lint-imports", "--no-cache", "--config", str(ROOT / "pyproject.toml"), *args]
    return int(lint_imports_command() or 0)


def main() -> int:
    tools = {"mypy": run_mypy, "lint-imports": run_lint_imports}
    if len(sys.argv) < 2 or sys.argv[1] not in tools:
        print(__doc__, file=sys.stderr)
        return 2
    return tools[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
