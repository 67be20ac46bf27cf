"""`memory_prepare_turn` / `memory_finalize_turn` with a real client over stdio: the first answers what the real
UserPromptSubmit hook answers (through a running daemon), the second captures a real transcript as the Stop hook's
job does, found by session id under a temp HOME."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from stdio_session import cli, cli_json, connect, server_env

from tempera.core.memory import Memory
from tests.support.cli import tempera

REPO = Path(__file__).resolve().parents[2]
TRANSCRIPT = REPO / "tests" / "data" / "transcripts" / "spotter" / "tool_heavy.jsonl"
SESSION = "55604662-cf2a-4331-851a-ec234028f8ca"  # the session id inside that transcript
SUMMARY = "Fixed the cart total in src/cart.py: discounts were applied twice; test_cart passes now"
PROMPT = "the cart total is wrong again when a discount code is applied twice"


def _hook(data_dir: Path, cwd: Path, session_id: str) -> str:
    """The real UserPromptSubmit hook (`tempera-hook`), as Claude Code runs it; its additionalContext."""
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": session_id,
        "cwd": str(cwd),
        "prompt": PROMPT,
        "transcript_path": "",
    }
    done = subprocess.run(
        [sys.executable, "-m", "tempera.hooks.entry", "user-prompt-submit"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=120,
        env={**os.environ, **server_env(data_dir)},
    )
    assert done.returncode == 0 and done.stdout, done.stderr
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


@pytest.fixture
def daemon(data_dir: Path, project_dir: Path):  # type: ignore[no-untyped-def]
    cli(data_dir, project_dir, "daemon", "start")
    yield
    cli(data_dir, project_dir, "daemon", "stop")


@pytest.mark.anyio
async def test_prepare_turn_answers_what_the_hook_injects(data_dir: Path, project_dir: Path, daemon: None) -> None:
    [saved] = cli_json(
        data_dir, project_dir, "capture", "-s", SUMMARY, "--task-type", "bugfix", "--files", "src/cart.py"
    )
    async with connect(data_dir, project_dir) as client:
        first = await client.ok("memory_prepare_turn", {"prompt": PROMPT, "session_id": "mcp-session"})
        again = await client.ok("memory_prepare_turn", {"prompt": PROMPT, "session_id": "mcp-session"})
    assert saved["id"][:8] in first["context"] and "discounts were applied twice" in first["context"]
    assert first["context"] == _hook(data_dir, project_dir, "hook-session")  # same prompt, a fresh session
    assert again["context"] == ""  # shown once per session, as the hook does
    with Memory(use_model=False) as mem:
        logged = {sid for (sid,) in mem.db.query("SELECT DISTINCT session_id FROM injections")}
    assert {"mcp-session", "hook-session"} <= logged


@pytest.mark.anyio
async def test_prepare_turn_of_a_paused_project_injects_nothing(data_dir: Path, project_dir: Path) -> None:
    cli(data_dir, project_dir, "capture", "-s", SUMMARY, "--task-type", "bugfix", "--files", "src/cart.py")
    cli(data_dir, project_dir, "pause")
    async with connect(data_dir, project_dir) as client:
        paused = await client.call("memory_prepare_turn", {"prompt": PROMPT})
    assert not paused.is_error and paused.data == {"session_id": paused.data["session_id"], "context": ""}
    assert paused.data["session_id"].startswith("mcp-")


@pytest.mark.anyio
async def test_finalize_turn_captures_the_sessions_transcript_once(
    data_dir: Path, project_dir: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    folder = home / ".claude" / "projects" / "-home-marco-projects-spotter"
    folder.mkdir(parents=True)
    shutil.copy(TRANSCRIPT, folder / f"{SESSION}.jsonl")
    async with connect(data_dir, project_dir, env={"HOME": str(home)}) as client:
        first = await client.ok("memory_finalize_turn", {"session_id": SESSION})
        again = await client.ok("memory_finalize_turn", {"session_id": SESSION})
        missing = await client.call("memory_finalize_turn", {"session_id": "no-such-session"})
        neither = await client.call("memory_finalize_turn", {})
    assert first["added"] >= 1 and first["turns"] >= 1
    assert (again["added"], again["updated"]) == (0, 0)  # the session's cursor: nothing new the second time
    assert missing.is_error and "transcript_path" in missing.text
    assert neither.is_error and "session_id" in neither.text
    with Memory(use_model=False) as mem:
        stored = {sid for (sid,) in mem.db.query("SELECT session_id FROM episodes")}
    assert stored == {SESSION}


@pytest.mark.anyio
async def test_finalize_turn_equals_the_stop_hooks_capture(data_dir: Path, project_dir: Path, tmp_path: Path) -> None:
    """The same transcript captured by the tool and by `tempera capture --session` (the Stop job's pipeline) gives
    the same episodes."""
    copy = tmp_path / f"{SESSION}.jsonl"
    shutil.copy(TRANSCRIPT, copy)
    async with connect(data_dir, project_dir) as client:
        await client.ok("memory_finalize_turn", {"transcript_path": str(copy)})
    by_tool = cli_json(data_dir, project_dir, "retrieve", "--all", "--cross-project")
    other = tmp_path / "other-data"
    env = {**os.environ, **server_env(other)}
    done = tempera("capture", "--session", str(copy), env=env, cwd=project_dir, timeout=300)
    assert done.returncode == 0, done.stderr
    by_cli = cli_json(other, project_dir, "retrieve", "--all", "--cross-project")

    def shape(rows: list[dict]) -> list[tuple]:  # type: ignore[type-arg]
        return sorted((r["summary"], r["task_type"], r["outcome"]) for r in rows)

    assert by_tool and shape(by_tool) == shape(by_cli)
