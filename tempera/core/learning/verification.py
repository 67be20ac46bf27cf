"""Verification states advanced from evidence, not by hand.

- TestsPass: the last test run recorded after the turn's edits (outcome.tests_after) passed.
- Merged: a commit with the episode's changes is reachable from the repository's default branch: the commit the
  turn recorded (outcome.commit), else a default-branch commit authored near the episode that touches at least
  half of its files (`dream.merge_match_window_hours`); the match is recorded in outcome.commit.
- StableNoRevert: merged, `dream.stable_threshold_days` have passed since that commit was committed, and no
  default-branch commit reverts it.
A revert takes the merge away again (the state falls back to what the tests show); otherwise states only move
forward, so a state set by hand is kept. Each step appends a line to outcome.evidence, which `explain` shows.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from tempera.core.errors import InvalidInput, NotFound
from tempera.core.gitrepo import RepoView, open_repo
from tempera.core.learning.retire import retired_ids
from tempera.core.models import Episode, VerificationState
from tempera.core.selfimprove.anchors import anchor_files

if TYPE_CHECKING:
    from tempera.core.memory import Memory

S = VerificationState


@dataclass
class VerificationChange:
    episode_id: str
    before: str
    after: str
    commit: str | None
    reasons: list[str]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Finding:
    state: VerificationState
    reasons: list[str]
    commit: str | None = None
    reverted: bool = False


def _tests_pass(ep: Episode) -> str | None:
    runs = ep.outcome.tests_after
    if runs and runs[-1].passed:
        return f"tests passed after the edits: {runs[-1].command}"
    return None


def evaluate(ep: Episode, repo: RepoView | None, *, now: datetime, stable_days: int, window_hours: float) -> Finding:
    """The highest state the evidence supports for `ep` right now."""
    tests = _tests_pass(ep)
    base = Finding(S.TESTS_PASS, [tests]) if tests else Finding(S.UNTESTED, [])
    if repo is None:
        return base
    if ep.outcome.commit:
        commit = repo.commit(ep.outcome.commit)
        branch = repo.reachable(commit) if commit is not None else None
        how = "its recorded commit"
        files: list[str] = []
    else:
        files = anchor_files(ep.context.files_modified, str(repo.repo.working_tree_dir))
        match = repo.match_by_files(files, ep.created_at, window_hours)
        commit, files = match if match else (None, [])
        branch = repo.branches[0] if commit is not None else None
        how = "files " + ", ".join(files)
    if commit is None or branch is None:
        return base
    sha = commit.hexsha
    reverting = repo.revert_of(commit)
    if reverting is not None:
        return Finding(
            base.state,
            base.reasons + [f"commit {sha[:10]} was reverted by {reverting.hexsha[:10]}"],
            sha,
            reverted=True,
        )
    reasons = base.reasons + [f"merged: {sha[:10]} is reachable from {branch} (matched by {how})"]
    age_days = (now - commit.committed_datetime).total_seconds() / 86400
    if age_days >= stable_days:
        return Finding(S.STABLE_NO_REVERT, reasons + [f"stable: no revert in {int(age_days)} days"], sha)
    return Finding(S.MERGED, reasons, sha)


def _apply(mem: "Memory", ep: Episode, finding: Finding) -> VerificationChange | None:
    before = ep.outcome.verification
    after = finding.state if finding.reverted or finding.state.rank > before.rank else before
    commit = finding.commit or ep.outcome.commit
    new_reasons = [r for r in finding.reasons if r not in ep.outcome.evidence]
    if after == before and commit == ep.outcome.commit and not new_reasons:
        return None
    ep.outcome.verification, ep.outcome.commit = after, commit
    ep.outcome.evidence += new_reasons
    mem.store.update(ep, reembed=False)
    return VerificationChange(ep.id, before.value, after.value, commit, new_reasons)


def advance_all(
    mem: "Memory", *, project_id: str | None = None, now: datetime | None = None
) -> list[VerificationChange]:
    """Advance every live episode as far as its evidence goes (the daemon's and the dream cycle's step)."""
    now = now or datetime.now(timezone.utc)
    cfg = mem.config.dream
    repos: dict[str | None, RepoView | None] = {}
    retired = retired_ids(mem.db)
    changes = []
    for ep in mem.store.iter_episodes(project_id, newest_first=False):
        if ep.id in retired:
            continue
        if ep.project_path not in repos:
            repos[ep.project_path] = open_repo(ep.project_path)
        finding = evaluate(
            ep,
            repos[ep.project_path],
            now=now,
            stable_days=cfg.stable_threshold_days,
            window_hours=cfg.merge_match_window_hours,
        )
        change = _apply(mem, ep, finding)
        if change is not None:
            changes.append(change)
    return changes


def set_state(mem: "Memory", episode_id: str, to: str, *, commit: str | None = None) -> VerificationChange:
    """Manual override (`tempera learn advance-verification`): any state, optionally naming the commit."""
    try:
        state = VerificationState(to.strip().lower())
    except ValueError as exc:
        raise InvalidInput(
            f"unknown verification state {to!r}: use one of {', '.join(s.value for s in VerificationState)}"
        ) from exc
    ep = mem.store.get(episode_id)
    if commit:
        repo = open_repo(ep.project_path)
        found = repo.commit(commit) if repo else None
        if repo is not None and found is None:
            raise NotFound(f"commit {commit!r} is not in the repository at {ep.project_path}")
        commit = found.hexsha if found is not None else commit
    before = ep.outcome.verification
    reason = f"manual: set to {state.value}" + (f" (commit {commit[:10]})" if commit else "")
    ep.outcome.verification, ep.outcome.commit = state, commit or ep.outcome.commit
    ep.outcome.evidence.append(reason)
    mem.store.update(ep, reembed=False)
    return VerificationChange(ep.id, before.value, state.value, ep.outcome.commit, [reason])
