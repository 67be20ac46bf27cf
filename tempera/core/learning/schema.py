"""The learning loop's schema: episodes taken out of retrieval without being deleted."""

from __future__ import annotations

from tempera.core.db import Connection, run_script


def m020_learning(conn: Connection) -> None:
    """`episode_retirements` marks an episode that consolidation absorbed or decay cut (expired workaround): its
    row and evidence stay, only its FTS text and vector are removed; the index on `source` keeps the per-run
    replacement of derived evidence (propagation, temporal, chain) cheap."""
    run_script(
        conn,
        """
    CREATE TABLE episode_retirements (
        episode_id TEXT PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
        reason TEXT NOT NULL CHECK (reason IN ('consolidated', 'expired')),
        into_id TEXT REFERENCES episodes(id) ON DELETE SET NULL,
        detail TEXT NOT NULL DEFAULT '{}',
        retired_at TEXT NOT NULL
    );
    CREATE INDEX feedback_source ON feedback_events(source);
    """,
    )
