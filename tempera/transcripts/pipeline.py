"""The one home of the steps after capture, in one declared order, for every way an episode reaches memory: the
daemon's capture job (a Stop, or the watcher) and `tempera capture --session` call `capture_and_learn`;
`tempera import` calls its two halves, `prepare_capture` and `store_and_learn`, one file apart; an explicit capture
(`tempera capture`, the MCP tool `tempera_capture`) calls `learn_from_episodes`. So an imported year of history
gets the same mistakes log, should-have-asked rows, ask-backs, per-turn facts, session links, temporal credit and
implicit feedback as a live session.

An explicit capture runs the steps that need no transcript (`Step.transcript`): it has no turns to find
corrections or facts in, and no captured session whose prompts link outcomes or whose logged corrections turn
verdicts. Each step names the steps whose rows it reads (`Step.after`); `ordered` refuses a list that runs a step
before one of them. Every step is idempotent, so re-importing adds nothing, and a transcript's steps run on
`CaptureResult.learning`: a capture killed after storing episodes but before its steps finished leaves them
marked, and the next capture of the transcript (the job's retry) runs the steps for them."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
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
    from tempera.core.learning.loop import CaptureLearning
    from tempera.core.memory import Memory
    from tempera.core.models import Episode
    from tempera.core.selfimprove.askbacks import AskBack


@dataclass
class AfterCapture:
    """What the steps run on, and what they leave for the caller to show."""

    episodes: list["Episode"]
    capture: CaptureResult | None = None  # the transcript capture they came from; None after an explicit capture
    learning: list["CaptureLearning"] = field(default_factory=list)  # per episode, in order (the `learn` step)
    ask_backs: list["AskBack"] = field(default_factory=list)  # drafted by this run (the `self_improve` step)

    @property
    def transcript(self) -> CaptureResult:
        assert self.capture is not None  # only a step with `transcript=True` asks, and runs only with one
        return self.capture


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[["Memory", AfterCapture], None]
    after: tuple[str, ...] = ()  # the steps whose rows this one reads: they must run before it
    transcript: bool = False  # reads the captured transcript's turns or session: not run after an explicit capture


def self_improve(mem: "Memory", done: AfterCapture) -> None:
    """Corrections and should-have-asked rows from the captured turns, then calibration and ask-backs for the
    episodes (only these two after an explicit capture: there are no turns)."""
    if done.capture is None:
        from tempera.core.selfimprove.aftercapture import update_after_capture

        done.ask_backs = update_after_capture(mem, done.episodes)
        return
    from tempera.transcripts.detect import process_capture

    done.ask_backs = process_capture(mem, done.capture).ask_backs


def learn(mem: "Memory", done: AfterCapture) -> None:
    """Session links, temporal credit and implicit feedback (verdicts on what was injected) for each episode."""
    from tempera.core.learning.loop import learn_from_capture

    done.learning = [learn_from_capture(mem, ep) for ep in done.episodes]


def outcome_links(mem: "Memory", done: AfterCapture) -> None:
    """The outcome links of the prompts the captured session's episodes hold (earlier episodes that changed the
    files their turns changed), and of the sessions that began after it when it is older (a late import)."""
    from tempera.core.learning.outcomes import link_session, relink_later

    result = done.transcript
    if not result.session_id:
        return
    project_id, stored = done.episodes[0].project_id, {ep.id for ep in done.episodes}
    link_session(mem.db, result.session_id, project_id, stored)
    relink_later(mem.db, project_id, result.session_id, stored)


def correction_verdicts(mem: "Memory", done: AfterCapture) -> None:
    """A correction logged in the session (`self_improve`) turns the verdicts of the turn it corrects (`learn`'s
    implicit feedback) to unhelpful; idempotent."""
    from tempera.core.errors import NotFound
    from tempera.core.learning.implicit import apply_correction

    session_id = done.transcript.session_id
    if not session_id:
        return
    for eid, said in mem.db.query(
        "SELECT episode_id, MIN(created_at) FROM mistakes WHERE session_id = ? AND episode_id IS NOT NULL "
        "GROUP BY episode_id",
        (session_id,),
    ):
        try:
            apply_correction(mem, mem.store.get(eid), at=said)
        except NotFound:
            continue


def facts(mem: "Memory", done: AfterCapture) -> None:
    """Decisions, preferences, constraints and dependencies stated in the captured turns, as bi-temporal facts."""
    from tempera.facts.turnfacts import process_capture_facts

    process_capture_facts(mem, done.transcript.session_turns(), done.episodes)


def code_symbols(mem: "Memory", done: AfterCapture) -> None:
    """The project's symbol index brought up to its checkout's work tree (`core/symbols.py`: only the files changed
    since the last build are parsed), here in the background after a turn changed it, so the prompt path only
    reads it. A session whose checkout is not on this machine (an import from elsewhere) has none to read. Nothing
    is built while retrieval does not read it (`retrieval.hybrid_code_weight` 0, the default): the next capture after
    it is turned on builds it (about a second for a repository of a thousand files)."""
    from tempera.core.symbols import refresh

    if mem.current_config().retrieval.hybrid_code_weight <= 0:
        return
    root = next((r for r in done.transcript.roots if os.path.isdir(r)), None)
    if root is not None:
        refresh(mem.db, done.episodes[0].project_id, root)


def ordered(steps: Iterable[Step]) -> tuple[Step, ...]:
    """The steps as given, once each is checked to come after every step it names in `after` (and, when it runs
    without a transcript, to name none that needs one)."""
    out: dict[str, Step] = {}
    for step in steps:
        if step.name in out:
            raise ValueError(f"step {step.name!r} is listed twice")
        missing = [name for name in step.after if name not in out]
        if missing:
            raise ValueError(f"step {step.name!r} runs before {', '.join(missing)}, whose rows it reads")
        if not step.transcript and any(out[name].transcript for name in step.after):
            raise ValueError(f"step {step.name!r} runs without a transcript but reads a step that needs one")
        out[step.name] = step
    return tuple(out.values())


STEPS = ordered(
    [
        Step("self_improve", self_improve),
        Step("learn", learn),
        Step("outcome_links", outcome_links, transcript=True),
        Step("correction_verdicts", correction_verdicts, after=("self_improve", "learn"), transcript=True),
        Step("facts", facts, transcript=True),
        Step("code_symbols", code_symbols, transcript=True),
    ]
)


def run_steps(mem: "Memory", done: AfterCapture) -> AfterCapture:
    """Every step, in order; those that read a transcript only when there is one."""
    for step in STEPS:
        if done.capture is not None or not step.transcript:
            step.run(mem, done)
    return done


def learn_from_episodes(mem: "Memory", episodes: list["Episode"]) -> AfterCapture:
    """The steps after an explicit capture (episodes given as fields, no transcript): calibration and ask-backs,
    links, temporal credit and implicit feedback."""
    return run_steps(mem, AfterCapture(episodes))


def capture_and_learn(mem: "Memory", path: Path, **options: Unpack[CaptureOptions]) -> CaptureResult:
    """Capture what is new in one transcript, then run every step after capture (none on a dry run)."""
    return store_and_learn(mem, prepare_capture(mem, path, **options))


def store_and_learn(mem: "Memory", prepared: PreparedCapture) -> CaptureResult:
    """The second half of `capture_and_learn`: store a prepared capture, then run every step after capture. An
    import prepares the next transcript before it calls this for the last one, so that the vectors of one are
    made while the other is read."""
    with memo(prepared.redactions):
        result = store_capture(mem, prepared)
        if not result.dry_run and result.learning:
            run_steps(mem, AfterCapture(result.learning, result))
            mark_learned(mem.db, [ep.id for ep in result.learning])
    return result
