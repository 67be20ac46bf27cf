"""Working the job queue: each capture job reads the transcript from the session's cursor and runs the
post-capture steps (linking, implicit feedback, self-improvement, facts) as they are available."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tempera.core import jobs
from tempera.core.memory import Memory

log = logging.getLogger("tempera.daemon")

PostCapture = Callable[[Memory, Any], None]


def self_improve(mem: Memory, result: Any) -> None:
    """Corrections, should-have-asked rows, calibration and ask-backs from the captured turns."""
    from tempera.transcripts.detect import process_capture

    process_capture(mem, result)


def learn(mem: Memory, result: Any) -> None:
    """Session links, temporal credit and implicit feedback for each captured turn; a correction logged in this
    session turns the verdicts of the turn it corrects to unhelpful (idempotent)."""
    from tempera.core.errors import NotFound
    from tempera.core.learning.implicit import apply_correction
    from tempera.core.learning.loop import learn_from_capture

    for ep in result.updated + result.added:
        learn_from_capture(mem, ep)
    if not result.session_id:
        return
    for (eid,) in mem.db.query("SELECT DISTINCT episode_id FROM mistakes WHERE session_id = ? "
                               "AND episode_id IS NOT NULL", (result.session_id,)):
        try:
            apply_correction(mem, mem.store.get(eid))
        except NotFound:
            continue


def facts(mem: Memory, result: Any) -> None:
    """Decisions, preferences, constraints and dependencies stated in the captured turns, as bi-temporal facts."""
    from tempera.facts.turnfacts import process_capture_facts

    process_capture_facts(mem, result)


POST_CAPTURE: list[PostCapture] = [self_improve, learn, facts]


def capture_paused(mem: Memory, path: Path) -> bool:
    """Whether the transcript's project is paused (`tempera pause`); it is only read when some project is."""
    from tempera.core.pause import paused_projects

    paused = paused_projects(mem.db.path.parent)
    if not paused:
        return False
    from tempera.transcripts.capture import transcript_project
    from tempera.transcripts.reader import read_transcript

    return transcript_project(mem, read_transcript(path), None).id in paused


def handle_capture(mem: Memory, payload: dict[str, Any]) -> dict[str, Any]:
    from tempera.transcripts import capture_transcript

    path = Path(str(payload.get("transcript_path") or ""))
    if not path.is_file():
        return {"skipped": f"transcript {path} does not exist"}
    if capture_paused(mem, path):
        return {"skipped": "capture is paused for this project"}
    result = capture_transcript(mem, path, session_id=payload.get("session_id") or None)
    for step in POST_CAPTURE:
        step(mem, result)
    return {"added": len(result.added), "turns": result.turns}


HANDLERS: dict[str, Callable[[Memory, dict[str, Any]], dict[str, Any]]] = {"capture": handle_capture}


def work_one(mem: Memory) -> bool:
    """Lease and run one job; False when the queue has nothing ready."""
    cfg = mem.config.daemon
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
        status = jobs.fail(mem.db.conn, job, f"{exc}\n{traceback.format_exc()}", max_attempts=cfg.job_max_attempts)
        log.warning("job %s (%s) failed (attempt %s, now %s): %s", job.id, job.kind, job.attempts, status, exc)
    return True
