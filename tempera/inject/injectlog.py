"""The per-session log of what was injected: no episode twice while the session's context holds it (a compaction
empties it), and the record implicit feedback reads later; beside it the facts each prompt was shown
(`fact_injections`), which the browser shows with the episodes and which keeps a fact found by words alone from
being shown on most of a project's prompts. The caller passes an autocommit connection."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from tempera.inject.hits import InjectHit

PROMPT_KEEP_CHARS = 500
RECENT_PROMPTS = 50  # the project's prompts a fact's share is counted over
MAX_FACT_SHARE = 0.2  # a fact found by words alone is held back while shown on this share of them or more


# The `session_context` row that says when the session's context was last emptied (a compaction, /clear): what was
# injected before it is no longer in the agent's context. The rows of what was shown stay (implicit feedback reads
# them); the session's "shown" is what was logged since.
EMPTIED_KEY = "session:context-emptied"
SINCE_EMPTIED = (
    "created_at >= COALESCE((SELECT created_at FROM session_context WHERE session_id = ? AND key = "
    f"'{EMPTIED_KEY}'), '')"
)


def context_emptied(conn: Any, session_id: str) -> None:
    """From now on, nothing injected into this session so far is in its context (inject/sessionstart.py)."""
    if not session_id:
        return
    conn.execute(
        "INSERT INTO session_context(session_id, key, event, created_at) VALUES (?, ?, 'SessionStart', ?) "
        "ON CONFLICT(session_id, key) DO UPDATE SET created_at = excluded.created_at",
        (session_id, EMPTIED_KEY, datetime.now(timezone.utc).isoformat()),
    )


def injected_ids(conn: Any, session_id: str) -> set[str]:
    """The episodes the session's context holds: those injected since it was last emptied."""
    if not session_id:
        return set()
    rows = conn.execute(
        f"SELECT episode_id FROM injections WHERE session_id = ? AND {SINCE_EMPTIED}", (session_id,) * 2
    )
    return {r[0] for r in rows}


def worn_facts(conn: Any, project_id: str) -> set[str]:
    """The fact lines shown on MAX_FACT_SHARE or more of the project's recent prompts, this one counted (so one
    shown on the first prompt waits for the fifth): one indexed read of the last RECENT_PROMPTS rows."""
    recent = "SELECT lines FROM fact_injections WHERE project_id = ? ORDER BY id DESC LIMIT ?"
    (prompts,) = conn.execute(f"SELECT COUNT(*) FROM ({recent})", (project_id, RECENT_PROMPTS)).fetchone()
    shown = conn.execute(
        f"SELECT j.value, COUNT(*) FROM ({recent}) r, json_each(r.lines) j GROUP BY j.value",
        (project_id, RECENT_PROMPTS),
    )
    return {line for line, n in shown if n >= MAX_FACT_SHARE * (prompts + 1)}


def record(
    conn: Any,
    *,
    session_id: str,
    project_id: str,
    event: str,
    prompt: str | None,
    hits: list[InjectHit],
    facts: list[str] | None = None,
) -> None:
    """One row per injected episode, with the scores that put it there; with `facts` (the facts channel answered
    this prompt), one row with the fact lines shown, [] included, at the same time as the episodes'."""
    if not hits and facts is None:
        return
    from tempera.core.redact import redact

    now = datetime.now(timezone.utc).isoformat()
    sid = session_id or "-"
    kept = redact(prompt[:PROMPT_KEEP_CHARS]) if prompt else None
    conn.execute("BEGIN IMMEDIATE")
    try:
        for rank, h in enumerate(hits, 1):
            conn.execute(
                "INSERT INTO injections(session_id, project_id, event, prompt, episode_id, rank, scores, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (sid, project_id, event, kept, h.id, rank, json.dumps(h.scores()), now),
            )
            conn.execute("UPDATE episodes SET retrieval_count = retrieval_count + 1 WHERE id = ?", (h.id,))
        if facts is not None:
            conn.execute(
                "INSERT INTO fact_injections(session_id, project_id, event, prompt, lines, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (sid, project_id, event, kept if facts else None, json.dumps(facts), now),
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
