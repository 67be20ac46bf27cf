"""Done jobs are history, not data: a week of them is kept, older ones go when the next job completes, and pending
or dead jobs are never touched (every Stop and SessionStart queues a job, so the table would otherwise grow for
ever)."""

from __future__ import annotations

import time

from tempera.core import jobs
from tempera.core.memory import Memory


def _done(mem: Memory, key: str, age_days: float) -> int:
    jobs.enqueue(mem.db.conn, "capture", {"session_id": key}, dedupe_key=key)
    job = jobs.lease(mem.db.conn, lease_seconds=60)
    assert job is not None
    jobs.complete(mem.db.conn, job)
    mem.db.conn.execute("UPDATE jobs SET updated_at = ? WHERE id = ?", (time.time() - age_days * 86400, job.id))
    return job.id


def test_done_jobs_older_than_a_week_go_when_the_next_completes() -> None:
    with Memory(use_model=False) as mem:
        old = _done(mem, "old", 8)
        recent = _done(mem, "recent", 6)
        jobs.enqueue(mem.db.conn, "capture", {"session_id": "dead"}, dedupe_key="dead")
        dead = jobs.lease(mem.db.conn, lease_seconds=60)
        assert dead is not None and jobs.fail(mem.db.conn, dead, "boom", max_attempts=1) == "dead"
        mem.db.conn.execute("UPDATE jobs SET updated_at = 0 WHERE id = ?", (dead.id,))
        jobs.enqueue(mem.db.conn, "capture", {"session_id": "waiting"}, delay=3600)

        _done(mem, "now", 0)

        left = {row[0]: row[1] for row in mem.db.query("SELECT id, status FROM jobs")}
        assert old not in left
        assert left[recent] == "done" and left[dead.id] == "dead"
        assert sorted(left.values()) == ["dead", "done", "done", "pending"]
