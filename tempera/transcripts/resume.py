"""Resuming a paused project's capture: the transcripts that moved during the pause are fast-forwarded first, so
the turns made while paused are never captured later. The CLI (`tempera resume`) and the browser both call this."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempera.core import pause as pausing
from tempera.core.db import apply_migrations
from tempera.core.errors import NotFound
from tempera.core.project import ProjectRef
from tempera.transcripts import cursor as cursors
from tempera.transcripts.schema import MIGRATIONS

if TYPE_CHECKING:
    from tempera.core.memory import Memory


def resume_project(mem: "Memory", spec: str | None) -> tuple[ProjectRef, dict[str, Any] | None, int]:
    """Resume capture; returns the project, its pause record and how many transcripts were fast-forwarded. A name
    that is neither a project in memory nor a paused one is refused (NotFound), as `pause` refuses it."""
    try:
        ref = mem.store.projects.resolve(spec)
    except NotFound:
        paused = pausing.paused_by_spec(spec or "", mem.db.path.parent)
        if paused is None:
            raise
        ref = paused
    record = pausing.paused_projects(mem.db.path.parent).get(ref.id)
    since = record.get("since") if record else None
    skipped = fast_forward(mem, ref, datetime.fromisoformat(since)) if since else 0
    pausing.resume(ref.id, mem.db.path.parent)
    return ref, record, skipped


def _candidates(mem: "Memory", since: datetime) -> list[tuple[Path, str | None]]:
    """Transcripts touched since the pause, each with the session id capture knows it by (None when capture has
    no cursor for it yet): those capture has seen, and the sessions in Claude Code's projects folder."""
    from tempera.transcripts.importer import claude_projects_dir, find_sessions

    apply_migrations(mem.db, MIGRATIONS)
    known = [(Path(p), s) for p, s in mem.db.query("SELECT transcript_path, session_id FROM transcript_cursors")]
    found = {p.resolve() for p, _ in known}
    fresh = [(p, None) for p in find_sessions([claude_projects_dir()]) if p.resolve() not in found]
    out = []
    for path, sid in known + fresh:
        try:
            if datetime.fromtimestamp(path.stat().st_mtime).astimezone() >= since:
                out.append((path, sid))
        except OSError:
            continue
    return out


def fast_forward(mem: "Memory", ref: ProjectRef, since: datetime) -> int:
    """Move the capture cursor of each of the project's transcripts touched since `since` to its last turn,
    without capturing anything; returns how many cursors moved."""
    from tempera.transcripts.belonging import session_project
    from tempera.transcripts.capture import checkout_roots
    from tempera.transcripts.reader import read_transcript
    from tempera.transcripts.turns import segment_turns

    moved = 0
    for path, known_sid in _candidates(mem, since):
        transcript = read_transcript(path)
        turns = segment_turns(transcript)
        sid = known_sid or transcript.session_id or path.stem
        key = str(path.resolve())
        roots = checkout_roots(transcript)
        if not turns or session_project(mem, transcript, turns, key, sid, roots=roots, dry_run=True).ref.id != ref.id:
            continue
        cur = cursors.load(mem.db, key, sid)
        last = turns[-1]
        if cur.turn_uuid != last.prompt_uuid:
            cur.episode_id = None
        cur.turn_uuid, cur.turn_line, cur.turn_signature = last.prompt_uuid, last.prompt_line, last.work_signature()
        cur.lines_read = transcript.lines_read
        with mem.db.transaction():
            cursors.save(mem.db, cur)
        moved += 1
    return moved
