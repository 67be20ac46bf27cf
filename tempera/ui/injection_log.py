"""The hooks' injection log read back per prompt: what was injected, with which scores, and whether it was used."""

from __future__ import annotations

import json
from typing import Any

from tempera.core.db import Database


def prompts(
    db: Database, *, project_id: str | None = None, session_id: str | None = None, limit: int = 80
) -> list[dict[str, Any]]:
    """Newest first; one entry per hook event (session, event, time), its injected episodes in rank order."""
    where, params = [], []
    if project_id:
        where.append("i.project_id = ?")
        params.append(project_id)
    if session_id:
        where.append("i.session_id = ?")
        params.append(session_id)
    clause = ("WHERE " + " AND ".join(where)) if where else ""
    rows = db.query(
        "SELECT i.session_id, i.event, i.created_at, i.prompt, i.episode_id, i.rank, i.scores, i.used, "
        "i.evaluated_at, e.summary, p.name FROM injections i LEFT JOIN episodes e ON e.id = i.episode_id "
        "LEFT JOIN projects p ON p.id = i.project_id "
        f"{clause} ORDER BY i.created_at DESC, i.session_id, i.rank LIMIT ?",
        (*params, limit * 10),
    )
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for sid, event, created, prompt, eid, rank, scores, used, evaluated, summary, project in rows:
        key = (sid, event, created)
        if key not in groups:
            if len(groups) >= limit:
                break
            groups[key] = {
                "session_id": sid,
                "event": event,
                "created_at": created,
                "prompt": prompt,
                "project": project,
                "items": [],
            }
        groups[key]["items"].append(
            {
                "episode_id": eid,
                "rank": rank,
                "summary": summary,
                "scores": json.loads(scores or "{}"),
                "used": used,
                "evaluated_at": evaluated,
            }
        )
    return list(groups.values())
