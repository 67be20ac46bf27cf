"""What verification needs from a git repository, via GitPython: the default branch, whether a commit is
reachable from it, which commit on it carries an episode's files, and whether a commit was reverted."""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import git

REVERT_RE = re.compile(r"This reverts commit ([0-9a-f]{7,40})", re.I)
DEFAULT_NAMES = ("main", "master", "trunk")
MATCH_LEAD = timedelta(hours=2)  # a commit may be authored a little before the turn is captured


class RepoView:
    """One repository, opened once per verification pass."""

    def __init__(self, path: str):
        self.repo = git.Repo(path)
        self.branches = self._default_branches()
        self._reverts: dict[str, git.Commit] | None = None

    def _default_branches(self) -> list[str]:
        """The local default branch and, when there is one, its remote-tracking twin (origin/HEAD's target)."""
        out: list[str] = []
        try:
            remote_head = self.repo.git.symbolic_ref("refs/remotes/origin/HEAD").removeprefix("refs/remotes/")
            out.append(remote_head)
        except git.GitCommandError:
            remote_head = ""
        local = remote_head.split("/", 1)[-1] if remote_head else ""
        names = [local] if local in self.repo.heads else [n for n in DEFAULT_NAMES if n in self.repo.heads][:1]
        if not names and self.repo.head.is_valid() and not self.repo.head.is_detached:
            names = [self.repo.head.ref.name]
        return names + out

    @property
    def usable(self) -> bool:
        return bool(self.branches)

    def commit(self, sha: str) -> git.Commit | None:
        try:
            return self.repo.commit(sha)
        except (ValueError, git.BadName, git.GitCommandError):
            return None

    def reachable(self, commit: git.Commit) -> str | None:
        """The default branch `commit` is reachable from, if any."""
        for branch in self.branches:
            if self.repo.is_ancestor(commit, self.repo.commit(branch)):
                return branch
        return None

    def match_by_files(
        self, files: list[str], at: datetime, window_hours: float
    ) -> tuple[git.Commit, list[str]] | None:
        """The default-branch commit, authored in [at - 2h, at + window], sharing the most of `files` (at least
        half of them), nearest in time on ties."""
        if not files or not self.branches:
            return None
        wanted, need = set(files), max(1, math.ceil(len(files) / 2))
        start, end = at - MATCH_LEAD, at + timedelta(hours=window_hours)
        best: tuple[int, float, git.Commit, list[str]] | None = None
        since = start.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S +0000")
        for commit in self.repo.iter_commits(self.branches[0], since=since):
            if not start <= commit.authored_datetime <= end:
                continue
            shared = sorted(wanted & set(commit.stats.files))
            gap = abs((commit.authored_datetime - at).total_seconds())
            if len(shared) >= need and (best is None or (len(shared), -gap) > (best[0], -best[1])):
                best = (len(shared), gap, commit, shared)
        return (best[2], best[3]) if best else None

    def revert_of(self, commit: git.Commit) -> git.Commit | None:
        """The default-branch commit that reverts `commit` (git revert's "This reverts commit <sha>" line)."""
        if self._reverts is None:
            self._reverts = {}
            for c in self.repo.iter_commits(self.branches[0], grep="This reverts commit", regexp_ignore_case=True):
                for sha in REVERT_RE.findall(str(c.message)):
                    self._reverts[sha.lower()] = c
        for sha, reverting in self._reverts.items():
            if commit.hexsha.startswith(sha):
                return reverting
        return None


def open_repo(path: str | None) -> RepoView | None:
    """A view of the git repository at `path`, or None when there is none (or it has no default branch)."""
    if not path or not (Path(path) / ".git").exists():
        return None
    try:
        view = RepoView(path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandError, ValueError):
        return None
    return view if view.usable else None
