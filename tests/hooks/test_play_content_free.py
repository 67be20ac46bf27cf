"""Real UserPromptSubmit hook subprocesses, on the warm daemon path and the keyword-only cold path: a prompt with
no content injects nothing, even when its words are in an episode; a real prompt in the same memory still injects,
and a project episode a year old is injected when it is the only relevant one."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import pytest
from hookrun import context_of, run_hook

from support.episodes import stored
from tempera.core import paths
from tempera.core.memory import Memory

CONTENT_FREE = [
    "continue",
    "yes",
    "ok",
    "go on",
    "thanks",
    "do it",
    "y",
    "sounds good",
    "please proceed",
    "",
    "   ",
    "?",
    "Thanks, looks good!",
    "ok, go ahead",
]
DIALOG = (
    "Confirm dialog: added the Yes, OK and Continue buttons so checkout can go on, and a thanks page that "
    "says sounds good, please proceed"
)
PASSWORD = "Rotated the staging database password and updated the deploy secrets in the vault"


@pytest.fixture
def repo(memory: Memory, tmp_path: Path) -> Path:
    root = tmp_path / "work" / "webshop"
    (root / ".git").mkdir(parents=True)
    now = datetime.now(timezone.utc)
    for summary, age_days in [(DIALOG, 1), (PASSWORD, 365)]:
        stored(memory, root, summary, now - timedelta(days=age_days))
    return root


@pytest.fixture(params=["warm", "cold"])
def path(request: pytest.FixtureRequest, data_dir: Path, start_daemon: Callable[[], int]) -> str:
    if request.param == "warm":
        start_daemon()
    else:  # the spawn guard says a daemon start was just tried: the hooks answer on their keyword path
        data_dir.mkdir(parents=True, exist_ok=True)
        (data_dir / paths.DAEMON_SPAWN_NAME).write_text("test")
    return str(request.param)


def prompt_context(repo: Path, session: str, prompt: str) -> str:
    return context_of(
        run_hook(
            "user-prompt-submit",
            {"session_id": session, "cwd": str(repo), "prompt": prompt, "hook_event_name": "UserPromptSubmit"},
        )
    )


def test_content_free_prompts_inject_nothing_and_real_ones_still_do(repo: Path, path: str) -> None:
    for i, prompt in enumerate(CONTENT_FREE):
        assert prompt_context(repo, f"{path}-{i}", prompt) == "", (path, prompt)
    assert "Continue buttons" in prompt_context(
        repo, f"{path}-real", "the checkout continue button in the confirm dialog does nothing"
    )
    assert "staging database password" in prompt_context(
        repo, f"{path}-old", "rotate the staging database password again"
    )
