"""The retrieval log: which episodes a search returned, to whom, for which query (table `retrievals`)."""

from __future__ import annotations

from collections.abc import Sequence

from tempera.core.db import Database
from tempera.core.models import iso_utc
from tempera.core.redact import redact


def record(
    db: Database, episode_ids: Sequence[str], *, query: str | None, via: str, session_id: str | None = None
) -> None:
    """Count retrievals (shown in stats); this is deliberately not evidence for utility. The query is stored
    redacted (an MCP or CLI query is whatever the agent or user typed), redacted before it is clipped."""
    if not episode_ids:
        return
    query = redact(query or "")[:500]
    now = iso_utc()
    with db.transaction():
        for eid in episode_ids:
            db.execute(
                "INSERT INTO retrievals(episode_id, query, via, session_id, created_at) VALUES (?, ?, ?, ?, ?)",
                (eid, query, via, session_id, now),
            )
            db.execute("UPDATE episodes SET retrieval_count = retrieval_count + 1 WHERE id = ?", (eid,))
