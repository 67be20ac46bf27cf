"""One pipeline for every way a transcript reaches memory. The Stop hook's job, the watcher's job, `tempera
import` and `tempera capture --session` all call `capture_and_learn`, so an imported year of history gets the
same mistakes log, should-have-asked rows, ask-backs, per-turn facts, session links, temporal credit and implicit
feedback as a live session. Every step is idempotent, so re-importing adds nothing, and the steps run on
`CaptureResult.learning`: a capture killed after storing episodes but before its steps finished leaves them
marked, and the next capture of the transcript (the job's retry) runs the steps for them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

from tempera.core.redact import memo
from tempera.transcripts.capture import (
    CaptureOptions,
    CaptureResult,
    PreparedCapture,
    prepare_capture,
    store_capture,
)
from tempera.transcripts.cursor import mark_learned

if TYPE_CHECKING:
    from tempera.core.memory import Memory

PostCapture = Callable[["Memory", CaptureResult], None]


def self_improve(mem: "Memory", result: CaptureResult) -> None:
    """Corrections, should-have-asked rows, calibration and ask-backs from the captured turns."""
    from tempera.transcripts.detect import process_capture

    process_capture(mem, result)


def learn(mem: "Memory", result: CaptureResult) -> None:
    """Session links, temporal credit and implicit feedback for each captured episode; the outcome links of the
    prompts it holds (earlier episodes that changed the files their turns changed), and of the sessions that began
    after it when it is older (a late import); a correction logged in this session turns the verdicts of the turn
    it corrects to unhelpful (idempotent)."""
    from tempera.core.errors import NotFound
    from tempera.core.learning.implicit import apply_correction
    from tempera.core.learning.loop import learn_from_capture
    from tempera.core.learning.outcomes import link_session, relink_later

    for ep in result.learning:
        learn_from_capture(mem, ep)
    if not result.session_id:
        return
    project_id, stored = result.learning[0].project_id, {ep.id for ep in result.learning}
    link_session(mem.db, result.session_id, project_id, stored)
    relink_later(mem.db, project_id, result.session_id, stored)
    for eid, said in mem.db.query(
        "SELECT episode_id, MIN(created_at) FROM mistakes WHERE session_id = ? AND episode_id IS NOT NULL "
        "GROUP BY episode_id",
        (result.session_id,),
    ):
        try:
            apply_correction(mem, mem.store.get(eid), at=said)
        except NotFound:
            continue


def facts(mem: "Memory", result: CaptureResult) -> None:
    """Decisions, preferences, constraints and dependencies stated in the captured turns, as bi-temporal facts."""
    from tempera.facts.turnfacts import process_capture_facts

    if not result.dry_run:
        process_capture_facts(mem, result.session_turns(), result.learning)


POST_CAPTURE: list[PostCapture] = [self_improve, learn, facts]


def capture_and_learn(mem: "Memory", path: Path, **options: Unpack[CaptureOptions]) -> CaptureResult:
    """Capture what is new in one transcript, then run every step that learns from it (none on a dry run)."""
    return store_and_learn(mem, prepare_capture(mem, path, **options))


def store_and_learn(mem: "Memory", prepared: PreparedCapture) -> CaptureResult:
    """The second half of `capture_and_learn`: store a prepared capture, then run every step after capture. An
    import prepares the next transcript before it calls this for the last one, so that the vectors of one are
    made while the other is read."""
    with memo(prepared.redactions):
        result = store_capture(mem, prepared)
        if not result.dry_run and result.learning:
            for step in POST_CAPTURE:
                step(mem, result)
            mark_learned(mem.db, [ep.id for ep in result.learning])
    return result
