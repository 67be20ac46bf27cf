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
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from tempera.core.errors import InvalidInput, NotFound
from tempera.core.llm import LLM, Budget, llm_enabled
from tempera.core.models import Episode
from tempera.core.pause import paused_projects
from tempera.core.project import ProjectRef, find_root, within
from tempera.core.project_lineage import recorded
from tempera.core.redact import memo
from tempera.transcripts import cursor as cursors
from tempera.transcripts.belonging import rekeyed, session_project
from tempera.transcripts.draft import draft_episode
from tempera.transcripts.extract import refine
from tempera.transcripts.reader import Transcript, read_transcript
from tempera.transcripts.since import Since
from tempera.transcripts.turns import Turn, record_counts, segment_turns
from tempera.transcripts.units import work_units

if TYPE_CHECKING:
    import numpy as np

    from tempera.core.memory import Memory

log = logging.getLogger("tempera.transcripts")
PAUSED = "capture is paused for this project"  # what each capture path reports for a paused project's transcript
CHUNK = 32  # episodes per write transaction


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
    read_from: int = 0  # the byte the transcript was read from: where the last capture left it (`since.py`)
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
        do not read and segment the file again. They need the turns of the episodes learned from and the turn
        before the first of them; a capture that read from the middle has them unless an earlier capture was
        killed before its steps ran (its episodes may lie above): then the file is read whole."""
        if self.segmented and (not self.read_from or _reaches(self.segmented, self.learning)):
            return self.segmented
        return segment_turns(read_transcript(Path(self.path)))

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


def _reaches(turns: list[Turn], episodes: list[Episode]) -> bool:
    """Whether every episode's turn is among `turns`, below the first (which stands for the turn before)."""
    found = []
    for ep in episodes:
        sources = set(ep.source.record_uuids)
        found.append(next((t.index for t in turns if not sources.isdisjoint(t.record_uuids)), 0))
    return min(found, default=1) > 0


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
            and not t.same_work(cur.turn_signature)
        ),
        None,
    )
    return _Plan(new, grown)


def _cwds(transcript: Transcript) -> set[str]:
    """The working directories the session recorded (above where it was read from too)."""
    return {r.cwd for r in transcript.records if r.cwd} | set(transcript.since.cwds if transcript.since else ())


def checkout_roots(transcript: Transcript) -> list[str]:
    """The checkouts a session worked in, to make its paths relative: each working directory's git root when it
    exists here; else the shallowest of the directories it recorded (Claude Code starts at the checkout's root; a
    session that moves into a subfolder records deeper ones, a transcript from another machine keeps its paths)."""
    cwds = sorted(sorted(_cwds(transcript)), key=len)
    roots: list[str] = []
    for cwd in cwds:
        root = str(find_root(cwd)) if os.path.isdir(cwd) else cwd
        if not any(within(root, r) for r in roots):
            roots.append(root)
    return roots


def root_of(turn: Turn, roots: list[str], default: str | None) -> str | None:
    """The checkout (of `checkout_roots`) a turn worked in."""
    return next((r for r in roots if within(turn.cwd or "", r)), roots[0] if roots else default)


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


@dataclass
class PreparedCapture:
    """A transcript read, cut and drafted (`prepare_capture`), its vectors being made on the embedder's thread,
    waiting to be stored (`store_capture`). Nothing is written yet: an import prepares the next transcript while
    this one's vectors are made."""

    result: CaptureResult
    cursor: cursors.Cursor | None = None
    transcript: Transcript | None = None
    new: list[tuple[Turn, Episode]] = field(default_factory=list)
    grown: tuple[Turn, Episode] | None = None
    since: Since | None = None  # where the next capture starts reading, saved with the last of these episodes
    vectors: "Future[np.ndarray] | None" = None  # the new episodes', in order
    redactions: dict[str, Any] = field(default_factory=dict)  # the capture's `redact.memo`

    @property
    def storable(self) -> bool:
        """Whether storing has anything to do: not a paused project, not a dry run."""
        return self.cursor is not None


class CaptureOptions(TypedDict, total=False):
    project: str | None  # store under this project (path, name or id) instead of the session's checkout
    session_id: str | None  # instead of the transcript's own
    use_llm: bool | None  # refine the drafts with the LLM; None: as config.toml says
    dry_run: bool  # read, cut and draft; store nothing


def capture_transcript(mem: "Memory", path: Path, **options: Unpack[CaptureOptions]) -> CaptureResult:
    """Capture the turns of one transcript that are new (or grew) since this session's cursor; nothing when its
    project is paused (the one place every capture path decides it, once the project is known)."""
    return store_capture(mem, prepare_capture(mem, path, **options))


def prepare_capture(mem: "Memory", path: Path, **options: Unpack[CaptureOptions]) -> PreparedCapture:
    """The first half of `capture_transcript`: read, cut and draft what is new since the cursor, and start
    embedding it."""
    path = Path(path).expanduser()
    prepared = PreparedCapture(CaptureResult(path=str(path), session_id=None, project=None))
    with memo(prepared.redactions):
        _prepare(mem, path, prepared, **options)
    return prepared


def _prepare(
    mem: "Memory",
    path: Path,
    prepared: PreparedCapture,
    *,
    project: str | None = None,
    session_id: str | None = None,
    use_llm: bool | None = None,
    dry_run: bool = False,
) -> None:
    key = str(path.resolve())
    known = session_id or cursors.last_session(mem.db, key)
    transcript = read_transcript(path, cursors.load(mem.db, key, known).since if known else None)
    sid = session_id or transcript.session_id or path.stem
    if transcript.since is not None and sid != known:
        transcript = read_transcript(path)  # the cursor read from is not this session's
    above = transcript.since
    turns = segment_turns(transcript)
    units = work_units(turns, above.tasks if above else None)
    roots = checkout_roots(transcript)
    ref = session_project(mem, transcript, turns, key, sid, roots=roots, project=project, dry_run=dry_run).ref
    result = prepared.result = CaptureResult(
        path=key,
        session_id=sid,
        project=ref,
        turns=len(turns) + (above.turns if above else 0),
        units=len(units) + (above.units if above else 0),
        lines_read=transcript.lines_read,
        lines_skipped=transcript.lines_skipped,
        unknown_types=transcript.unknown_types,
        not_prompts=record_counts(transcript),
        bytes_read=transcript.bytes_read,
        read_from=above.offset if above else 0,
        dry_run=dry_run,
        segmented=turns,
    )
    if ref.id in paused_projects(mem.db.path.parent):  # "store nothing from here", a dry run included
        result.paused = True
        return
    cur = cursors.load(mem.db, key, sid)
    cur.since = above  # until the last episode is stored: a capture killed before reads from where this one did
    plan = _plan(units, cur)
    existing = _stored(mem, cur.episode_id) if plan.grown else None
    grown = plan.grown if existing else None
    result.roots = roots

    def draft(unit: Turn) -> Episode:
        return draft_episode(unit, ref, transcript_path=Path(key), session_id=sid, root=root_of(unit, roots, ref.path))

    drafts = [draft(t) for t in plan.new]
    regrown = draft(grown) if grown else None
    if dry_run:
        result.added, result.updated = drafts, [regrown] if regrown else []
        result.skipped = result.units - len(result.added) - len(result.updated)
        return
    llm = _llm(mem, use_llm)
    if llm is not None:
        budget = Budget(mem.config.capture.llm_max_usd)
        refined = refine(([regrown] if regrown else []) + drafts, llm, budget)
        regrown, drafts = (refined[0], refined[1:]) if regrown else (None, refined)
        result.llm_cost_usd = budget.spent
    prepared.cursor, prepared.transcript = cur, transcript
    prepared.new = list(zip(plan.new, drafts))
    prepared.grown = (grown, regrown) if grown and regrown else None
    prepared.since = _since_after(transcript, turns, units)
    if drafts and (embedder := mem.store.vectors.writable_embedder()) is not None:
        prepared.vectors = embedder.submit([ep.embed_text() for ep in drafts])


def _since_after(transcript: Transcript, turns: list[Turn], units: list[Turn]) -> Since | None:
    """Where the next capture starts reading: the prompt of the turn before the last (`since.py`), with what the
    session carried to it; None (read whole) when that prompt has no uuid to recognise it by."""
    above = transcript.since
    if not turns:
        return above
    n = max(0, len(turns) - 2)
    start = turns[n]
    prompt = start.records[0]
    if not prompt.uuid:
        return None
    owned = {run.agent_id for turn in turns[:n] for run in turn.subagents if run.agent_id}
    return Since(
        offset=prompt.offset,
        line=prompt.line,
        uuid=prompt.uuid,
        session_id=transcript.session_id,
        cwd=transcript.cwd,
        cwds=sorted(_cwds(transcript)),
        queued=start.queued_before,
        tasks=start.tasks_before,
        settled=(above.settled if above else []) + [str(s.path) for s in transcript.subagents if s.agent_id in owned],
        turns=n + (above.turns if above else 0),
        units=sum(1 for u in units if u.index < n) + (above.units if above else 0),
    )


def store_capture(mem: "Memory", prepared: PreparedCapture) -> CaptureResult:
    """The second half of `capture_transcript`: the prepared episodes and the cursor stored, once their vectors
    are made; `CaptureResult.learning` then holds what the steps after capture run on."""
    result = prepared.result
    if not prepared.storable:
        return result
    assert prepared.cursor is not None and result.project is not None  # storable: prepared to the end
    now = recorded(mem.db, prepared.cursor.transcript_path, prepared.cursor.session_id)
    if now is not None and now.ref.id != result.project.id:  # its project joined another while this waited
        result.project = now.ref
        prepared.new = list(zip([t for t, _ in prepared.new], rekeyed([ep for _, ep in prepared.new], now.ref)))
        if prepared.grown is not None:
            prepared.grown = (prepared.grown[0], rekeyed([prepared.grown[1]], now.ref)[0])
    if prepared.grown is not None:  # merged with the episode as stored now: the steps after an earlier capture
        turn, regrown = prepared.grown  # may have changed it since it was prepared
        existing = _stored(mem, prepared.cursor.episode_id)
        prepared.grown = (turn, _merge(existing, regrown)) if existing else None
    vectors = prepared.vectors.result() if prepared.vectors is not None else None
    _write(mem, result.project, prepared, vectors)
    result.skipped = result.units - len(result.added) - len(result.updated)
    result.learning = _unlearned(mem, prepared.cursor, result.updated + result.added)
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


def _write(mem: "Memory", ref: ProjectRef, prepared: PreparedCapture, vectors: "np.ndarray | None") -> None:
    """Store in chunks; each chunk and the cursor position it reaches commit together. If another process moved
    the cursor meanwhile, stop: what is left is theirs (the counts then show fewer added). `vectors` are the new
    episodes' (the grown one is embedded here: it was merged with its stored self only now)."""
    cur, result, new, grown = prepared.cursor, prepared.result, prepared.new, prepared.grown
    assert cur is not None and prepared.transcript is not None  # only a storable capture is written
    cur.lines_read = prepared.transcript.lines_read
    if grown is not None:
        turn, episode = grown
        with mem.db.transaction():
            if not _unmoved(mem, cur):
                return
            if not new:
                cur.since = prepared.since
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
            if start + CHUNK >= len(new):
                cur.since = prepared.since
            mem.store.add_many(
                [ep for _, ep in chunk], ref, vectors=None if vectors is None else vectors[start : start + CHUNK]
            )
            for turn, episode in chunk:
                _advance(cur, turn, episode)
            cursors.save(mem.db, cur)
            cursors.mark_unlearned(mem.db, cur, [ep.id for _, ep in chunk])
        result.added.extend(ep for _, ep in chunk)
    if not new and grown is None:
        with mem.db.transaction():
            if _unmoved(mem, cur):
                cur.since = prepared.since
                cursors.save(mem.db, cur)


def _advance(cur: cursors.Cursor, turn: Turn, episode: Episode) -> None:
    if turn.prompt_line > cur.turn_line:
        cur.turns_captured += 1
    cur.turn_uuid, cur.turn_line = turn.prompt_uuid, turn.prompt_line
    cur.turn_signature, cur.episode_id = turn.work_signature(), episode.id
