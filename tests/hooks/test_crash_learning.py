"""A daemon killed (SIGKILL) in the middle of a capture job: the retry must leave the database a run without the
kill leaves (episodes and everything learned after capture: links, evidence, calibration, corrections, facts),
and the job must be taken over as soon as a new daemon holds the lock, not when the dead one's lease runs out."""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path

import pytest
from hookrun import run_hook

from tests.support.datadir import kill_daemon
from tests.support.datadir import wait_for

from tests.conftest import TRANSCRIPTS
from tests.support.dbcontent import compare, differences, learned
from tests.support.longsession import write_long_session
from tempera.core import paths
from tempera.core.memory import Memory
from tempera.transcripts.pipeline import capture_and_learn

SOURCE = TRANSCRIPTS / "claude-code-log" / "representative_messages.jsonl"  # 4 work units, corrections among them
COPIES = 20  # 80 units: three write chunks, so a kill after the first lands mid-capture
SID = "crash-session"
ATTEMPTS = 3  # runs until a kill lands mid-capture


def count(data_dir: Path, sql: str) -> int:
    with sqlite3.connect(data_dir / paths.DB_NAME) as conn:
        return conn.execute(sql).fetchone()[0]


def long_session(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    return write_long_session(SOURCE, tmp_path / "t" / f"{SID}.jsonl", COPIES, session_id=SID, cwd=repo)


def stop(transcript: Path, cwd: Path) -> None:
    r = run_hook(
        "stop",
        {
            "session_id": SID,
            "transcript_path": str(transcript),
            "cwd": str(cwd),
            "hook_event_name": "Stop",
            "stop_hook_active": False,
        },
    )
    assert r.returncode == 0, r.stderr


def kill_mid_capture(data_dir: Path, transcript: Path, cwd: Path, start_daemon) -> int:  # type: ignore[no-untyped-def]
    """Queue the session's capture, start the daemon on it and SIGKILL it once its first chunk of episodes is
    committed; returns the episodes stored then. On a loaded machine the kill can land after the last chunk (they
    are written back to back once the vectors are made), even after the job is done: not the case under test, so
    again on a fresh database, up to ATTEMPTS times. Fewer episodes than the session has means the job was still
    leased when the daemon died."""
    for _ in range(ATTEMPTS):
        stop(transcript, cwd)
        start_daemon()
        wait_for(lambda: count(data_dir, "SELECT COUNT(*) FROM episodes") > 0, timeout=120, interval=0.005)
        kill_daemon(data_dir, signal.SIGKILL)
        stored = count(data_dir, "SELECT COUNT(*) FROM episodes")
        if stored < 4 * COPIES:
            break
        for f in data_dir.glob(paths.DB_NAME + "*"):
            f.unlink()
    assert 0 < stored < 4 * COPIES
    return stored


def test_kill_mid_capture_leaves_the_database_of_no_kill(
    data_dir: Path, tmp_path: Path, start_daemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = long_session(tmp_path)
    with monkeypatch.context() as m:
        m.setenv("TEMPERA_DATA_DIR", str(tmp_path / "reference"))
        with Memory() as mem:
            capture_and_learn(mem, transcript, session_id=SID)
    expected = learned(tmp_path / "reference" / paths.DB_NAME)
    assert sum(expected["episodes"].values()) == 4 * COPIES
    assert sum(expected["links"].values()) > 0 and sum(expected["calibration"].values()) == 4 * COPIES

    monkeypatch.setenv("TEMPERA_DAEMON__JOB_LEASE_SECONDS", "2")  # today's takeover waits out the lease
    kill_mid_capture(data_dir, transcript, tmp_path / "repo", start_daemon)
    start_daemon()
    wait_for(lambda: count(data_dir, "SELECT COUNT(*) FROM jobs WHERE status != 'done'") == 0, timeout=180)
    got = learned(data_dir / paths.DB_NAME)
    table = compare(expected, got)
    assert all(t["missing"] == t["extra"] == 0 for t in table.values()), (table, differences(expected, got))


def test_lease_of_a_killed_daemon_is_taken_at_once(data_dir: Path, tmp_path: Path, start_daemon) -> None:
    transcript = long_session(tmp_path)
    kill_mid_capture(data_dir, transcript, tmp_path / "repo", start_daemon)
    assert count(data_dir, "SELECT COUNT(*) FROM jobs WHERE status = 'leased'") == 1
    start_daemon()
    started = time.monotonic()
    # the default lease is 120 s; a new daemon holding the lock knows the old one is dead
    wait_for(lambda: count(data_dir, "SELECT COUNT(*) FROM jobs WHERE status = 'done'") == 1, timeout=60)
    assert time.monotonic() - started < 60
    assert count(data_dir, "SELECT COUNT(*) FROM episodes") == 4 * COPIES
