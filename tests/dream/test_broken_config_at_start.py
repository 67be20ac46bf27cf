"""A daemon thread opens its own Memory, which reads config.toml. If the file is broken in that instant (an editor
half-way through a save), the thread must start from the config its process already validated and follow the file
once it is fixed, instead of dying silently and leaving the daemon without its dream cycle for the rest of its life.
A real DreamScheduler thread on a real data dir."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tempera.core import paths
from tempera.core.capture_input import CaptureInput
from tempera.core.config import load_config
from tempera.core.errors import InvalidInput
from tempera.core.memory import Memory
from tempera.dream.cycle import last_cycle
from tempera.dream.scheduler import DreamScheduler

from tests.support.datadir import wait_for

BROKEN = '[dream\nidle_minutes = 0.05\nnightly_time = ""\n'  # the header's bracket is still to be typed
FIXED = '[dream]\nidle_minutes = 0.05\nnightly_time = ""\n'


def test_a_memory_opened_while_the_file_is_broken_starts_from_the_last_good_config(data_dir: Path) -> None:
    config = data_dir / paths.CONFIG_NAME
    data_dir.mkdir(parents=True, exist_ok=True)
    config.write_text("[inject]\nbudget_chars = 1500\n")
    good = load_config()
    config.write_text("[inject\nbudget_chars = 900\n")
    with pytest.raises(InvalidInput):
        Memory(use_model=False)
    with Memory(use_model=False, last_good=good) as mem:
        assert mem.config.inject.budget_chars == 1500
        config.write_text("[inject]\nbudget_chars = 900\n")
        assert mem.current_config().inject.budget_chars == 900  # it follows the file once it validates


def test_the_dream_thread_survives_a_config_broken_as_it_starts(data_dir: Path, tmp_path: Path) -> None:
    with Memory(use_model=False) as mem:  # work the cycle finds
        mem.capture(CaptureInput(summary="Moved the ledger export to the nightly job.", project=str(tmp_path)))
    config = data_dir / paths.CONFIG_NAME
    config.write_text(FIXED)
    good = load_config()
    config.write_text(BROKEN)
    idle_since = time.monotonic() - 3600
    scheduler = DreamScheduler(data_dir, lambda: idle_since, good)
    scheduler.start()
    try:
        time.sleep(1.0)
        assert scheduler.thread.is_alive()
        config.write_text(FIXED)

        def cycle() -> dict | None:  # read in this process with Tempera's driver (tests/support/datadir.py reads
            # from outside: a second SQLite library here would drop the thread's file locks when it closes)
            with Memory(use_model=False, last_good=good) as mem:
                done = last_cycle(mem.db)
            return done if done and done["status"] == "done" else None

        assert wait_for(cycle, 120)["trigger"] == "idle"
    finally:
        scheduler.stop()
