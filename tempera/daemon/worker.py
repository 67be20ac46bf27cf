"""Working the job queue: each capture job runs the transcript pipeline (`transcripts.pipeline`) from the
session's cursor, the same steps `tempera import` runs; an auto-memory job (queued at SessionStart) brings a
project's notes from Claude Code's auto memory in line with its files. Captures a hook could only spool (a full or
read-only disk: `core/spool.py`) join the queue first, once the disk takes writes again."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tempera.core import jobs, spool
from tempera.core.db import storage_error
from tempera.core.errors import StorageError
from tempera.core.memory import Memory
from tempera.core.project import project_for_path
from tempera.transcripts import automemory
from tempera.transcripts.capture import PAUSED
from tempera.transcripts.pipeline import capture_and_learn

log = logging.getLogger("tempera.daemon")


def handle_capture(mem: Memory, payload: dict[str, Any]) -> dict[str, Any]:
    path = Path(str(payload.get("transcript_path") or ""))
    if not path.is_file():
        return {"skipped": f"transcript {path} does not exist"}
    result = capture_and_learn(mem, path, session_id=payload.get("session_id") or None)
    if result.paused:
        return {"skipped": PAUSED}
    return {
        "added": len(result.added),
        "updated": len(result.updated),
        "learned": len(result.learning),
        "turns": result.turns,
        "units": result.units,
    }


def handle_auto_memory(mem: Memory, payload: dict[str, Any]) -> dict[str, Any]:
    """Claude Code has just read its auto memory: store the notes it did not load, retire the changed ones."""
    cwd = str(payload.get("cwd") or "")
    project = project_for_path(cwd)
    if not cwd or not automemory.enabled(Path(project.path or cwd)):
        return {"skipped": "auto memory is off here"}
    report = automemory.sync(mem, project, cwd)
    return {"added": report.added, "retired": report.retired}


HANDLERS: dict[str, Callable[[Memory, dict[str, Any]], dict[str, Any]]] = {
    "capture": handle_capture,
    "auto-memory": handle_auto_memory,
}


def _disk_refused(exc: BaseException) -> bool:
    """Whether a write failed for the disk's sake (full, read-only, denied), not the job's."""
    return isinstance(exc, StorageError) or storage_error(exc) is not None


def work_one(mem: Memory) -> bool:
    """Lease and run one job with config.toml as it is now (`Memory.current_config`: an edit reaches the next job
    without a restart); False when the queue has nothing ready."""
    cfg = mem.current_config().daemon
    try:
        spool.drain(mem.db.conn)
    except Exception as exc:
        if not _disk_refused(exc):
            raise
        log.debug("spool: the disk still refuses writes (%s)", exc)  # every poll until space returns: no warning
    job = jobs.lease(mem.db.conn, cfg.job_lease_seconds)
    if job is None:
        return False
    handler = HANDLERS.get(job.kind)
    try:
        if handler is None:
            raise ValueError(f"unknown job kind {job.kind!r}")
        outcome = handler(mem, job.payload)
        jobs.complete(mem.db.conn, job)
        log.info("job %s (%s) done: %s", job.id, job.kind, outcome)
    except Exception as exc:
        status = jobs.fail(
            mem.db.conn,
            job,
            f"{exc}\n{traceback.format_exc()}",
            max_attempts=cfg.job_max_attempts,
            storage=_disk_refused(exc),
        )
        log.warning("job %s (%s) failed (attempt %s, now %s): %s", job.id, job.kind, job.attempts, status, exc)
    return True
