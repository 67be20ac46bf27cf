"""The durable job queue in SQLite. Standard library only: the Stop hook enqueues with the stdlib driver.

A job is leased for a while; a worker that dies leaves the lease to expire and the job is taken again, so work
is at-least-once and handlers must be idempotent (capture is: its cursor advances in the same transaction as
the episodes it adds). The daemon is the only worker (one per data dir, by its lock), so a daemon that starts
gives back every lease at once (`release_leases`): their holder is dead. Failures retry with exponential backoff
and are dead-lettered after max attempts, except a failure for lack of space (a full or read-only disk), which is
no fault of the job: it retries, backing off to at most STORAGE_BACKOFF_MAX_SECONDS, until space returns (its
attempts still count, for the backoff: a job that then fails for another reason is dead-lettered at once).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

BACKOFF_BASE_SECONDS = 2.0
BACKOFF_MAX_SECONDS = 600.0
STORAGE_BACKOFF_MAX_SECONDS = 60.0  # how late a job waiting for disk space sees the space return, at most
KEEP_DONE_SECONDS = 7 * 86400.0  # a done job is history for `tempera status`; a week of it is plenty


@dataclass
class Job:
    id: int
    kind: str
    payload: dict[str, Any]
    attempts: int


def enqueue(
    conn: Any, kind: str, payload: dict[str, Any], *, dedupe_key: str | None = None, delay: float = 0.0
) -> bool:
    """Add a job; with a dedupe key, a pending or leased job with the same key absorbs this one.

    Returns False when deduplicated. The caller's connection must be in autocommit mode.
    """
    now = time.time()
    cur = conn.execute(
        "INSERT INTO jobs(kind, payload, dedupe_key, status, attempts, run_after, created_at, updated_at) "
        "VALUES (?, ?, ?, 'pending', 0, ?, ?, ?) ON CONFLICT DO NOTHING",
        (kind, json.dumps(payload), dedupe_key, now + delay, now, now),
    )
    if cur.rowcount == 0 and dedupe_key is not None:
        # a leased job with this key may already be past the part of the transcript this one adds: run again
        conn.execute(
            "UPDATE jobs SET payload = ?, updated_at = ? WHERE dedupe_key = ? AND status = 'pending'",
            (json.dumps(payload), now, dedupe_key),
        )
        leased = conn.execute("SELECT 1 FROM jobs WHERE dedupe_key = ? AND status = 'leased'", (dedupe_key,)).fetchone()
        if leased:
            conn.execute(
                "INSERT INTO jobs(kind, payload, dedupe_key, status, attempts, run_after, created_at, "
                "updated_at) VALUES (?, ?, NULL, 'pending', 0, ?, ?, ?)",
                (kind, json.dumps(payload), now + delay, now, now),
            )
        return False
    return True


def lease(conn: Any, lease_seconds: float) -> Job | None:
    """Take the oldest ready job (pending, or leased by a worker whose lease ran out)."""
    now = time.time()
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute(
            "SELECT id, kind, payload, attempts FROM jobs WHERE (status = 'pending' AND run_after <= ?) "
            "OR (status = 'leased' AND lease_until < ?) ORDER BY run_after, id LIMIT 1",
            (now, now),
        ).fetchone()
        if row is None:
            conn.execute("COMMIT")
            return None
        conn.execute(
            "UPDATE jobs SET status = 'leased', lease_until = ?, attempts = attempts + 1, updated_at = ? WHERE id = ?",
            (now + lease_seconds, now, row[0]),
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # a full disk may have ended it already
            conn.execute("ROLLBACK")
        raise
    return Job(id=row[0], kind=row[1], payload=json.loads(row[2]), attempts=row[3] + 1)


def release_leases(conn: Any) -> int:
    """Make every leased job pending again, keeping its place in the queue; for the worker that just became the only
    one (the daemon that took the lock). Returns how many were released."""
    cur = conn.execute(
        "UPDATE jobs SET status = 'pending', lease_until = NULL, updated_at = ? WHERE status = 'leased'", (time.time(),)
    )
    return int(cur.rowcount)


def complete(conn: Any, job: Job) -> None:
    """Mark the job done and drop done jobs older than KEEP_DONE_SECONDS: every Stop and SessionStart queues one,
    so without this the table grows with every session for ever. Dead jobs stay until requeued or deleted."""
    now = time.time()
    conn.execute(
        "UPDATE jobs SET status = 'done', lease_until = NULL, last_error = NULL, updated_at = ? WHERE id = ?",
        (now, job.id),
    )
    conn.execute("DELETE FROM jobs WHERE status = 'done' AND updated_at < ?", (now - KEEP_DONE_SECONDS,))


def fail(conn: Any, job: Job, error: str, *, max_attempts: int, storage: bool = False) -> str:
    """Schedule a retry with backoff, or dead-letter the job; returns the new status. A `storage` failure (the disk
    refused a write) is never dead-lettered. The error is redacted: a traceback may quote a transcript's text."""
    from tempera.core.redact import redact  # only the worker fails jobs; the hooks that queue them never load it

    error = redact(error)
    now = time.time()
    if job.attempts >= max_attempts and not storage:
        conn.execute(
            "UPDATE jobs SET status = 'dead', lease_until = NULL, last_error = ?, updated_at = ? WHERE id = ?",
            (error[-4000:], now, job.id),
        )
        return "dead"
    delay = min(
        STORAGE_BACKOFF_MAX_SECONDS if storage else BACKOFF_MAX_SECONDS,
        BACKOFF_BASE_SECONDS * 2 ** min(job.attempts - 1, 30),
    )
    conn.execute(
        "UPDATE jobs SET status = 'pending', lease_until = NULL, run_after = ?, last_error = ?, "
        "updated_at = ? WHERE id = ?",
        (now + delay, error[-4000:], now, job.id),
    )
    return "pending"


def counts(conn: Any) -> dict[str, int]:
    return {r[0]: r[1] for r in conn.execute("SELECT status, COUNT(*) FROM jobs GROUP BY status")}


def dead_jobs(conn: Any, limit: int = 20) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT id, kind, payload, attempts, last_error, updated_at FROM jobs WHERE status = 'dead' "
        "ORDER BY updated_at DESC LIMIT ?",
        (limit,),
    ).fetchall()
    return [
        {"id": r[0], "kind": r[1], "payload": json.loads(r[2]), "attempts": r[3], "error": r[4], "at": r[5]}
        for r in rows
    ]


def requeue(conn: Any, job_id: int) -> bool:
    """Give a dead job a fresh start (no attempts, ready now); False when a live job with its dedupe key already
    covers it, and the dead one is deleted instead."""
    row = conn.execute("SELECT dedupe_key FROM jobs WHERE id = ? AND status = 'dead'", (job_id,)).fetchone()
    if row is None:
        return False
    if (
        row[0] is not None
        and conn.execute(
            "SELECT 1 FROM jobs WHERE dedupe_key = ? AND status IN ('pending', 'leased')", (row[0],)
        ).fetchone()
    ):
        delete(conn, job_id)
        return False
    conn.execute(
        "UPDATE jobs SET status = 'pending', attempts = 0, run_after = ?, lease_until = NULL, "
        "updated_at = ? WHERE id = ?",
        (time.time(), time.time(), job_id),
    )
    return True


def delete(conn: Any, job_id: int) -> None:
    conn.execute("DELETE FROM jobs WHERE id = ?", (job_id,))


def enqueue_capture(conn: Any, *, session_id: str, transcript_path: str) -> bool:
    """Queue the capture of a transcript (daemon/worker.py `handle_capture`) with only what the job reads (the
    transcript holds the rest): nothing else from the hook payload (`last_assistant_message` may hold anything the
    agent printed) reaches the disk."""
    payload = {"session_id": session_id, "transcript_path": transcript_path}
    return enqueue(conn, "capture", payload, dedupe_key=f"capture:{transcript_path}")


def enqueue_auto_memory(conn: Any, *, project_id: str, cwd: str) -> bool:
    """Queue the sync of Claude Code's auto memory for a project (daemon/worker.py `handle_auto_memory`), at most one
    pending per project: SessionStart asks for it and must not wait for the embedding it may need."""
    return enqueue(conn, "auto-memory", {"cwd": cwd}, dedupe_key=f"auto-memory:{project_id}")
