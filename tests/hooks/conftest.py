"""Every hooks test leaves no daemon behind; `start_daemon` starts one the way a user would."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.datadir import daemon_pid, kill_daemon
from tests.support.cli import tempera


@pytest.fixture(autouse=True)
def no_daemon_left(data_dir: Path):  # type: ignore[no-untyped-def]
    yield
    kill_daemon(data_dir)


@pytest.fixture
def start_daemon(data_dir: Path):  # type: ignore[no-untyped-def]
    def start() -> int:
        r = tempera("daemon", "start", timeout=90)
        assert r.returncode == 0, r.stderr
        pid = daemon_pid(data_dir)
        assert pid
        return pid

    return start
