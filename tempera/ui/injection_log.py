"""The hooks' injection log read back per prompt: what was injected, with which scores, and whether it was used;
the facts a prompt was shown (`fact_injections`) beside its episodes."""

from __future__ import annotations

import json
from typing import Any

from tempera.core.db import Database


def _filter(alias: str, project_id: str | None, session_id: str | None) -> tuple[list[str], list[str]]:
    where, params = [], []
    if project_id:
        where.append(f"{alias}.project_id = ?")
        params.append(project_id)
    if session_id:
        where.append(f"{alias}.session_id = ?")
        params.append(session_id)
    return where, params


def prompts(
    db: Database, *, project_id: str | None = None, session_id: str | None = None, limit: int = 80
) -> list[dict[str, Any]]:
    """Newest first; one entry per hook event (session, event, time), its injected episodes in rank order and the
    fact lines it was shown."""
    where, params = _filter("i", project_id, session_id)
    clause = ("WHERE " + " AND ".join(where)) if where else ""
    rows = db.query(
        "SELECT i.session_id, i.event, i.created_at, i.prompt, i.episode_id, i.rank, i.scores, i.used, "
        "i.evaluated_at, e.summary, p.name FROM injections i LEFT JOIN episodes e ON e.id = i.episode_id "
        "LEFT JOIN projects p ON p.id = i.project_id "
        f"{clause} ORDER BY i.created_at DESC, i.session_id, i.rank LIMIT ?",
        (*params, limit * 10),
    )
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}

    def group(sid: str, event: str, created: str, prompt: str | None, project: str | None) -> dict[str, Any]:
        key = (sid, event, created)
        if key not in groups:
            groups[key] = {
                "session_id": sid,
                "event": event,
                "created_at": created,
                "prompt": prompt,
                "project": project,
                "items": [],
                "facts": [],
            }
        return groups[key]

    for sid, event, created, prompt, eid, rank, scores, used, evaluated, summary, project in rows:
        if (sid, event, created) not in groups and len(groups) >= limit:
            break
        group(sid, event, created, prompt, project)["items"].append(
            {
                "episode_id": eid,
                "rank": rank,
                "summary": summary,
                "scores": json.loads(scores or "{}"),
                "used": used,
                "evaluated_at": evaluated,
            }
        )
    where, params = _filter("f", project_id, session_id)
    where.append("f.lines != '[]'")
    shown = db.query(
        "SELECT f.session_id, f.event, f.created_at, f.prompt, f.lines, p.name FROM fact_injections f "
        f"LEFT JOIN projects p ON p.id = f.project_id WHERE {' AND '.join(where)} "
        "ORDER BY f.created_at DESC LIMIT ?",
        (*params, limit),
    )
    for sid, event, created, prompt, lines, project in shown:
        group(sid, event, created, prompt, project)["facts"] = json.loads(lines)
    return sorted(groups.values(), key=lambda g: g["created_at"], reverse=True)[:limit]
