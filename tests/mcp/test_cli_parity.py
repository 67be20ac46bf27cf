"""The brief and session start over MCP return what `tempera lessons brief` / `tempera lessons session-start` print
for the same data: the structured result equals the command's --json output, the text equals its plain output."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from stdio_session import Tempera, cli, cli_json, connect

BRIEF_ARGS = {"files": ["src/auth.py"], "task_type": "bugfix", "domain": "auth-middleware"}
BRIEF_FLAGS = ("lessons", "brief", "--files", "src/auth.py", "--task-type", "bugfix", "--domain", "auth-middleware")


async def _teach(client: Tempera) -> None:
    """A failed vague turn (it leaves an ask-back), and on src/auth.py a correction and a missed question, each
    logged in three sessions (a brief shows only repeated evidence)."""
    captured = await client.ok("tempera_capture", {"summary": "fix it again", "outcome": "failure"})
    assert captured["ask_back"] is not None
    for session in ("s1", "s2", "s3"):
        await client.ok(
            "tempera_log_correction",
            {
                "category": "Validation Skipped",
                "description": "Trusted the return URL from the query string",
                "correction": "The redirect target was not checked against the allow-list",
                "files": ["src/auth.py"],
                "episode": captured["id"][:8],
                "session_id": session,
            },
        )
        await client.ok(
            "tempera_log_should_have_asked",
            {
                "trigger": "edit auth middleware",
                "question": "Should auth run before or after request logging?",
                "answer": "Before",
                "files": ["src/auth.py"],
                "session_id": session,
            },
        )


def _without_consumed_at(brief: dict[str, Any]) -> dict[str, Any]:
    """The consumption time is the one field two runs cannot share."""
    return brief | {"ask_backs": [a | {"consumed_at": None} for a in brief["ask_backs"]]}


@pytest.mark.anyio
async def test_brief_and_session_start_match_the_cli(data_dir: Path, project_dir: Path, tmp_path: Path) -> None:
    async with connect(data_dir, project_dir) as client:
        await _teach(client)
        brief = await client.call("tempera_brief", BRIEF_ARGS)
    assert not brief.is_error and brief.data is not None
    assert brief.data == cli_json(data_dir, project_dir, *BRIEF_FLAGS)
    assert brief.text == cli(data_dir, project_dir, *BRIEF_FLAGS).rstrip("\n")
    categories, pending = brief.data["correction_categories"], brief.data["ask_backs"]
    assert [c["category"] for c in categories] == ["validation_skipped"]
    assert len(pending) == 1  # the brief reads; it consumes nothing

    twins = [tmp_path / "twin-json", tmp_path / "twin-text"]  # session start consumes: each run gets its own copy
    for twin in twins:
        shutil.copytree(data_dir, twin)
    from_cli = cli_json(twins[0], project_dir, "lessons", "session-start")
    cli_text = cli(twins[1], project_dir, "lessons", "session-start").rstrip("\n")
    async with connect(data_dir, project_dir) as client:
        started = await client.call("tempera_session_start")
        again = await client.ok("tempera_session_start")
    assert not started.is_error and started.data is not None
    assert _without_consumed_at(started.data) == _without_consumed_at(from_cli)
    assert [a["status"] for a in started.data["ask_backs"]] == ["consumed"]
    assert started.text == cli_text and "fix it again" in started.text
    assert again["ask_backs"] == []  # shown once
