"""The daemon under faults: SIGKILL mid-capture, absence, concurrent Stops, stale files, idle exit, watching."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hookrun import context_of, run_hook

from tests.support.datadir import daemon_pid, endpoint_file, kill_daemon
from tests.support.datadir import rows, wait_for
from transcript_copy import copy_transcript

from tests.conftest import TRANSCRIPTS
from tempera.core import paths
from tempera.core.memory import Memory
from tempera.transcripts import read_transcript, segment_turns
from tests.support.cli import tempera

BIG = TRANSCRIPTS / "claude-code-viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
SMALL = TRANSCRIPTS / "spotter" / "short.jsonl"


def stop_payload(transcript: Path, sid: str, cwd: Path) -> dict[str, object]:
    return {
        "session_id": sid,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "done",
    }


def sessions(tmp_path: Path, n: int, src: Path) -> list[tuple[str, Path]]:
    out = []
    for i in range(n):
        sid = f"sess-{i:02d}"
        out.append((sid, copy_transcript(src, tmp_path / "t" / f"{sid}.jsonl", cwd=tmp_path / "repo", session_id=sid)))
    return out


def turns_in(path: Path) -> int:
    return len(segment_turns(read_transcript(path)))


def test_sigkill_mid_capture_recovers_exactly_once(data_dir: Path, tmp_path: Path, start_daemon) -> None:
    (tmp_path / "repo").mkdir()
    work = sessions(tmp_path, 6, BIG)
    expected = sum(turns_in(p) for _, p in work)
    env = {"TEMPERA_DAEMON__JOB_LEASE_SECONDS": "3"}
    os.environ.update(env)
    try:
        for sid, path in work:
            assert run_hook("stop", stop_payload(path, sid, tmp_path / "repo")).returncode == 0
        daemon_pid(data_dir) or start_daemon()
        # kill it as soon as the first episode lands: later jobs are pending or leased mid-work
        wait_for(lambda: rows(data_dir, "SELECT COUNT(*) FROM episodes")[0][0] > 0, timeout=90, interval=0.01)
        kill_daemon(data_dir, signal.SIGKILL)
        # the socket and lock are stale now; a new daemon recovers them and the expired leases
        start_daemon()
        wait_for(
            lambda: rows(data_dir, "SELECT COUNT(*) FROM jobs WHERE status IN ('pending', 'leased')")[0][0] == 0,
            timeout=120,
        )
    finally:
        for k in env:
            os.environ.pop(k, None)
    assert rows(data_dir, "SELECT COUNT(*) FROM episodes")[0][0] == expected
    dupes = rows(
        data_dir,
        "SELECT session_id, json_extract(data, '$.intent.raw_prompt'), COUNT(*) c FROM episodes "
        "GROUP BY 1, 2 HAVING c > 1",
    )
    assert dupes == []
    assert rows(data_dir, "SELECT COUNT(*) FROM jobs WHERE status = 'dead'")[0][0] == 0


def test_crashed_worker_lease_is_taken_again(data_dir: Path, tmp_path: Path, start_daemon) -> None:
    """A worker that leased a job and died (what SIGKILL leaves behind) does not lose the job."""
    from tempera.core import jobs

    (tmp_path / "repo").mkdir()
    ((sid, path),) = sessions(tmp_path, 1, SMALL)
    with Memory() as mem:
        jobs.enqueue(mem.db.conn, "capture", {"transcript_path": str(path), "session_id": sid})
        leased = jobs.lease(mem.db.conn, lease_seconds=1.0)
        assert leased is not None  # ...and this "worker" never finishes
    start_daemon()
    wait_for(lambda: rows(data_dir, "SELECT status FROM jobs")[0][0] == "done", timeout=60)
    assert rows(data_dir, "SELECT COUNT(*) FROM episodes")[0][0] == turns_in(path)


def test_no_daemon_hooks_answer_and_start_it(data_dir: Path, tmp_path: Path) -> None:
    with Memory() as mem:
        from tempera.core.capture_input import CaptureInput

        ep = mem.capture(
            CaptureInput(summary="Phoenix server failed to start until mix deps.get was run", project=str(tmp_path))
        )
    assert daemon_pid(data_dir) is None
    r = run_hook(
        "user-prompt-submit",
        {"session_id": "a", "cwd": str(tmp_path), "prompt": "phoenix server does not start, mix deps"},
    )
    assert ep.id[:8] in context_of(r)  # keyword-only answer, in-process
    pid = wait_for(lambda: daemon_pid(data_dir), timeout=30)
    assert wait_for(lambda: endpoint_file(data_dir).exists(), timeout=60)
    r = run_hook(
        "user-prompt-submit",
        {"session_id": "b", "cwd": str(tmp_path), "prompt": "phoenix server does not start, mix deps"},
    )
    assert ep.id[:8] in context_of(r)
    assert daemon_pid(data_dir) == pid


def test_eight_concurrent_stops(data_dir: Path, tmp_path: Path, start_daemon) -> None:
    (tmp_path / "repo").mkdir()
    work = sessions(tmp_path, 8, SMALL)
    start_daemon()
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda w: run_hook("stop", stop_payload(w[1], w[0], tmp_path / "repo")), work))
    assert all(r.returncode == 0 and r.stdout == b"" for r in results)
    wait_for(lambda: rows(data_dir, "SELECT COUNT(DISTINCT session_id) FROM episodes")[0][0] == 8, timeout=120)
    assert rows(data_dir, "SELECT COUNT(*) FROM episodes")[0][0] == 8
    logs = "".join(p.read_text() for p in data_dir.glob("*.log"))
    assert "database is locked" not in logs
    assert (
        "Traceback" not in (data_dir / paths.HOOK_LOG_NAME).read_text()
        if (data_dir / paths.HOOK_LOG_NAME).exists()
        else True
    )


def test_stale_socket_and_lock_are_recovered(data_dir: Path, start_daemon) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / paths.DAEMON_LOCK_NAME).write_text("999999\n")  # a pid that is not running and holds no flock
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(data_dir / paths.SOCKET_NAME))  # a socket file nobody listens on
    stale.close()
    (data_dir / paths.TCP_NAME).write_text("1 " + "0" * 64 + "\n")  # and a TCP daemon's, of a port nobody holds
    pid = start_daemon()
    assert pid != 999999
    r = tempera("daemon", "status", "--json", timeout=30)
    assert json.loads(r.stdout)["running"] is True
    assert endpoint_file(data_dir).stat().st_mode & 0o777 == 0o600
    assert [p.name for p in paths.endpoint_files() if p.exists()] == [endpoint_file(data_dir).name]


def test_second_daemon_exits_while_first_runs(data_dir: Path, start_daemon) -> None:
    pid = start_daemon()
    r = subprocess.run([sys.executable, "-m", "tempera.daemon", "run"], capture_output=True, timeout=60)
    assert r.returncode == 0
    assert daemon_pid(data_dir) == pid


def test_idle_exit(data_dir: Path, start_daemon, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPERA_DAEMON__IDLE_EXIT_MINUTES", "0.03")
    pid = start_daemon()

    def gone() -> bool:
        try:
            os.kill(pid, 0)
            return False
        except ProcessLookupError:
            return True

    wait_for(gone, timeout=60)
    assert not any(p.exists() for p in paths.endpoint_files())


def test_watch_captures_transcripts_without_a_stop_hook(
    data_dir: Path, tmp_path: Path, start_daemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("TEMPERA_DAEMON__WATCH_DEBOUNCE_SECONDS", "0.3")
    (tmp_path / "repo").mkdir()
    start_daemon()
    time.sleep(1.0)  # the observer is scheduled right after the socket answers
    dst = claude / "projects" / "-repo" / "watched.jsonl"
    copy_transcript(SMALL, dst, cwd=tmp_path / "repo", session_id="watched-session")
    wait_for(
        lambda: rows(data_dir, "SELECT COUNT(*) FROM episodes WHERE session_id = 'watched-session'")[0][0] == 1,
        timeout=60,
    )
