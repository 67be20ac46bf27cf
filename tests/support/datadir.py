"""Watching a data dir from outside the processes that write it (hooks, the daemon): wait for a condition, read
rows of its database with a plain connection of the test's own, find and stop the daemon serving it."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from tempera.core import paths


def wait_for(predicate: Callable[[], Any], timeout: float = 60.0, interval: float = 0.1) -> Any:
    """The predicate's first truthy value, polled every `interval` seconds; AssertionError after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s")


def rows(data_dir: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(data_dir / paths.DB_NAME) as conn:
        return conn.execute(sql).fetchall()


def daemon_pid(data_dir: Path) -> int | None:
    """The pid in the data dir's daemon lock, None when no daemon holds it."""
    try:
        return int((data_dir / paths.DAEMON_LOCK_NAME).read_text().strip() or 0) or None
    except (OSError, ValueError):
        return None


def kill_daemon(data_dir: Path, sig: int = signal.SIGTERM) -> None:
    """Signal the data dir's daemon and wait (15 s at most) until it is gone."""
    pid = daemon_pid(data_dir)
    if pid is None:
        return
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


def endpoint_file(data_dir: Path) -> Path:
    """The file by which the data dir's daemon says how to reach it under the transport of this run (the unix
    socket, or with `TEMPERA_DAEMON__TRANSPORT=tcp` the port and token file)."""
    tcp = os.environ.get("TEMPERA_DAEMON__TRANSPORT") == "tcp"
    return data_dir / (paths.TCP_NAME if tcp else paths.SOCKET_NAME)
