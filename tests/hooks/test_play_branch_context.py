"""The session's git branch as context for a prompt that names little of its work: a real repository put on a
branch with `git checkout -b`, a real database and embedding model, and real UserPromptSubmit hook subprocesses
served by the warm daemon. A thin prompt on a feature branch finds the branch's work; the same prompt on main, a
precise prompt, a question about time and an unrelated prompt on that branch are searched as they are."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import pytest
from hookrun import context_of, run_hook

from support.episodes import stored
from support.gitrepos import git, repo
from tempera.core.memory import Memory
from tempera.core.project import project_for_path
from tempera.core.retrieve import retrieve
from tempera.inject.workcontext import branch_words, checkout_context, related

BRANCH = "gtrrz-victor/adds-entire-reset-command"
RESET = "Fixed the failing tests of the entire reset command: the shadow branch was not deleted before the state file"
EPISODES = [  # newest first: the prompt alone ranks the session-list fix above the reset work
    "Fixed the failing tests in the session list package: the fixture dates were off by one day",
    RESET,
    "Reviewed the logging levels of the hooks and lowered the noisy debug lines to trace",
    "Updated the release workflow to build binaries for arm64 and sign them",
]
THIN = "fix the failing tests"


@pytest.fixture
def project(memory: Memory, tmp_path: Path) -> Path:
    root = repo(tmp_path / "cli")
    now = datetime.now(timezone.utc)
    for age, summary in enumerate(EPISODES):
        stored(memory, root, summary, now - timedelta(hours=age + 1))
    return root


def top(memory: Memory, root: Path, prompt: str, limit: int = 1) -> list[str]:
    """The summaries of the hook's hybrid search for a prompt in this checkout, as it stands."""
    hits = related(
        memory.store,
        prompt,
        checkout_context(str(root)),
        project_id=project_for_path(root).id,
        cfg=memory.config.retrieval,
        limit=limit,
        mode="hybrid",
    )
    return [h.episode.summary for h in hits]


@pytest.mark.parametrize(
    "branch, words",
    [
        (BRANCH, "adds entire reset command"),
        ("alex/ent-232-track-last-interaction-for-sessions", "track last interaction for sessions"),
        ("20260205-strict-settings-parsing", "strict settings parsing"),
        ("claude/setup-dns-mise-xqmU7", "setup dns mise"),
        ("JIRA-12-fix-login", "fix login"),
        ("", ""),
        (None, ""),
    ],
)
def test_branch_words_keep_what_describes_the_work(branch: str | None, words: str) -> None:
    assert branch_words(branch) == words


def test_a_thin_prompt_on_a_feature_branch_finds_the_branchs_work(memory: Memory, project: Path) -> None:
    assert top(memory, project, THIN) == [EPISODES[0]]  # on main: the prompt alone
    git(project, "checkout", "-q", "-b", BRANCH)
    assert checkout_context(str(project)) == "adds entire reset command"
    assert top(memory, project, THIN) == [RESET]
    git(project, "checkout", "-q", "main")
    assert top(memory, project, THIN) == [EPISODES[0]]


def test_a_precise_prompt_or_a_question_about_time_is_searched_as_it_is(memory: Memory, project: Path) -> None:
    git(project, "checkout", "-q", "-b", BRANCH)
    ref = project_for_path(project)
    for prompt in [
        "the session list tests fail because the fixture dates are off by one day, fix them",
        "what did we do yesterday",
    ]:
        alone = retrieve(memory.store, prompt, project_id=ref.id, cfg=memory.config.retrieval, limit=3)
        assert top(memory, project, prompt, limit=3) == [h.episode.summary for h in alone], prompt


def hook_context(root: Path, session: str, prompt: str) -> str:
    payload = {"session_id": session, "cwd": str(root), "prompt": prompt, "hook_event_name": "UserPromptSubmit"}
    return context_of(run_hook("user-prompt-submit", payload))


def test_the_hook_reads_the_branch_from_its_cwd(project: Path, start_daemon: Callable[[], int]) -> None:
    start_daemon()
    on_main = hook_context(project, "main", THIN)
    assert "session list package" in on_main and "reset command" not in on_main
    git(project, "checkout", "-q", "-b", BRANCH)
    on_branch = hook_context(project, "branch", THIN)  # a new session: nothing was shown to it yet
    shown = sorted((s for s in ("reset command", "session list package") if s in on_branch), key=on_branch.index)
    assert shown[:1] == ["reset command"], on_branch  # injected, and first
    assert hook_context(project, "moons", "How many moons does Jupiter have?") == ""
