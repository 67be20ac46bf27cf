"""The daemon dreams by itself: transcripts dropped into the watched Claude Code folder are captured, and once the
daemon has been idle for dream.idle_minutes (3 s here) the cycle runs, once, and is logged; an edit of that setting
in config.toml applies without a restart."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SELFIMPROVE
from dream_support import write_ledger

from tests.support.datadir import rows, wait_for
from tests.support.cli import tempera
from tempera.core import paths


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def daemon(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A daemon started the way a user starts it, with a short idle period; killed by its pid at the end."""
    claude = tmp_path / "claude"
    for key, value in {
        "CLAUDE_CONFIG_DIR": str(claude),
        "TEMPERA_DREAM__IDLE_MINUTES": "0.05",
        "TEMPERA_DREAM__NIGHTLY_TIME": "",
        "TEMPERA_DREAM__REFLECT_LOOKBACK_DAYS": "1000",
        "TEMPERA_DREAM__PATTERNS_LOOKBACK_DAYS": "1000",
        "TEMPERA_DAEMON__WATCH_DEBOUNCE_SECONDS": "0.3",
    }.items():
        monkeypatch.setenv(key, value)
    started = tempera("daemon", "start", timeout=90)
    assert started.returncode == 0, started.stderr
    try:
        yield claude / "projects"
    finally:
        pid = int((data_dir / paths.DAEMON_LOCK_NAME).read_text().strip())
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not alive(pid), 15)


def test_new_transcripts_and_an_idle_period_start_the_cycle(daemon: Path, data_dir: Path) -> None:
    time.sleep(2.0)  # idle, but memory is empty: nothing to dream about
    assert rows(data_dir, "SELECT COUNT(*) FROM dream_cycles") == [(0,)]
    write_ledger(daemon / "-home-dev-ledger" / "ledger.jsonl")
    for name in ("corrections", "clarify"):
        (daemon / "-home-dev-webshop").mkdir(parents=True, exist_ok=True)
        shutil.copy(SELFIMPROVE / f"{name}.jsonl", daemon / "-home-dev-webshop" / f"{name}.jsonl")
    done = wait_for(lambda: rows(data_dir, "SELECT id, trigger, llm FROM dream_cycles WHERE status = 'done'"), 60)
    assert done[0][1:] == ("idle", "llm.enabled is false")
    assert rows(data_dir, "SELECT COUNT(*) FROM episodes") == [(13,)]  # every turn was captured before it ran
    reflected = {r[0] for r in rows(data_dir, "SELECT day FROM reflections")}
    assert {"2026-03-01", "2026-03-02"} <= reflected
    assert all(Path(p).is_file() for (p,) in rows(data_dir, "SELECT path FROM reflections"))
    log = (data_dir / paths.DAEMON_LOG_NAME).read_text(encoding="utf-8")
    assert f"dream cycle {done[0][0]} (idle) done" in log
    time.sleep(4.0)  # its own writes are no new work: no second cycle
    assert rows(data_dir, "SELECT COUNT(*) FROM dream_cycles") == [(1,)]


def test_an_edited_idle_time_applies_without_a_restart(data_dir: Path, tmp_path: Path) -> None:
    from tempera.core.capture_input import CaptureInput
    from tempera.core.memory import Memory

    with Memory(use_model=False) as mem:  # work the daemon finds at its start
        mem.capture(CaptureInput(summary="Moved the ledger export to the nightly job.", project=str(tmp_path)))
    config = data_dir / paths.CONFIG_NAME
    config.write_text('[dream]\nidle_minutes = 60\nnightly_time = ""\n')
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    assert tempera("daemon", "start", timeout=90, env=env).returncode == 0
    pid = int((data_dir / paths.DAEMON_LOCK_NAME).read_text().strip())
    try:
        config.write_text('[dream]\nidle_minutes = 0.05\nnightly_time = ""\n')  # the start read an hour

        def cycles() -> list[tuple[str]]:
            try:
                return rows(data_dir, "SELECT trigger FROM dream_cycles WHERE status = 'done'")
            except sqlite3.OperationalError:  # the dream's tables are made when it first looks
                return []

        assert wait_for(cycles, 60) == [("idle",)]
        assert int((data_dir / paths.DAEMON_LOCK_NAME).read_text().strip()) == pid
    finally:
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not alive(pid), 15)
