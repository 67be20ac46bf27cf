"""Sessions whose directory is not on this machine go to the project they belong to (core/project_lineage.py):
deleted worktrees to their main checkout, a moved checkout's sessions to the checkout here, an unrelated repository
of the same name to none; a fresh clone seen for the first time takes in what was imported from its copies."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from transcript_writer import SessionWriter

from tempera.core import paths
from tempera.core.project import project_for_path
from tests.support.cli import tempera

GENERIC = ["README.md", "package.json", "src/index.ts", "src/app.ts"]  # in most repositories of a kind
GO_FILES = [
    "cmd/entire/cli/rewind.go",
    "cmd/entire/cli/strategy/manual_commit.go",
    "cmd/entire/cli/checkpoint/store.go",
]


def session(path: Path, n: int, cwd: str, files: list[str], work: str, branch: str = "main") -> None:
    s = SessionWriter(path, session_id=f"0b7c3a52-5d1e-4a57-9b61-3f0d1c2e4b{n:02d}", cwd=cwd)
    s.prompt(f"fix {work} so the integration test passes")
    for f in files:
        s.tool("Read", {"file_path": f"{cwd}/{f}"}, "package cli")
    if files:
        s.tool("Edit", {"file_path": f"{cwd}/{files[0]}", "old_string": "a", "new_string": "b"}, "ok")
    s.say(f"Fixed {work}: the integration test passes now.")
    if branch != "main":
        lines = [json.loads(x) | {"gitBranch": branch} for x in path.read_text().splitlines()]
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def repo(where: Path, files: list[str]) -> Path:
    for f in files:
        (where / f).parent.mkdir(parents=True, exist_ok=True)
        (where / f).write_text("package cli\n")
    subprocess.run(["git", "init", "-q", str(where)], check=True)
    subprocess.run(["git", "-C", str(where), "add", "."], check=True)
    subprocess.run(
        ["git", "-C", str(where), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init"], check=True
    )
    return where


def decisions() -> dict[str, tuple[str, str, str]]:
    """session id -> (project name, project id, kind)."""
    db = sqlite3.connect(paths.data_dir() / "tempera.db")
    rows = db.execute(
        "SELECT s.session_id, p.name, p.id, s.kind FROM session_projects s JOIN projects p ON p.id = s.project_id"
    ).fetchall()
    return {r[0][-2:]: (r[1], r[2], r[3]) for r in rows}


def test_deleted_worktrees_join_their_main_checkout_and_an_unrelated_same_name_repository_does_not(
    tmp_path: Path,
) -> None:
    t = tmp_path / "t"
    session(t / "a.jsonl", 1, "/nonexistent/alex/cli", GO_FILES, "the rewind command")
    session(t / "b.jsonl", 2, "/nonexistent/alex/cli/.worktrees/3", GO_FILES[1:], "the shadow branch")
    session(t / "c.jsonl", 3, "/nonexistent/alex/cli/.claude/worktrees/eager-fox", [], "the checkpoint store")
    session(t / "d.jsonl", 4, "/nonexistent/alex/soph/fix-date", GO_FILES[:1], "the date bug", branch="soph/fix-date")
    session(t / "e.jsonl", 5, "/nonexistent/bob/cli", ["src/index.ts", "src/app.ts", "package.json"], "the web app")
    out = tempera("import", str(t), "--no-embed")
    assert out.returncode == 0, out.stderr
    d = decisions()
    assert d["01"][1] == d["02"][1] == d["03"][1], d  # the worktrees' sessions are the main checkout's project
    assert (d["02"][2], d["03"][2]) == ("worktree", "worktree"), d
    assert d["05"][1] != d["01"][1], d  # a repository also named cli, with none of its files: a project of its own
    assert "2 project(s) named cli" in out.stdout, out.stdout


def test_a_moved_checkouts_sessions_join_the_checkout_here(tmp_path: Path) -> None:
    """The repository now lives at src/cli (known: a session was captured there); a session recorded at its old
    path joins it by its files."""
    here = repo(tmp_path / "src" / "cli", GO_FILES)
    session(tmp_path / "live" / "l.jsonl", 10, str(here), GO_FILES[:1], "the live work")
    assert tempera("import", str(tmp_path / "live" / "l.jsonl"), "--no-embed").returncode == 0
    session(tmp_path / "old" / "o.jsonl", 11, "/nonexistent/old-place/cli", GO_FILES, "the moved work")
    out = tempera("import", str(tmp_path / "old"), "--no-embed")
    assert out.returncode == 0, out.stderr
    d = decisions()
    assert d["11"][1] == project_for_path(here).id and d["11"][2] == "files", d
    assert "not on this machine" not in out.stdout, out.stdout


def test_a_fresh_clone_takes_in_what_was_imported_from_its_copies_elsewhere(tmp_path: Path) -> None:
    """Sessions of two other machines' copies, imported before any clone is here, are one project no hook sees;
    the first capture of a session in a fresh clone takes it in, and the clone's directory finds its episodes."""
    upstream = repo(tmp_path / "upstream" / "cli", GO_FILES + GENERIC)
    session(tmp_path / "far" / "f.jsonl", 12, "/nonexistent/laptop/cli", GO_FILES, "the far rewind fix")
    session(tmp_path / "far" / "g.jsonl", 13, "/nonexistent/desktop/cli", GO_FILES[::-1], "the far store fix")
    session(tmp_path / "far" / "h.jsonl", 15, "/nonexistent/stranger/cli", GENERIC, "the stranger's web app")
    assert tempera("import", str(tmp_path / "far"), "--no-embed").returncode == 0
    d = decisions()
    assert d["12"][1] == d["13"][1] != project_for_path(upstream).id, d
    assert d["15"][1] != d["12"][1], d  # files every repository of a kind has tell nothing
    clone = tmp_path / "clone" / "cli"
    subprocess.run(["git", "clone", "-q", str(upstream), str(clone)], check=True)
    session(tmp_path / "live" / "l.jsonl", 14, str(clone), [], "the first question here")
    assert tempera("import", str(tmp_path / "live" / "l.jsonl"), "--no-embed").returncode == 0
    found = tempera("retrieve", "far fix", "--json", "--mode", "keyword", "--limit", "5", cwd=clone)
    assert sum("the far" in json.dumps(hit) for hit in json.loads(found.stdout)) == 2, found.stdout
    after = decisions()
    assert after["12"][1] == after["13"][1] == after["14"][1] == project_for_path(clone).id, after
    assert after["15"][1] == d["15"][1], after  # the stranger's cli is not taken in
