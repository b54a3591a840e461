"""Rebuild the local copies of the real campaign notes listed in sources.json.

The notes belong to other people and most state no licence, so their text is not committed: this
script fetches each file from its repository at the recorded commit into a cache folder
(``--cache``, else ``$GMPREP_REAL_NOTES``, else ``.cache/real-notes`` under the repository root)
and checks it against the recorded SHA-256, so labels (character offsets) always refer to the
same text.

    python bench/data/real-notes/fetch.py                    # git clone from GitHub
    python bench/data/real-notes/fetch.py --mirror /work/.mirror   # local bare mirrors
                                                              # (DIR/owner+name/repo)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def default_cache() -> Path:
    """Where the notes' text lives on this machine (never committed)."""
    env = os.environ.get("GMPREP_REAL_NOTES")
    return Path(env) if env else ROOT / ".cache" / "real-notes"


def _git(args: list[str], cwd: Path | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True).stdout


def _git_dir(repo: str, mirror: Path | None, cache: Path) -> Path:
    """A git directory holding ``repo``'s history: the local mirror, else a blobless clone."""
    if mirror is not None:
        cand = mirror / repo.replace("/", "+") / "repo"
        if cand.is_dir():
            return cand
    clone = cache / "_repos" / repo.replace("/", "+")
    if not clone.is_dir():
        clone.parent.mkdir(parents=True, exist_ok=True)
        _git(["clone", "--quiet", "--bare", "--filter=blob:none", f"https://github.com/{repo}.git", str(clone)])
    return clone


def fetch(sources_file: Path, cache: Path, mirror: Path | None, record: bool = False) -> int:
    """Write every source's text to ``cache/<id>.md``; report drift; optionally record hashes."""
    data = json.loads(sources_file.read_text(encoding="utf-8"))
    cache.mkdir(parents=True, exist_ok=True)
    bad = 0
    for src in data["sources"]:
        gitdir = _git_dir(src["repo"], mirror, cache)
        try:
            blob = _git(["--git-dir", str(gitdir), "show", f"{src['commit']}:{src['path']}"])
        except subprocess.CalledProcessError:
            try:  # a blobless clone may lack the commit's objects until fetched
                _git(["--git-dir", str(gitdir), "fetch", "--quiet", "origin", src["commit"]])
                blob = _git(["--git-dir", str(gitdir), "show", f"{src['commit']}:{src['path']}"])
            except subprocess.CalledProcessError as exc:
                print(f"{src['id']}: cannot read {src['repo']}@{src['commit'][:10]}:{src['path']}: {exc}", file=sys.stderr)
                bad += 1
                continue
        digest = hashlib.sha256(blob).hexdigest()
        if record:
            src["sha256"] = digest
        elif src.get("sha256") and src["sha256"] != digest:
            print(f"{src['id']}: text differs from the labelled version (sha256 {digest[:12]})", file=sys.stderr)
            bad += 1
        (cache / f"{src['id']}.md").write_bytes(blob)
    if record:
        sources_file.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"{len(data['sources']) - bad} notes in {cache}")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", type=Path, default=None, help="output folder (default $GMPREP_REAL_NOTES or .cache/real-notes)")
    p.add_argument("--mirror", type=Path, default=None, help="folder of local bare mirrors, DIR/owner+name/repo")
    p.add_argument("--sources", type=Path, default=HERE / "sources.json")
    p.add_argument("--record", action="store_true", help="write the fetched texts' SHA-256 into sources.json")
    args = p.parse_args(argv)
    return fetch(args.sources, args.cache or default_cache(), args.mirror, args.record)


if __name__ == "__main__":
    sys.exit(main())
