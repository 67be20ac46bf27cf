"""A daemon that fails a hook's request (dies mid-request, answers an error): the real hook process still fails
open with the keyword-only answer, and hooks.log says why the daemon gave none."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hookrun import ENTRY, HOOK

from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tests.support.datadir import kill_daemon, wait_for

PROMPT = "phoenix server does not start, mix deps"


@pytest.fixture
def episode_id(tmp_path: Path) -> str:
    with Memory(use_model=False) as mem:
        return mem.capture(
            CaptureInput(summary="Phoenix server failed to start until mix deps.get was run", project=str(tmp_path))
        ).id


def _start_hook(command: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    """A UserPromptSubmit hook that waits up to 60 s on the daemon (so only the daemon's failure ends the wait)."""
    payload = cwd / "payload.json"
    payload.write_text(json.dumps({"session_id": "s", "cwd": str(cwd), "prompt": PROMPT}))
    with payload.open("rb") as stdin:
        return subprocess.Popen(
            [*command, "user-prompt-submit"],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "TEMPERA_INJECT__DAEMON_TIMEOUT_SECONDS": "60"},
        )


def _context(proc: subprocess.Popen[bytes]) -> str:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    doc: dict[str, Any] = json.loads(out)
    return str(doc["hookSpecificOutput"]["additionalContext"])


def _log(data_dir: Path) -> str:
    p = data_dir / "hooks.log"
    return p.read_text() if p.exists() else ""


@pytest.mark.parametrize("command", [HOOK, ENTRY], ids=["relay", "tempera-hook"])
def test_a_daemon_killed_mid_request(
    command: list[str], data_dir: Path, tmp_path: Path, episode_id: str, start_daemon: Any
) -> None:
    pid = start_daemon()
    os.kill(pid, signal.SIGSTOP)  # it accepts no more: the hook's request waits in the socket's queue
    try:
        proc = _start_hook(command, tmp_path)
        time.sleep(2.0)  # the hook has started, connected and sent its request
        (data_dir / "daemon.spawn").write_text("test")  # the fallback starts no new daemon
    finally:
        kill_daemon(data_dir, signal.SIGKILL)
    assert episode_id[:8] in _context(proc)  # the keyword-only answer, in-process
    assert "the daemon failed mid-request" in _log(data_dir) or "closed the connection" in _log(data_dir)


def test_a_daemon_answering_an_error(data_dir: Path, tmp_path: Path, episode_id: str, start_daemon: Any) -> None:
    start_daemon()
    lock = sqlite3.connect(data_dir / "tempera.db", isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the daemon cannot log what it shows: its busy timeout ends in an error
    try:
        proc = _start_hook(HOOK, tmp_path)
        wait_for(lambda: "database is locked" in _log(data_dir), timeout=45)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert episode_id[:8] in _context(proc)
    assert "user-prompt-submit: daemon error: the daemon answered an error" in _log(data_dir)  # doctor counts it
