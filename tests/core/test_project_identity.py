"""One project per repository: worktrees and clones share memory, a same-named unrelated repository does not, and
git runs once per repository. Real git, the real `tempera` executable and a real database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.gitrepos import captured, found, git, path_id, repo
from tempera.core import paths
from tempera.core.project import find_root, identify, normalise_remote, project_for_path


def cold_identify(path: Path, **env: str) -> dict[str, str]:
    """`identify` in a fresh interpreter (no in-process cache), with env overrides such as a PATH without git."""
    code = (
        "import json, sys; from tempera.core.project import identify; i = identify(sys.argv[1]); "
        "print(json.dumps({'id': i.ref.id, 'name': i.ref.name, 'kind': i.kind, 'key': i.key}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60, env={**os.environ, **env}
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_worktree_and_clone_share_the_main_checkouts_memory(tmp_path: Path) -> None:
    main = repo(tmp_path / "webshop")
    git(main, "worktree", "add", "-q", str(tmp_path / "webshop-feature"))
    git(tmp_path, "clone", "-q", str(main), str(tmp_path / "elsewhere" / "webshop-copy"))
    worktree, clone = tmp_path / "webshop-feature", tmp_path / "elsewhere" / "webshop-copy"
    assert (worktree / ".git").is_file()  # a real worktree: `.git` is a `gitdir:` file

    episode = captured(main, "Fixed the checkout total rounding by using Decimal for cents")
    assert found(worktree, "checkout rounding Decimal") == [episode]
    (clone / "src").mkdir()
    assert found(clone / "src", "checkout rounding Decimal") == [episode]

    refs = {p: project_for_path(p) for p in (main, worktree, clone)}
    assert len({r.id for r in refs.values()}) == 1
    assert refs[worktree].name == "webshop"  # the main checkout's folder, not the worktree's
    assert [refs[p].path for p in (main, worktree, clone)] == [str(main), str(worktree), str(clone)]
    assert identify(worktree).kind == "commit" and identify(worktree).key == git(main, "rev-list", "HEAD")


def test_an_unrelated_repository_with_the_same_folder_name_sees_nothing(tmp_path: Path) -> None:
    ours, theirs = repo(tmp_path / "a" / "webshop"), repo(tmp_path / "b" / "webshop", commit="another history")
    episode = captured(ours, "Cached the product catalogue in Redis with a five minute TTL")
    assert found(ours, "product catalogue Redis") == [episode]
    assert found(theirs, "product catalogue Redis") == []
    assert project_for_path(ours).id != project_for_path(theirs).id
    assert project_for_path(ours).name == project_for_path(theirs).name == "webshop"


def test_a_repository_without_commits_keeps_its_path_id_until_its_first_commit(tmp_path: Path) -> None:
    empty = repo(tmp_path / "fresh", commit=None)
    (empty / "pkg").mkdir()
    before = identify(empty / "pkg")
    assert (before.kind, before.ref.id, before.ref.path) == ("path", path_id(empty), str(empty))
    assert identify(empty).ref.id == before.ref.id  # the answer is kept ...
    (empty / "a.txt").write_text("a\n", encoding="utf-8")
    git(empty, "add", "a.txt")
    git(empty, "commit", "-q", "-m", "first")
    after = identify(empty / "pkg")  # ... until the branches change: the first commit names the repository
    assert (after.kind, after.key) == ("commit", git(empty, "rev-parse", "HEAD"))


def test_a_directory_outside_any_repository_is_its_own_project(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    (plain / "sub").mkdir(parents=True)
    (plain / "todo.txt").write_text("x\n", encoding="utf-8")
    ident = identify(plain)
    assert (ident.kind, ident.ref) == ("directory", (path_id(plain), "notes", str(plain)))
    assert identify(plain / "todo.txt").ref == ident.ref  # a file: its directory
    assert identify(plain / "sub").ref.id == path_id(plain / "sub") != ident.ref.id
    assert find_root(plain / "sub") == plain / "sub"
    episode = captured(plain, "Wrote down the release checklist for the notes folder")
    assert found(plain, "release checklist") == [episode]
    assert found(plain / "sub", "release checklist") == []


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:Acme/Webshop.git",
        "https://github.com/acme/webshop",
        "ssh://git@github.com/acme/webshop.git",
        "ssh://git@github.com:22/acme/webshop/",
        "https://someone:s3cret@github.com/acme/webshop.git",
    ],
)
def test_origin_spellings_compare_equal(url: str) -> None:
    assert normalise_remote(url) == "github.com/acme/webshop"


def test_other_hosts_and_local_paths_stay_apart() -> None:
    assert normalise_remote("git@gitlab.com:acme/webshop.git") != normalise_remote("git@github.com:acme/webshop.git")
    assert normalise_remote("git@github.com:acme/webshop-api.git") != normalise_remote("git@github.com:acme/webshop")
    assert normalise_remote("file:///srv/git/webshop.git") == normalise_remote("/srv/git/webshop") == "/srv/git/webshop"


def test_a_shallow_clone_is_known_by_its_origin(tmp_path: Path) -> None:
    main = repo(tmp_path / "webshop")
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{main}", str(tmp_path / "ci" / "webshop"))
    shallow = identify(tmp_path / "ci" / "webshop")
    assert (tmp_path / "ci" / "webshop" / ".git" / "shallow").exists()
    assert (shallow.kind, shallow.key) == ("remote", str(main).lower())


def test_git_runs_once_per_repository_and_its_absence_is_no_error(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir.mkdir()
    main = repo(tmp_path / "webshop")
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    other = repo(tmp_path / "other", commit="unrelated")
    no_git = tmp_path / "empty-bin"
    no_git.mkdir()

    with monkeypatch.context() as env:  # a caller's git environment (a git hook's, say) does not leak into the answer
        env.setenv("GIT_DIR", str(other / ".git"))
        env.setenv("GIT_OBJECT_DIRECTORY", str(other / ".git" / "objects"))
        first = identify(main)
    assert (first.kind, first.key) == ("commit", git(main, "rev-parse", "HEAD"))
    cache = json.loads((data_dir / paths.REPO_IDS_NAME).read_text(encoding="utf-8"))
    assert cache[str(main / ".git")]["key"] == first.key
    assert (data_dir / paths.REPO_IDS_NAME).stat().st_mode & 0o777 == 0o600
    cold = cold_identify(tmp_path / "wt", PATH=str(no_git))  # a cold process needs no git: the file answers
    assert (cold["id"], cold["kind"], cold["name"]) == (first.ref.id, "commit", "webshop")

    (data_dir / paths.REPO_IDS_NAME).unlink()
    assert cold_identify(main, PATH=str(no_git))["kind"] == "path"  # no git, no remote: the main checkout's path
    git(main, "remote", "add", "origin", "git@github.com:acme/webshop.git")
    via_remote = cold_identify(tmp_path / "wt", PATH=str(no_git))  # the config changed: asked again
    assert (via_remote["kind"], via_remote["key"]) == ("remote", "github.com/acme/webshop")
    assert cold_identify(main)["kind"] == "remote"  # git is back, but nothing changed: the cached answer holds
    git(main, "commit", "-q", "--allow-empty", "-m", "second")
    assert cold_identify(main) == {**cold, "name": "webshop"}  # a branch moved: asked again, git answers
