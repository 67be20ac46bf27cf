"""The per-session log of what was injected: no episode twice in a session, and the record implicit feedback
reads later. Standard library only (the cold path writes it too); the caller passes an autocommit connection."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from tempera.inject.hits import InjectHit

PROMPT_KEEP_CHARS = 500


def injected_ids(conn: Any, session_id: str) -> set[str]:
    if not session_id:
        return set()
    return {r[0] for r in conn.execute("SELECT episode_id FROM injections WHERE session_id = ?", (session_id,))}


def record(
    conn: Any, *, session_id: str, project_id: str, event: str, prompt: str | None, hits: list[InjectHit]
) -> None:
    """One row per injected episode, with the scores that put it there."""
    if not hits:
        return
    from tempera.core.redact import redact

    now = datetime.now(timezone.utc).isoformat()
    kept = redact(prompt[:PROMPT_KEEP_CHARS]) if prompt else None
    conn.execute("BEGIN IMMEDIATE")
    try:
        for rank, h in enumerate(hits, 1):
            conn.execute(
                "INSERT INTO injections(session_id, project_id, event, prompt, episode_id, rank, scores, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id or "-", project_id, event, kept, h.id, rank, json.dumps(h.scores()), now),
            )
            conn.execute("UPDATE episodes SET retrieval_count = retrieval_count + 1 WHERE id = ?", (h.id,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
