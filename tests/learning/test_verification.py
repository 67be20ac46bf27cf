"""Verification advanced from evidence: passing tests, commits reachable from the default branch (a real git
repository built here with GitPython), stability without a revert, and the manual override."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import git
import pytest
from learnbook import NOW, Book

from tempera.core.errors import NotFound
from tempera.core.learning.verification import advance_all, set_state
from tests.support.cli import tempera


class Repo:
    def __init__(self, root: Path):
        self.root = root
        self.git = git.Repo.init(root, initial_branch="main")
        with self.git.config_writer() as cfg:
            cfg.set_value("user", "name", "Test").set_value("user", "email", "test@example.com")
        self.commit({"README.md": "hello\n"}, "initial", -24 * 90)

    def commit(self, files: dict[str, str], message: str, at: float) -> git.Commit:
        """Commit `files` on the current branch, dated `at` hours from NOW."""
        for name, text in files.items():
            (self.root / name).parent.mkdir(parents=True, exist_ok=True)
            (self.root / name).write_text(text)
        self.git.index.add(list(files))
        when: datetime = NOW + timedelta(hours=at)
        return self.git.index.commit(message, author_date=when, commit_date=when)


@pytest.fixture
def repo(book: Book) -> Repo:
    return Repo(book.root)


def _state(book: Book, episode_id: str) -> str:
    return book.memory.store.get(episode_id).outcome.verification.value


def test_tests_pass_needs_the_last_run_after_the_edits_to_pass(book: Book) -> None:
    green = book.add("Fixed rounding in invoices", tests_after=[("pytest", False), ("pytest tests/billing", True)])
    red = book.add("Tried to fix rounding", tests_after=[("pytest", True), ("pytest", False)])
    changes = advance_all(book.memory)
    assert [(c.episode_id, c.after) for c in changes] == [(green.id, "tests_pass")]
    assert _state(book, red.id) == "untested"
    assert "tests passed after the edits: pytest tests/billing" in book.memory.store.get(green.id).outcome.evidence


def test_recorded_commit_counts_once_it_reaches_the_default_branch(book: Book, repo: Repo) -> None:
    repo.git.create_head("feature").checkout()
    sha = repo.commit({"app/views.py": "v1\n"}, "Validate return URL", -2).hexsha
    ep = book.add("Validated the return URL", at=-1, modified=["app/views.py"], commit=sha)
    assert advance_all(book.memory) == [] and _state(book, ep.id) == "untested"
    repo.git.heads.main.checkout()
    repo.git.git.merge("feature", "--no-ff", "-m", "Merge feature")
    [change] = advance_all(book.memory)
    assert (change.before, change.after, change.commit) == ("untested", "merged", sha)
    assert advance_all(book.memory) == []  # nothing new: no churn


def test_without_a_commit_files_and_time_find_the_merge(book: Book, repo: Repo) -> None:
    ep = book.add(
        "Added rate limiting to the login view", at=-10, modified=[str(book.root / "app/login.py"), "app/limits.py"]
    )
    late = book.add("Tweaked the signup form", at=-200, modified=["app/signup.py"])
    repo.commit({"app/signup.py": "x\n"}, "Signup tweaks", -10)  # 190 h after `late`: outside the window
    sha = repo.commit({"app/login.py": "limit\n", "app/limits.py": "5/min\n"}, "Rate limit login", -8).hexsha
    changes = {c.episode_id: c for c in advance_all(book.memory)}
    assert set(changes) == {ep.id} and changes[ep.id].commit == sha
    assert "matched by files app/limits.py, app/login.py" in changes[ep.id].reasons[0]
    assert _state(book, late.id) == "untested"


def test_stable_after_the_threshold_without_revert(book: Book, repo: Repo) -> None:
    sha = repo.commit({"app/cache.py": "ttl\n"}, "Cache TTL", -24 * 40).hexsha
    old = book.add("Set the cache TTL", at=-24 * 40, commit=sha)
    recent_sha = repo.commit({"app/db.py": "pool\n"}, "Pool size", -24 * 3).hexsha
    recent = book.add("Raised the pool size", at=-24 * 3, commit=recent_sha)
    advance_all(book.memory)
    assert (_state(book, old.id), _state(book, recent.id)) == ("stable_no_revert", "merged")
    assert advance_all(book.memory, now=NOW + timedelta(days=28))[0].after == "stable_no_revert"


def test_a_revert_takes_the_merge_away(book: Book, repo: Repo) -> None:
    sha = repo.commit({"app/auth.py": "strict\n"}, "Strict auth", -24 * 40).hexsha
    book.add("Made auth strict", at=-24 * 40, commit=sha, tests_after=[("pytest", True)])
    repo.commit({"app/other.py": "x\n"}, "Other work", -24 * 39)
    book.memory.config.dream.stable_threshold_days = 60
    assert advance_all(book.memory)[0].after == "merged"
    repo.git.git.revert(sha, "--no-edit")
    book.memory.config.dream.stable_threshold_days = 30
    [change] = advance_all(book.memory)
    assert (change.before, change.after) == ("merged", "tests_pass")
    assert any("was reverted by" in r for r in change.reasons)
    assert advance_all(book.memory) == []  # stays down, no repeated evidence


def test_manual_override_through_the_cli(book: Book, repo: Repo) -> None:
    sha = repo.commit({"app/x.py": "x\n"}, "X", -1).hexsha
    ep = book.add("Did X", commit=None)
    tempera(
        "learn",
        "advance-verification",
        "--episode",
        ep.id[:8],
        "--to",
        "merged",
        "--commit",
        sha[:7],
        "--json",
        check=True,
    )
    assert book.memory.store.get(ep.id).outcome.commit == sha
    with pytest.raises(NotFound):
        set_state(book.memory, ep.id, "merged", commit="0123456789abcdef")
    refused = tempera(
        "learn", "advance-verification", "--episode", ep.id, "--to", "shipped"
    )  # a usage error: exit 1, one line
    assert refused.returncode == 1 and "Invalid value for '--to'" in refused.stderr
