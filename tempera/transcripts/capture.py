"""Capturing a transcript into memory: the work units (see `units.py`; a short turn is one unit) that are new since
the session's cursor become episodes, and the last captured unit, if the agent did more in it since, has its
episode updated. Episodes and the cursor are written in one transaction per chunk, so a crash never double-captures
and a re-run adds nothing; the same transaction marks the episodes as waiting for the steps after capture, and
`CaptureResult.learning` holds every episode of the transcript so marked (a crashed capture's too).

Units with no agent work yet (a prompt just sent, or one the user interrupted at once) are captured too, with
outcome `unknown`: when the agent's work arrives, the same episode is updated (the "grown turn" rule).
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tempera.core.errors import InvalidInput, NotFound
from tempera.core.llm import LLM, Budget, llm_enabled
from tempera.core.models import Episode
from tempera.core.pause import paused_projects
from tempera.core.project import ProjectRef, find_root, project_for_name, project_for_path
from tempera.transcripts import cursor as cursors
from tempera.transcripts.draft import draft_episode
from tempera.transcripts.extract import refine
from tempera.transcripts.reader import Transcript, read_transcript
from tempera.transcripts.turns import Turn, record_counts, segment_turns
from tempera.transcripts.units import work_units

if TYPE_CHECKING:
    from tempera.core.memory import Memory

log = logging.getLogger("tempera.transcripts")
PAUSED = "capture is paused for this project"  # what each capture path reports for a paused project's transcript
CHUNK = 32  # episodes per write transaction (embedding happens inside it, so keep it short)


@dataclass
class CaptureResult:
    path: str
    session_id: str | None
    project: ProjectRef | None
    turns: int = 0  # request turns in the transcript
    units: int = 0  # work units they were cut into (what episodes are made of)
    added: list[Episode] = field(default_factory=list)
    updated: list[Episode] = field(default_factory=list)
    skipped: int = 0  # units that changed nothing: captured before and unchanged (or taken by a parallel capture)
    lines_read: int = 0
    lines_skipped: int = 0  # lines the reader skipped (broken, too deep, too large)
    unknown_types: Counter[str] = field(default_factory=Counter)
    not_prompts: Counter[str] = field(default_factory=Counter)  # records read that were no prompt, by reason
    bytes_read: int = 0
    roots: list[str] = field(default_factory=list)  # the checkouts the session worked in (`checkout_roots`)
    llm_cost_usd: float = 0.0
    dry_run: bool = False
    paused: bool = False  # the project is paused (`tempera pause`): nothing was captured, the cursor did not move
    segmented: list[Turn] = field(default_factory=list, repr=False)  # every turn of the transcript as read
    # what the steps after capture run on: the added and updated episodes, and any an earlier capture of this
    # transcript stored but did not finish learning from (it was killed); in the order stored
    learning: list[Episode] = field(default_factory=list, repr=False)

    def session_turns(self) -> list[Turn]:
        """The transcript's turns as this capture read them, so the steps after capture (self-improvement, facts)
        do not read and segment the file again."""
        return self.segmented or segment_turns(read_transcript(Path(self.path)))

    def counts(self) -> dict[str, object]:
        return {
            "path": self.path,
            "session_id": self.session_id,
            "project": self.project.name if self.project else None,
            "turns": self.turns,
            "units": self.units,
            "added": len(self.added),
            "updated": len(self.updated),
            "skipped": self.skipped,
            "lines_read": self.lines_read,
            "lines_skipped": self.lines_skipped,
            "unknown_types": dict(self.unknown_types),
            "not_prompts": dict(self.not_prompts),
            "bytes": self.bytes_read,
            "llm_cost_usd": round(self.llm_cost_usd, 6),
            "paused": self.paused,
        }


@dataclass
class _Plan:
    new: list[Turn]
    grown: Turn | None


def _plan(turns: list[Turn], cur: cursors.Cursor) -> _Plan:
    new = [t for t in turns if t.prompt_line > cur.turn_line]
    grown = next(
        (
            t
            for t in turns
            if cur.turn_uuid
            and t.prompt_uuid == cur.turn_uuid
            and t.prompt_line == cur.turn_line
            and t.work_signature() != cur.turn_signature
        ),
        None,
    )
    return _Plan(new, grown)


def checkout_roots(transcript: Transcript) -> list[str]:
    """The checkouts a session worked in, to make its paths relative: each working directory's git root when it
    exists here; else the shallowest of the directories it recorded (Claude Code starts at the checkout's root; a
    session that moves into a subfolder records deeper ones, a transcript from another machine keeps its paths)."""
    cwds = sorted({r.cwd for r in transcript.records if r.cwd}, key=len)
    roots: list[str] = []
    for cwd in cwds:
        root = str(find_root(cwd)) if os.path.isdir(cwd) else cwd
        if not any(_within(root, r) for r in roots):
            roots.append(root)
    return roots


def root_of(turn: Turn, roots: list[str], default: str | None) -> str | None:
    """The checkout (of `checkout_roots`) a turn worked in."""
    return next((r for r in roots if _within(turn.cwd or "", r)), roots[0] if roots else default)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def transcript_project(mem: "Memory", transcript: Transcript, project: str | None) -> ProjectRef:
    """The --project override, else the session's working directory (its git root when it exists here)."""
    if project:
        return mem.store.resolve_project(project, create=True)
    if transcript.cwd:
        return project_for_path(transcript.cwd)
    return project_for_name(transcript.path.parent.name or "transcripts")


def _merge(existing: Episode, draft: Episode) -> Episode:
    """A re-drafted grown turn keeps the stored episode's identity, learning state and any LLM fields."""
    intent = draft.intent
    if intent.claim is None and existing.intent.claim is not None:
        intent = intent.model_copy(
            update={
                k: getattr(existing.intent, k) for k in ("extracted", "claim", "falsifiability", "category", "scope")
            }
        )
    return draft.model_copy(
        update={
            "id": existing.id,
            "created_at": existing.created_at,
            "utility": existing.utility,
            "intent": intent,
            "tags": list(dict.fromkeys(existing.tags + draft.tags)),
            "related": existing.related,
            "alternatives_considered": existing.alternatives_considered,
            "outcome": draft.outcome.model_copy(
                update={
                    "verification": max(existing.outcome.verification, draft.outcome.verification, key=lambda v: v.rank)
                }
            ),
        }
    )


def _llm(mem: "Memory", use_llm: bool | None) -> LLM | None:
    cfg = mem.config
    if use_llm is False or (use_llm is None and not (llm_enabled(cfg) and cfg.capture.extract_intent_llm)):
        return None
    if not llm_enabled(cfg) and use_llm:
        raise InvalidInput("LLM extraction needs llm.enabled = true and ANTHROPIC_API_KEY")
    return LLM(cfg.llm)


def capture_transcript(
    mem: "Memory",
    path: Path,
    *,
    project: str | None = None,
    session_id: str | None = None,
    use_llm: bool | None = None,
    dry_run: bool = False,
) -> CaptureResult:
    """Capture the turns of one transcript that are new (or grew) since this session's cursor; nothing when its
    project is paused (the one place every capture path decides it, once the project is known)."""
    path = Path(path).expanduser()
    transcript = read_transcript(path)
    turns = segment_turns(transcript)
    units = work_units(turns)
    sid = session_id or transcript.session_id or path.stem
    ref = transcript_project(mem, transcript, project)
    key = str(path.resolve())
    result = CaptureResult(
        path=key,
        session_id=sid,
        project=ref,
        turns=len(turns),
        units=len(units),
        lines_read=transcript.lines_read,
        lines_skipped=transcript.lines_skipped,
        unknown_types=transcript.unknown_types,
        not_prompts=record_counts(transcript),
        bytes_read=transcript.bytes_read,
        dry_run=dry_run,
        segmented=turns,
    )
    if ref.id in paused_projects(mem.db.path.parent):  # "store nothing from here", a dry run included
        result.paused = True
        return result
    cur = cursors.load(mem.db, key, sid)
    plan = _plan(units, cur)
    existing = _stored(mem, cur.episode_id) if plan.grown else None
    grown = plan.grown if existing else None
    roots = result.roots = checkout_roots(transcript)

    def draft(unit: Turn) -> Episode:
        return draft_episode(unit, ref, transcript_path=Path(key), session_id=sid, root=root_of(unit, roots, ref.path))

    drafts = [draft(t) for t in plan.new]
    regrown = draft(grown) if grown else None
    if dry_run:
        result.added, result.updated = drafts, [regrown] if regrown else []
        result.skipped = result.units - len(result.added) - len(result.updated)
        return result
    llm = _llm(mem, use_llm)
    if llm is not None:
        budget = Budget(mem.config.capture.llm_max_usd)
        refined = refine(([regrown] if regrown else []) + drafts, llm, budget)
        regrown, drafts = (refined[0], refined[1:]) if regrown else (None, refined)
        result.llm_cost_usd = budget.spent
    if regrown is not None and existing is not None:
        regrown = _merge(existing, regrown)
    _write(mem, ref, cur, transcript, list(zip(plan.new, drafts)), (grown, regrown) if grown else None, result)
    result.skipped = result.units - len(result.added) - len(result.updated)
    result.learning = _unlearned(mem, cur, result.updated + result.added)
    return result


def _unlearned(mem: "Memory", cur: cursors.Cursor, fresh: list[Episode]) -> list[Episode]:
    by_id = {ep.id: ep for ep in fresh}
    out = []
    for eid in cursors.unlearned(mem.db, cur.transcript_path, cur.session_id):
        episode = by_id.get(eid) or _stored(mem, eid)
        if episode is not None:
            out.append(episode)
    return out


def _stored(mem: "Memory", episode_id: str | None) -> Episode | None:
    if not episode_id:
        return None
    try:
        return mem.store.get(episode_id)
    except NotFound:
        return None  # deleted since: the grown turn is not re-created


def _unmoved(mem: "Memory", cur: cursors.Cursor) -> bool:
    """Inside a write transaction: nobody else (the daemon, a parallel import) captured since we read the cursor."""
    stored = cursors.load(mem.db, cur.transcript_path, cur.session_id)
    return (stored.turn_line, stored.turn_signature) == (cur.turn_line, cur.turn_signature)


def _write(
    mem: "Memory",
    ref: ProjectRef,
    cur: cursors.Cursor,
    transcript: Transcript,
    new: list[tuple[Turn, Episode]],
    grown: tuple[Turn, Episode] | None,
    result: CaptureResult,
) -> None:
    """Store in chunks; each chunk and the cursor position it reaches commit together. If another process moved
    the cursor meanwhile, stop: what is left is theirs (the counts then show fewer added)."""
    cur.lines_read = transcript.lines_read
    if grown is not None:
        turn, episode = grown
        with mem.db.transaction():
            if not _unmoved(mem, cur):
                return
            mem.store.update(episode)
            _advance(cur, turn, episode)
            cursors.save(mem.db, cur)
            cursors.mark_unlearned(mem.db, cur, [episode.id])
        result.updated.append(episode)
    for start in range(0, len(new), CHUNK):
        chunk = new[start : start + CHUNK]
        with mem.db.transaction():
            if not _unmoved(mem, cur):
                return
            mem.store.add_many([ep for _, ep in chunk], ref)
            for turn, episode in chunk:
                _advance(cur, turn, episode)
            cursors.save(mem.db, cur)
            cursors.mark_unlearned(mem.db, cur, [ep.id for _, ep in chunk])
        result.added.extend(ep for _, ep in chunk)
    if not new and grown is None:
        with mem.db.transaction():
            cursors.save(mem.db, cur)


def _advance(cur: cursors.Cursor, turn: Turn, episode: Episode) -> None:
    if turn.prompt_line > cur.turn_line:
        cur.turns_captured += 1
    cur.turn_uuid, cur.turn_line = turn.prompt_uuid, turn.prompt_line
    cur.turn_signature, cur.episode_id = turn.work_signature(), episode.id
