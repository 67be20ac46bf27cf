"""`tempera daemon start` when the daemon cannot start: one line that says why, quickly, and a log that holds it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


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
