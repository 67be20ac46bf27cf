"""The daemon is the only answerer: a hook that finds none starts it and waits for its answer a bounded time
(`inject.daemon_start_seconds`). Real hook subprocesses fed what Claude Code sends, a real daemon, a real SQLite
file."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from hookrun import HOOK, context_of, run_hook

from tempera.core import paths, processes, spool
from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tempera.hooks.client import request
from tests.support.datadir import daemon_pid, rows

PROMPT = "phoenix server does not start, mix deps"


def _remember(project: Path) -> str:
    with Memory(use_model=False) as mem:
        summary = "Phoenix server failed to start until mix deps.get was run"
        return mem.capture(CaptureInput(summary=summary, project=str(project))).id


def test_the_first_prompt_after_boot_is_answered_by_the_daemon_it_starts(data_dir: Path, tmp_path: Path) -> None:
    episode = _remember(tmp_path)
    assert daemon_pid(data_dir) is None
    r = run_hook("user-prompt-submit", {"session_id": "s", "cwd": str(tmp_path), "prompt": PROMPT}, command=HOOK)
    assert episode[:8] in context_of(r)
    status = request(paths.data_dir(), {"op": "status"}, timeout=30)
    assert status is not None and status["answering_peak"] == 1  # the daemon answered it, and stays for the next
    # answered before the daemon's model was warm: keyword-only, so the gate's P is not in the log
    ((scores,),) = rows(data_dir, "SELECT scores FROM injections")
    assert "p_relevant" not in json.loads(scores) and "bm25" in json.loads(scores)


def _hold_the_daemon_lock(data_dir: Path) -> int:
    """A lock held as a live daemon holds it: the daemon a hook starts exits at once, and nobody answers."""
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(data_dir / paths.DAEMON_LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    assert processes.try_lock(fd)
    return fd


def test_no_answer_in_time_injects_nothing_and_keeps_the_capture(data_dir: Path, tmp_path: Path) -> None:
    _remember(tmp_path)
    fd = _hold_the_daemon_lock(data_dir)
    env = {"TEMPERA_INJECT__DAEMON_START_SECONDS": "1"}
    try:
        started = time.monotonic()
        r = run_hook("user-prompt-submit", {"session_id": "s", "cwd": str(tmp_path), "prompt": PROMPT}, env=env)
        waited = time.monotonic() - started
        transcript = tmp_path / "t.jsonl"
        stop = run_hook("stop", {"session_id": "s", "cwd": str(tmp_path), "transcript_path": str(transcript)}, env=env)
    finally:
        os.close(fd)
    assert r.returncode == 0 and r.stdout == b"" and stop.returncode == 0 and stop.stdout == b""
    assert waited < 15  # the bound (1 s) and a process start, not Claude Code's hook timeout
    log = (data_dir / paths.HOOK_LOG_NAME).read_text()
    assert "user-prompt-submit: daemon error: the daemon it started did not answer within 1.0 s" in log
    (kept,) = spool.pending(data_dir)
    assert str(transcript) in kept.read_text()  # the daemon queues it once it runs


def test_a_broken_config_starts_no_daemon_and_says_why(data_dir: Path, tmp_path: Path) -> None:
    _remember(tmp_path)
    (data_dir / paths.CONFIG_NAME).write_text("[inject]\nbudget_chars = 'many'\n")
    r = run_hook("user-prompt-submit", {"session_id": "s", "cwd": str(tmp_path), "prompt": PROMPT})
    assert r.returncode == 0 and r.stdout == b""
    assert daemon_pid(data_dir) is None
    log = (data_dir / paths.HOOK_LOG_NAME).read_text()
    assert "config inject.budget_chars" in log and "no daemon can start until it is fixed" in log
