"""Issue 40: a full or read-only data dir loses no Stop in silence. A capture the database refuses is spooled beside
it and queued by the worker once the disk takes writes again; when even the spool cannot be written the hook says
so (hooks.log, else stderr); a capture that fails mid-way for lack of space waits for space, not the dead letters.

The disk is made full for the hook process alone by its file-size limit (RLIMIT_FSIZE, with SIGXFSZ ignored the
kernel answers EFBIG, as a full disk answers ENOSPC: SQLite reports both as SQLITE_FULL), read-only by a read-only
bind mount in a mount namespace of its own when the tests run as root (chmod binds no root), else by chmod."""

from __future__ import annotations

import json
import os
import resource
import shlex
import signal
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

from hookrun import ENTRY
from test_daemon_faults import BIG, SMALL, sessions, stop_payload, turns_in

from tempera.core import jobs, paths, spool
from tempera.core.memory import Memory
from tempera.daemon.worker import work_one
from tests.support.datadir import rows

SPOOLED_LIMIT = 2048  # room for a spool file (~200 bytes), none for a WAL frame (a 4 KB page and its header)


def _limit_file_size(limit: int) -> Callable[[], None]:
    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death, as ENOSPC on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


def _stop(
    transcript: Path, sid: str, cwd: Path, *, preexec: Callable[[], None] | None = None, wrap: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[bytes]:
    """A Stop hook that finds no daemon and starts none (a start was just recorded): it keeps the capture itself,
    after waiting half a second for a daemon that does not come."""
    (paths.data_dir() / paths.DAEMON_SPAWN_NAME).write_text("0")
    return subprocess.run(
        [*wrap, *ENTRY, "stop"],
        input=json.dumps(stop_payload(transcript, sid, cwd)).encode(),
        capture_output=True,
        timeout=60,
        preexec_fn=preexec,
        env={**os.environ, "TEMPERA_INJECT__DAEMON_START_SECONDS": "0.5"},
    )


def _setup(data_dir: Path, tmp_path: Path, src: Path = SMALL) -> tuple[str, Path]:
    """A database and a session; the hooks here start no daemon (the worker runs in the test, on the disk as it is
    after the hook)."""
    (tmp_path / "repo").mkdir()
    Memory(use_model=False).close()
    return sessions(tmp_path, 1, src)[0]


def _episodes(sid: str) -> int:
    with Memory(use_model=False) as mem:
        return int(mem.db.one("SELECT count(*) FROM episodes WHERE session_id = ?", (sid,))[0])


def _work_all() -> None:
    with Memory(use_model=False) as mem:
        while work_one(mem):
            pass


def test_a_stop_on_a_nearly_full_disk_is_spooled_and_captured_once_space_returns(
    data_dir: Path, tmp_path: Path
) -> None:
    sid, transcript = _setup(data_dir, tmp_path)
    r = _stop(transcript, sid, tmp_path / "repo", preexec=_limit_file_size(SPOOLED_LIMIT))
    assert r.returncode == 0 and r.stdout == b"", r.stderr
    assert rows(data_dir, "SELECT count(*) FROM jobs") == [(0,)]  # the database took nothing
    kept = spool.pending(data_dir)
    assert len(kept) == 1 and stat.S_IMODE(kept[0].stat().st_mode) == 0o600
    assert sid in (data_dir / paths.HOOK_LOG_NAME).read_text()
    _work_all()  # space is back
    assert not spool.pending(data_dir)
    assert rows(data_dir, "SELECT status FROM jobs") == [("done",)]
    assert _episodes(sid) == turns_in(transcript) > 0


def test_a_stop_on_a_full_disk_says_so_on_stderr_and_the_next_stop_captures_all(data_dir: Path, tmp_path: Path) -> None:
    sid, transcript = _setup(data_dir, tmp_path)
    r = _stop(transcript, sid, tmp_path / "repo", preexec=_limit_file_size(0))
    assert r.returncode == 0 and r.stdout == b""
    said = r.stderr.decode()
    assert sid in said and f"tempera import {transcript}" in said, said
    assert not spool.pending(data_dir) and rows(data_dir, "SELECT count(*) FROM jobs") == [(0,)]
    assert _stop(transcript, sid, tmp_path / "repo").returncode == 0
    _work_all()
    assert _episodes(sid) == turns_in(transcript) > 0


def _read_only(data_dir: Path) -> tuple[str, ...]:
    """The command prefix that runs a hook with the data dir read-only: a bind mount for root, chmod otherwise."""
    if os.geteuid() == 0:
        d = shlex.quote(str(data_dir))
        return ("unshare", "--mount", "sh", "-c", f'mount --bind -o ro {d} {d} && exec "$@"', "sh")
    for p in [data_dir, *data_dir.rglob("*")]:
        p.chmod(p.stat().st_mode & ~0o222)
    return ()


def test_a_stop_in_a_read_only_data_dir_is_not_lost_in_silence(data_dir: Path, tmp_path: Path) -> None:
    sid, transcript = _setup(data_dir, tmp_path)
    try:
        r = _stop(transcript, sid, tmp_path / "repo", wrap=_read_only(data_dir))
    finally:
        for p in [data_dir, *data_dir.rglob("*")]:
            p.chmod(p.stat().st_mode | 0o200)
    assert r.returncode == 0 and r.stdout == b""
    said = r.stderr.decode()
    assert sid in said and f"tempera import {transcript}" in said, said
    assert rows(data_dir, "SELECT count(*) FROM jobs") == [(0,)]
    assert _stop(transcript, sid, tmp_path / "repo").returncode == 0
    _work_all()
    assert _episodes(sid) == turns_in(transcript) > 0


def test_a_capture_that_fills_the_database_waits_for_space_instead_of_dying(data_dir: Path, tmp_path: Path) -> None:
    sid, transcript = _setup(data_dir, tmp_path, BIG)
    with Memory(use_model=False) as mem:
        jobs.enqueue_capture(mem.db.conn, session_id=sid, transcript_path=str(transcript))
        full = mem.db.one("PRAGMA page_count")[0] + 8
        mem.db.execute(f"PRAGMA max_page_count = {full}")  # this connection's disk is full a few pages on
        tries = mem.current_config().daemon.job_max_attempts + 2
        for _ in range(tries):
            with Memory(use_model=False) as other:  # its backoff is over: now
                other.db.execute("UPDATE jobs SET run_after = 0")
            assert work_one(mem)
        status, attempts, error = mem.db.one("SELECT status, attempts, last_error FROM jobs")
        assert (status, attempts) == ("pending", tries) and "full" in error
        mem.db.execute("PRAGMA max_page_count = 1073741823")  # space is back
        mem.db.execute("UPDATE jobs SET run_after = 0")
        assert work_one(mem)
    assert rows(data_dir, "SELECT status FROM jobs") == [("done",)]
    assert _episodes(sid) == turns_in(transcript) > 0
