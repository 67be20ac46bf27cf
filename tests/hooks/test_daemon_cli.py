"""The CLI and a real daemon: a start that fails says why (one line, quickly, and the log holds it); a restore
stops the daemon first and keeps it out while the file is replaced."""

from __future__ import annotations

import subprocess
import sys
import json
import time
from pathlib import Path

from hookrun import wait_for


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tempera.cli", *args], capture_output=True, text=True, timeout=90)


def test_failed_start_says_why(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "tempera.db").write_bytes(b"this is not a database\n" * 10)
    started = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "tempera.cli", "daemon", "start", "--wait", "30"],
                       capture_output=True, text=True, timeout=90)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("Error: the daemon failed to start: ") and len(r.stderr.splitlines()) == 1, r.stderr
    assert "is not a SQLite database" in r.stderr
    assert time.monotonic() - started < 20  # it exited: no need to wait out --wait
    assert "is not a SQLite database" in (data_dir / "daemon.log").read_text()


def test_restore_stops_the_daemon(data_dir: Path, tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    assert cli("capture", "-s", "Fixed the flaky login test with a fixed clock", "-p", str(tmp_path)).returncode == 0
    made = json.loads(cli("backup", "--json").stdout)["path"]
    pid = start_daemon()
    r = cli("backup", "--restore", made, "--yes", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["daemon_stopped"] is True and not (data_dir / "daemon.sock").exists()
    assert wait_for(lambda: not Path(f"/proc/{pid}").exists(), timeout=20)  # it had let go of the database
