"""Watching a data dir from outside the processes that write it (hooks, the daemon): wait for a condition, read
rows of its database with a plain connection of the test's own."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


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
    with sqlite3.connect(data_dir / "tempera.db") as conn:
        return conn.execute(sql).fetchall()
