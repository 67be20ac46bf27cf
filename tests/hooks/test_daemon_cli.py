"""The CLI and a real daemon: a start that fails says why (one line, quickly, and the log holds it); a restore
stops the daemon first and keeps it out while the file is replaced."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.support.datadir import endpoint_file, wait_for
from tests.support.cli import tempera
from tempera.core import paths


def test_failed_start_says_why(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / paths.DB_NAME).write_bytes(b"this is not a database\n" * 10)
    started = time.monotonic()
    r = tempera("daemon", "start", "--wait", "30", timeout=90)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("Error: the daemon failed to start: ") and len(r.stderr.splitlines()) == 1, r.stderr
    assert "is not a SQLite database" in r.stderr
    assert time.monotonic() - started < 20  # it exited: no need to wait out --wait
    assert "is not a SQLite database" in (data_dir / paths.DAEMON_LOG_NAME).read_text()


def test_restore_stops_the_daemon(data_dir: Path, tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    captured = tempera("capture", "-s", "Fixed the flaky login test with a fixed clock", "-p", str(tmp_path))
    assert captured.returncode == 0
    made = json.loads(tempera("memory", "backup", "--json").stdout)["path"]
    pid = start_daemon()
    r = tempera("memory", "backup", "--restore", made, "--yes", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["daemon_stopped"] is True and not endpoint_file(data_dir).exists()
    assert wait_for(lambda: not Path(f"/proc/{pid}").exists(), timeout=20)  # it had let go of the database
