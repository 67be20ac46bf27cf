"""Issue 17: forty-odd secret shapes planted through every way into memory (a transcript by `tempera import`, a
UserPromptSubmit payload, `tempera capture` JSON on stdin, the MCP tempera_capture and tempera_log_correction
tools), then every file of the data dir (database, WAL, shared memory, logs, a `tempera memory export`, a
`tempera memory backup`) is searched: none of them is found."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from stdio_session import connect, server_env

from support.datafiles import stored_bytes
from support.secrets import SECRETS, found_in, plant_in_session
from tempera.core import paths

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "transcripts"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
from hookrun import ENTRY, context_of, run_hook  # noqa: E402

from tests.support.datadir import kill_daemon  # noqa: E402
from transcript_writer import SessionWriter  # noqa: E402
from tests.support.cli import tempera


def _cli(data_dir: Path, *args: str, stdin: str | None = None) -> str:
    done = tempera(*args, timeout=300, input=stdin, env={**os.environ, **server_env(data_dir)})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_forty_secret_shapes_through_every_entry_point_leave_nothing_on_disk(
    data_dir: Path, project_dir: Path, tmp_path: Path
) -> None:
    assert len(SECRETS) >= 40
    s = SessionWriter(tmp_path / "t" / "5ec0e700-0000-4000-8000-000000000001.jsonl", cwd=str(project_dir))
    plant_in_session(s)
    _cli(data_dir, "import", str(s.path), "--json")
    try:
        for name, text, _ in SECRETS:
            context_of(
                run_hook(
                    "user-prompt-submit",
                    {
                        "session_id": "5ec0e700-ups",
                        "transcript_path": str(s.path),
                        "cwd": str(project_dir),
                        "hook_event_name": "UserPromptSubmit",
                        "prompt": f"the {name} check fails again: {text}",
                    },
                    env=server_env(data_dir),
                )
            )
    finally:
        kill_daemon(data_dir)  # the hook starts one when none answers
    _cli(
        data_dir,
        "capture",
        "--json",
        stdin=json.dumps(
            {
                "summary": " ".join(t for _, t, _ in SECRETS),
                "project": str(project_dir),
                "alternatives_considered": [t for _, t, _ in SECRETS],
            }
        ),
    )
    _cli(data_dir, "memory", "export", "-o", str(data_dir / "export.jsonl"))
    _cli(data_dir, "memory", "export", "--format", "markdown", "-o", str(data_dir / "export.md"))
    _cli(data_dir, "memory", "backup")
    assert list((data_dir / paths.BACKUPS_DIR).glob("*.db"))
    raw = stored_bytes(data_dir)
    assert b"REDACTED" in raw
    assert found_in(raw) == []


@pytest.mark.anyio
async def test_mcp_tools_leave_no_secret_on_disk(data_dir: Path, project_dir: Path) -> None:
    """Every argument stored or logged: captures, logs, facts, retrieval queries (stored in `retrievals`, #40) and
    a tool error quoting its argument (the server logs it to stderr, kept here inside the data dir)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    async with connect(data_dir, project_dir, errlog=data_dir / "mcp-stderr.log") as client:
        for name, text, _ in SECRETS:
            await client.ok(
                "tempera_capture", {"summary": f"the {name} check: {text}", "tags": [name], "errors_resolved": [text]}
            )
            await client.ok("tempera_log_correction", {"category": "secrets", "description": f"{name}: {text}"})
            await client.ok(
                "tempera_log_should_have_asked", {"trigger": f"{name} {text}", "question": f"Which {name}? {text}"}
            )
            if not any(c in text for c in '"\\\n'):  # EDN strings: no quote, backslash or line break to escape
                await client.ok(
                    "tempera_transact",
                    {"facts": f'[[:config/{name} :config/value "{text}"]]', "reason": f"recorded {text}"},
                )
        for name, text, _ in SECRETS:
            found = await client.ok("tempera_retrieve", {"query": f"the {name} check: {text}"})
            assert found["hits"], name
            failed = await client.call("memory_finalize_turn", {"session_id": f"{name}-{text}"[:200]})
            assert failed.is_error
    _cli(data_dir, "memory", "export", "-o", str(data_dir / "export.jsonl"))
    _cli(data_dir, "memory", "backup")
    assert list((data_dir / paths.BACKUPS_DIR).glob("*.db"))
    raw = stored_bytes(data_dir)
    assert b"no transcript for session" in raw and b"[REDACTED:" in raw
    assert found_in(raw) == []


def test_hooks_log_keeps_no_secret(data_dir: Path) -> None:
    """What the hook writes to hooks.log (here: the unknown event it was started with, quoted) is redacted. Run as
    `tempera-hook` (the relay's own path when the daemon does not answer): the relay runs isolated (-I), so it
    would import the installed package, not the PYTHONPATH under test."""
    logged = [s for s in SECRETS if s[0] in ("curl_basic_auth", "docker_password_stdin", "slack_app", "discord_bot")]
    for _, text, _ in logged:
        payload = {"session_id": "s", "cwd": "/tmp", "prompt": "login bug"}
        assert run_hook(text, payload, command=ENTRY).returncode == 0
    log = (data_dir / paths.HOOK_LOG_NAME).read_text()
    assert log.count("unknown hook event") == len(logged) and "[REDACTED:" in log
    assert [name for name, _, secret in logged if secret in log] == []
