"""`tempera learn dream | reflect | contradict` through the real entry point, on the seeded memory with no API key."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from tempera.core import paths
from tempera.core.memory import Memory
from tests.support.cli import tempera


@pytest.fixture(autouse=True)
def long_lookback(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorded days lie months back from today: look back far enough to see them."""
    monkeypatch.setenv("TEMPERA_DREAM__REFLECT_LOOKBACK_DAYS", "1000")
    monkeypatch.setenv("TEMPERA_DREAM__PATTERNS_LOOKBACK_DAYS", "1000")


def test_dream_lists_plans_runs_and_shows_the_last_cycle(seeded: Memory) -> None:
    assert tempera("learn", "dream", "--last").stdout.strip() == "no dream cycle has run yet"
    listed = tempera("learn", "dream", "--list").stdout.splitlines()
    assert [line.split()[0] for line in listed] == [
        "verify_advance",
        "decay",
        "reflect",
        "patterns",
        "contradict",
        "templates",
    ]
    plan = json.loads(tempera("learn", "dream", "--dry-run", "--json").stdout)
    assert plan["status"] == "planned" and plan["llm"] == "llm.enabled is false"
    assert seeded.db.one("SELECT COUNT(*) FROM dream_cycles")[0] == 0
    run = tempera("learn", "dream")
    assert run.returncode == 0, run.stderr
    assert "LLM off (llm.enabled is false): every phase ran on its LLM-free fallback" in run.stdout
    assert "reflections written (extractive)" in run.stdout and "templates written (mined)" in run.stdout
    last = json.loads(tempera("learn", "dream", "--last", "--json").stdout)
    assert (last["trigger"], last["status"], len(last["phases"])) == ("manual", "done", 6)


def test_reflect_one_day_and_list_contradictions(seeded: Memory) -> None:
    dry = tempera("learn", "reflect", "--date", "2026-03-01", "--dry-run")
    assert dry.stdout.startswith("Plan (dry run") and "1 project-day(s), 1 to triage" in dry.stdout
    out = tempera("learn", "reflect", "--date", "2026-03-01")
    assert out.returncode == 0, out.stderr
    head, written, path = out.stdout.splitlines()[:3]
    assert head.startswith("2026-03-01: 1 days triaged by signal; 1 reflections written (extractive)")
    assert written.strip().startswith("ledger: ledger on 2026-03-01: 2 turns (2 success) (extractive, score")
    assert Path(path.strip()).is_file()
    found = tempera("learn", "contradict")
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith("Contradiction rate: ") and "95% CI" in found.stdout.splitlines()[0]
    assert "ledger: opposite outcomes on src/ledger/totals.py" in found.stdout
    listed = json.loads(tempera("learn", "contradict", "--list", "--json").stdout)
    assert listed["rate"]["pairs"] >= 3 and listed["episodes"] and listed["facts"] == []


def test_errors_are_one_line(data_dir: Path) -> None:
    bad = tempera("learn", "dream", "--phase", "nope")
    assert bad.returncode == 1 and bad.stderr.strip().splitlines() == [
        "Error: unknown phase 'nope': use one of verify_advance, decay, reflect, patterns, contradict, templates"
    ]
    assert tempera("learn", "dream", "--max-usd", "-1").returncode == 1
    assert tempera("learn", "reflect", "--date", "2026-13-01").returncode == 1
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(data_dir / paths.DREAM_LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a cycle in another process
        busy = tempera("learn", "dream")
    finally:
        os.close(fd)
    assert busy.returncode == 1 and busy.stderr.strip().splitlines() == [
        "Error: another dream cycle is running on this data dir; try again when it ends"
    ]
