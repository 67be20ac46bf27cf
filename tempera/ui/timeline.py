"""Projects and their sessions over time: what the timeline page and its chart show."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from tempera.core import pause as pausing
from tempera.core.db import Database

NO_SESSION = "(no session)"


def projects(db: Database) -> list[dict[str, Any]]:
    """Every project with its episode and session counts, first and last activity, and whether it is paused;
    the most recently active first."""
    paused = pausing.paused_projects(db.path.parent)
    rows = db.query(
        "SELECT p.id, p.name, p.path, COUNT(e.id), COUNT(DISTINCT e.session_id), MIN(e.created_at), "
        "MAX(e.created_at) FROM projects p LEFT JOIN episodes e ON e.project_id = p.id "
        "GROUP BY p.id ORDER BY MAX(e.created_at) IS NULL, MAX(e.created_at) DESC, p.name"
    )
    return [
        {
            "id": r[0],
            "name": r[1],
            "path": r[2],
            "episodes": r[3],
            "sessions": r[4],
            "first": r[5],
            "last": r[6],
            "paused": paused.get(r[0]),
        }
        for r in rows
    ]


AUTHOR = "json_extract(data, '$.source.author')"
OWN = "me"  # the author filter's value for this machine's own episodes


def authors(db: Database, project_id: str) -> list[str]:
    """The teammates whose episodes of the project were pulled from the team database."""
    return [
        r[0]
        for r in db.query(
            f"SELECT DISTINCT {AUTHOR} FROM episodes WHERE project_id = ? AND {AUTHOR} IS NOT NULL ORDER BY 1",
            (project_id,),
        )
    ]


def sessions(db: Database, project_id: str, *, limit: int = 60, author: str | None = None) -> list[dict[str, Any]]:
    """The project's most recent sessions, newest first, each with its episodes in order (each with its
    teammate author, None for our own); `author` keeps one teammate's episodes, or ours with OWN."""
    where, params = "", []
    if author == OWN:
        where = f" AND {AUTHOR} IS NULL"
    elif author:
        where, params = f" AND {AUTHOR} = ?", [author]
    heads = db.query(
        "SELECT COALESCE(session_id, ?), MIN(created_at), MAX(created_at), COUNT(*) FROM episodes "
        f"WHERE project_id = ?{where} GROUP BY session_id ORDER BY MIN(created_at) DESC LIMIT ?",
        (NO_SESSION, project_id, *params, limit),
    )
    out = {
        sid: {"id": sid, "start": start, "end": end, "count": n, "outcomes": Counter(), "episodes": []}
        for sid, start, end, n in heads
    }
    for eid, created, summary, outcome, task, utility, sid, by in db.query(
        f"SELECT id, created_at, summary, outcome, task_type, utility, COALESCE(session_id, ?), {AUTHOR} "
        f"FROM episodes WHERE project_id = ? AND created_at >= ?{where} ORDER BY created_at",
        (NO_SESSION, project_id, min((h[1] for h in heads), default=""), *params),
    ):
        session = out.get(sid)
        if session is not None:
            session["outcomes"][outcome] += 1
            session["episodes"].append(
                {
                    "id": eid,
                    "created_at": created,
                    "summary": summary,
                    "outcome": outcome,
                    "task_type": task,
                    "utility": utility,
                    "author": by,
                }
            )
    return list(out.values())


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso).timestamp() * 1000)


def chart(session_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Floating bars, one per session from its first to its last episode (oldest at the top)."""
    ordered = list(reversed(session_rows[:30]))
    return {
        "labels": [s["id"][:8] for s in ordered],
        "spans": [[_ms(s["start"]), max(_ms(s["end"]), _ms(s["start"]) + 60_000)] for s in ordered],
        "counts": [s["count"] for s in ordered],
    }
