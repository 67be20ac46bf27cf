"""The controls the browser and the `tempera` CLI share: pause and resume, forgetting by what a person types,
and export with the fact graph. Both front ends call these, so a button and a command do exactly the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from tempera.core import export as exporting
from tempera.core import forget as forgetting
from tempera.core import pause as pausing
from tempera.core.models import ValidityScope
from tempera.core.project import ProjectRef

if TYPE_CHECKING:
    from tempera.core.memory import Memory
    from tempera.core.models import Episode


def selector(mem: "Memory", kind: str, value: str, project: str | None = None) -> forgetting.Selector:
    """A forget selector from what a person typed: an episode id prefix, a session id, a project path, name or id,
    a date (optionally with a project)."""
    if kind == "episode":
        return forgetting.Selector("episode", mem.store.resolve_id(value))
    if kind == "project":
        return forgetting.Selector("project", mem.store.resolve_project(value).id)
    if kind == "before":
        return forgetting.Selector("before", value, mem.store.resolve_project(project).id if project else None)
    return forgetting.Selector(kind, value.strip())


def set_scope(mem: "Memory", episode_id: str, text: str) -> "Episode":
    """Change an episode's validity scope (how fast it fades, whether other projects may see it). The episode is
    re-indexed, since the vector index filters other projects' episodes by that same flag."""
    ep = mem.store.get(episode_id)
    ep.intent = ep.intent.model_copy(update={"scope": ValidityScope.parse(text)})
    return mem.store.update(ep)


def pause_project(mem: "Memory", spec: str | None) -> tuple[ProjectRef, dict[str, Any]]:
    ref = mem.store.resolve_project(spec, create=True)
    return ref, pausing.pause(ref.id, ref.name, ref.path, mem.db.path.parent)


def resume_project(mem: "Memory", spec: str | None) -> tuple[ProjectRef, dict[str, Any] | None, int]:
    """Resume capture; the project's transcripts that moved during the pause are fast-forwarded first, so the
    turns made while paused are never captured later. Returns the project, its pause record and how many
    transcripts were fast-forwarded."""
    ref = mem.store.resolve_project(spec, create=True)
    record = pausing.paused_projects(mem.db.path.parent).get(ref.id)
    since = record.get("since") if record else None
    skipped = fast_forward(mem, ref, datetime.fromisoformat(since)) if since else 0
    pausing.resume(ref.id, mem.db.path.parent)
    return ref, record, skipped


def _candidates(mem: "Memory", since: datetime) -> list[tuple[Path, str | None]]:
    """Transcripts touched since the pause, each with the session id capture knows it by (None when capture has
    no cursor for it yet): those capture has seen, and the sessions in Claude Code's projects folder."""
    from tempera.transcripts.importer import claude_projects_dir, find_sessions

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
    from tempera.transcripts import cursor as cursors
    from tempera.transcripts.capture import transcript_project
    from tempera.transcripts.reader import read_transcript
    from tempera.transcripts.turns import segment_turns

    moved = 0
    for path, known_sid in _candidates(mem, since):
        transcript = read_transcript(path)
        turns = segment_turns(transcript)
        if not turns or transcript_project(mem, transcript, None).id != ref.id:
            continue
        sid = known_sid or transcript.session_id or path.stem
        cur = cursors.load(mem.db, str(path.resolve()), sid)
        last = turns[-1]
        if cur.turn_uuid != last.prompt_uuid:
            cur.episode_id = None
        cur.turn_uuid, cur.turn_line, cur.turn_signature = last.prompt_uuid, last.prompt_line, last.work_signature()
        cur.lines_read = transcript.lines_read
        with mem.db.transaction():
            cursors.save(mem.db, cur)
        moved += 1
    return moved


def fact_records(mem: "Memory") -> Iterator[dict[str, Any]]:
    """Every assertion and retraction of the fact graph, entity by entity, with valid and transaction time."""
    from tempera.facts import FactStore
    from tempera.facts.edn import to_edn
    from tempera.facts.values import decode_entity

    store = FactStore(mem.db)
    for (entity,) in mem.db.query("SELECT DISTINCT e FROM fact_datoms ORDER BY e"):
        history = store.history(decode_entity(entity))
        for row in history.rows:
            rec = dict(zip(history.columns, row))
            yield {"entity": entity, "op": rec["op"], "attribute": str.__str__(rec["attribute"]),
                   "value": to_edn(rec["value"]), "valid_from": rec["valid-from"], "valid_to": rec["valid-to"],
                   "tx": rec["tx"], "at": rec["at"], "reason": rec["reason"]}


def export(mem: "Memory", out: TextIO, fmt: str, *, project: str | None = None,
           facts: bool = True) -> exporting.ExportCounts:
    """Episodes (of one project, or all) and, unless `facts` is off or a project is named, the fact graph."""
    project_id = mem.store.resolve_project(project).id if project else None
    records = fact_records(mem) if facts and project_id is None else iter(())
    return exporting.export(out, fmt, exporting.episodes(mem.db, project_id), records)
