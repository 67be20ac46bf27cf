"""A daemon that fails a hook's request (dies mid-request, answers an error): the real hook process fails open with
nothing injected, hooks.log says why the daemon gave none, and a capture it could not queue is kept in the spool."""

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

from tempera.core import spool
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


def _output(proc: subprocess.Popen[bytes]) -> bytes:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return out


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
    finally:
        kill_daemon(data_dir, signal.SIGKILL)
    assert _output(proc) == b""  # nothing injected: a daemon that was there and failed is not started again
    assert "the daemon failed mid-request" in _log(data_dir) or "closed the connection" in _log(data_dir)
    assert "nothing injected" in _log(data_dir)


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
    assert _output(proc) == b""
    assert "user-prompt-submit: daemon error: the daemon answered an error" in _log(data_dir)  # doctor counts it


def test_a_capture_the_daemon_could_not_queue_is_spooled(data_dir: Path, tmp_path: Path, start_daemon: Any) -> None:
    start_daemon()
    transcript = tmp_path / "t.jsonl"
    payload = tmp_path / "stop.json"
    payload.write_text(json.dumps({"session_id": "s", "cwd": str(tmp_path), "transcript_path": str(transcript)}))
    lock = sqlite3.connect(data_dir / "tempera.db", isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the daemon cannot write the job: its busy timeout ends in an error
    try:
        with payload.open("rb") as stdin:
            done = subprocess.run(
                [*HOOK, "stop"],
                stdin=stdin,
                capture_output=True,
                timeout=60,
                env={**os.environ, "TEMPERA_INJECT__DAEMON_TIMEOUT_SECONDS": "60"},
            )
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert done.returncode == 0 and done.stdout == b""
    assert "stop: daemon error: the daemon answered an error" in _log(data_dir)
    (kept,) = spool.pending(data_dir)
    assert str(transcript) in kept.read_text()
