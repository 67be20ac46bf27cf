"""The branch a hook's `cwd` is on, read from git's files as real git leaves them: `git checkout -b`, a
`git worktree add` (its own HEAD under the common dir), a detached HEAD, and a clone whose default branch is not
`main` (origin/HEAD says which branch carries nothing)."""

from __future__ import annotations

from pathlib import Path

from support.gitrepos import git, repo
from tempera.core.gitrepo import current_branch


def test_a_feature_branch_is_read_and_the_default_branch_detached_head_or_no_repo_carry_nothing(
    tmp_path: Path,
) -> None:
    main = repo(tmp_path / "webshop")
    assert current_branch(main) is None  # on main
    git(main, "checkout", "-q", "-b", "alex/adds-entire-reset-command")
    assert current_branch(main) == "alex/adds-entire-reset-command"
    (main / "src").mkdir()
    assert current_branch(main / "src") == "alex/adds-entire-reset-command"  # any folder of the work tree
    git(main, "checkout", "-q", "--detach")
    assert current_branch(main) is None
    (tmp_path / "plain").mkdir()
    assert current_branch(tmp_path / "plain") is None


def test_a_worktree_has_its_own_branch_and_the_main_checkout_keeps_its_own(tmp_path: Path) -> None:
    main = repo(tmp_path / "webshop")
    git(main, "checkout", "-q", "-b", "soph/improve-enable")
    worktree = tmp_path / "webshop-reset"
    git(main, "worktree", "add", "-q", "-b", "gtrrz-victor/adds-reset", str(worktree))
    assert (worktree / ".git").is_file()
    assert current_branch(worktree) == "gtrrz-victor/adds-reset"
    assert current_branch(main) == "soph/improve-enable"
    git(worktree, "checkout", "-q", "-b", "gtrrz-victor/reset-tests")
    assert current_branch(worktree) == "gtrrz-victor/reset-tests"
    assert current_branch(main) == "soph/improve-enable"


def test_the_default_branch_is_origins_when_the_clone_knows_it(tmp_path: Path) -> None:
    upstream = repo(tmp_path / "upstream")
    git(upstream, "branch", "-q", "-m", "trunk-2026")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    assert current_branch(clone) is None  # on origin's default branch, whatever its name
    git(clone, "checkout", "-q", "-b", "main")
    assert current_branch(clone) == "main"  # not this repository's default branch: it says something
