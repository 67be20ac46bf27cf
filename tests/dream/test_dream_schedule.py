"""What the daemon's scheduler decides with: the nightly clock, the memory signature (new work or not), and a
cycle stopped by hook traffic keeping what it finished and resuming later."""

from __future__ import annotations

from datetime import datetime, timezone

from conftest import NOW

from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tempera.dream import last_cycle, run_cycle
from tempera.dream.cycle import last_signature, memory_signature
from tempera.dream.scheduler import nightly_due


def test_nightly_is_due_once_per_day_after_its_time() -> None:
    at = datetime(2026, 3, 5, 3, 30, tzinfo=timezone.utc)
    assert nightly_due("03:00", at, None)
    assert nightly_due("03:00", at, datetime(2026, 3, 4, 23, 0, tzinfo=timezone.utc))
    assert not nightly_due("03:00", at, datetime(2026, 3, 5, 3, 1, tzinfo=timezone.utc))
    early = datetime(2026, 3, 5, 2, 0, tzinfo=timezone.utc)  # before today's time: yesterday's run counts
    assert not nightly_due("03:00", early, datetime(2026, 3, 4, 3, 5, tzinfo=timezone.utc))
    assert nightly_due("03:00", early, datetime(2026, 3, 4, 2, 0, tzinfo=timezone.utc))
    assert not nightly_due("", at, None)


def test_only_new_memory_is_new_work(seeded: Memory) -> None:
    assert last_cycle(seeded.db) is None
    run_cycle(seeded, now=NOW)
    assert last_signature(seeded.db) == memory_signature(seeded.db)  # the cycle's own writes are not new work
    run_cycle(seeded, phases=["reflect"], now=NOW)  # a partial run settles nothing, and changes nothing here
    assert last_signature(seeded.db) == memory_signature(seeded.db)
    seeded.retrieve("totals rounding", project="ledger")
    assert last_signature(seeded.db) != memory_signature(seeded.db)
    run_cycle(seeded, now=NOW)
    seeded.capture(CaptureInput(summary="Document the rounding rule", project="ledger"))
    assert last_signature(seeded.db) != memory_signature(seeded.db)


def test_hook_traffic_stops_the_cycle_between_items_and_the_next_one_resumes(seeded: Memory) -> None:
    checks = iter(range(100))
    report = run_cycle(seeded, now=NOW, should_stop=lambda: next(checks) >= 2)  # traffic after two items
    assert report.status == "interrupted"
    status = {p.phase: p.status for p in report.phases}
    assert status["reflect"] == "interrupted"
    assert [status[p] for p in ("patterns", "contradict", "templates")] == ["skipped"] * 3
    assert seeded.db.one("SELECT COUNT(*) FROM reflections")[0] == 1
    row = last_cycle(seeded.db)
    assert row is not None and (row["status"], row["id"]) == ("interrupted", report.id)
    assert seeded.db.one("SELECT signature FROM dream_cycles WHERE id = ?", (report.id,)) == (None,)
    resumed = run_cycle(seeded, now=NOW)
    assert resumed.status == "done" and resumed.phases[2].counts["reflections written (extractive)"] == 2
    assert seeded.db.one("SELECT COUNT(*) FROM reflections")[0] == 3
