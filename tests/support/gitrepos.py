"""Real git repositories for tests: made with the git binary, never faked."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from tests.support.cli import tempera  # noqa: F401 -- the repositories' tests run tempera from here

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@x",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@x",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def path_id(path: Path) -> str:
    """A project id as it was made before repositories were recognised (and still is outside any): the path's hash."""
    return hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout.strip()


def repo(path: Path, *, commit: str | None = "first") -> Path:
    """`git init` at path, with one commit of a file unless `commit` is None."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    if commit is not None:
        (path / "README").write_text(f"{commit}\n", encoding="utf-8")
        git(path, "add", "README")
        git(path, "commit", "-q", "-m", commit)
    return path


def captured(cwd: Path, summary: str) -> str:
    """`tempera capture -s SUMMARY` in a directory; the new episode's id."""
    r = tempera("capture", "-s", summary, "--json", cwd=cwd)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)[0]["id"]


def found(cwd: Path, query: str) -> list[str]:
    """The episode ids `tempera retrieve QUERY` (keyword mode) finds from a directory."""
    r = tempera("retrieve", query, "--json", "--mode", "keyword", cwd=cwd)
    assert r.returncode == 0, r.stderr
    return [h["id"] for h in json.loads(r.stdout)]
