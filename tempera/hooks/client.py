"""Talking to the daemon (hooks/wire.py: its unix socket or loopback TCP), and starting it detached. Standard library
only."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tempera.core import paths, processes
from tempera.hooks import wire

SPAWN_GUARD_SECONDS = 15.0  # one start attempt per this long, so a burst of hooks does not fork a herd


def request(data_dir: Path, message: dict[str, Any], *, timeout: float) -> dict[str, Any] | None:
    """Send one JSON line to the data dir's daemon (with its token over TCP, hooks/wire.py) and read one back; None
    when nobody answers in time."""
    try:
        s, token, proof = wire.connect(str(data_dir), timeout)
        try:
            header = json.dumps({**message, "token": token} if token else message).encode("utf-8") + b"\n"
            buf = wire.exchange(s, header, b"", proof, wire.MAX_REPLY_BYTES)
        finally:
            s.close()
        reply = json.loads(buf.decode("utf-8")) if buf.strip() else None
        return reply if isinstance(reply, dict) else None
    except (OSError, ValueError):
        return None


def spawn_daemon(data_dir: Path) -> bool:
    """Start `python -m tempera.daemon run` in its own session, without waiting; at most once per guard window."""
    import subprocess  # only here: most hook calls never spawn

    guard = data_dir / paths.DAEMON_SPAWN_NAME
    try:
        if guard.exists() and time.time() - guard.stat().st_mtime < SPAWN_GUARD_SECONDS:
            return False
        fd = os.open(guard, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        env = dict(os.environ, TEMPERA_DATA_DIR=str(data_dir))
        # its stderr goes to the log: a daemon that dies before its logging is set up still says why
        log_fd = os.open(data_dir / paths.DAEMON_LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            processes.start_detached(
                [sys.executable, "-m", "tempera.daemon", "run"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log_fd,
                env=env,
                cwd=str(data_dir),
            )
        finally:
            os.close(log_fd)
        return True
    except OSError:
        return False
