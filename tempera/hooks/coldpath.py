"""Answers without the daemon: keyword-only retrieval and the durable enqueue, with the stdlib sqlite3.

The stdlib driver may be unable to load sqlite-vec, so this path never touches the vector table; FTS5 is built
into the SQLite of every mainstream Python. Anything missing (no database yet, no FTS5) means "inject nothing".
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tempera.core import defaults, jobs, textsearch
from tempera.core.project import ProjectRef
from tempera.hooks.render import relative_to

VERIFICATION_WEIGHTS = defaults.VERIFICATION_WEIGHTS
_WEIGHT_SQL = "CASE e.verification " + " ".join(f"WHEN '{k}' THEN {v}" for k, v in VERIFICATION_WEIGHTS.items()) + \
    f" ELSE {VERIFICATION_WEIGHTS['untested']} END"


def open_db(path: Path) -> sqlite3.Connection | None:
    if not path.exists():
        return None
    conn = sqlite3.connect(str(path), timeout=5.0, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def _row_to_hit(row: tuple[Any, ...], project: ProjectRef, extra: dict[str, Any]) -> dict[str, Any]:
    eid, created, outcome, verification, summary, utility, data, project_id, project_name = row[:9]
    try:
        doc = json.loads(data)
        files = [relative_to(f, doc.get("project_path")) for f in doc.get("context", {}).get("files_modified", [])]
    except (ValueError, AttributeError, TypeError):
        files = []
    return {"id": eid, "created_at": created, "outcome": outcome, "verification": verification, "summary": summary,
            "utility": utility, "files": files,
            "project_note": f"from project {project_name}" if project_id != project.id else "", **extra}


COLUMNS = ("e.id, e.created_at, e.outcome, e.verification, e.summary, e.utility, e.data, e.project_id, "
           "(SELECT name FROM projects p WHERE p.id = e.project_id)")


def keyword_hits(conn: sqlite3.Connection, prompt: str, project: ProjectRef, *, exclude: set[str], limit: int,
                 min_hits: int) -> list[dict[str, Any]]:
    """Episodes of this project (or transferable ones) sharing at least `min_hits` distinct terms with the prompt."""
    terms = textsearch.query_terms(prompt)
    match = textsearch.fts_query(terms, project.id, transferable=True)
    if match is None or limit <= 0:
        return []
    try:
        rows = conn.execute(
            f"SELECT {COLUMNS}, -bm25(episodes_fts), f.body FROM episodes_fts f CROSS JOIN episodes e ON e.rowid = f.rowid "
            "WHERE episodes_fts MATCH ? ORDER BY bm25(episodes_fts) LIMIT 30", (match,)).fetchall()
    except sqlite3.OperationalError:  # no FTS5 in this SQLite, or no schema yet
        return []
    need = min(min_hits, len(terms))
    hits = []
    for row in rows:
        if row[0] in exclude:
            continue
        matched = textsearch.matched(terms, row[10])
        if matched < need:
            continue
        weight = VERIFICATION_WEIGHTS.get(row[3], 0.3)
        hits.append(_row_to_hit(row, project, {"bm25": round(row[9], 4), "matched_terms": matched,
                                               "score": round(row[9] * (0.85 + 0.15 * row[5] * weight), 4)}))
    hits.sort(key=lambda h: -h["score"])
    return hits[:limit]


def useful_recent(conn: sqlite3.Connection, project: ProjectRef, *, exclude: set[str], limit: int
                  ) -> list[dict[str, Any]]:
    """The project's most useful recent successes (SessionStart), by utility x verification, then recency."""
    if limit <= 0:
        return []
    try:
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM episodes e WHERE e.project_id = ? AND e.outcome IN ('success', 'partial') "
            "AND e.id NOT IN (SELECT episode_id FROM episode_retirements) "
            f"ORDER BY e.utility * ({_WEIGHT_SQL}) DESC, e.created_at DESC LIMIT ?",
            (project.id, limit + len(exclude))).fetchall()
    except sqlite3.OperationalError:
        return []
    return [_row_to_hit(r, project, {"score": round(r[5], 4)}) for r in rows if r[0] not in exclude][:limit]


def enqueue_capture(conn: sqlite3.Connection, *, session_id: str, transcript_path: str, cwd: str,
                    last_assistant_message: str) -> bool:
    payload = {"session_id": session_id, "transcript_path": transcript_path, "cwd": cwd,
               "last_assistant_message": last_assistant_message[:2000]}
    return jobs.enqueue(conn, "capture", payload, dedupe_key=f"capture:{transcript_path}")
