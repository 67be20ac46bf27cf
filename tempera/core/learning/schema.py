"""The learning loop's schema: episodes taken out of retrieval without being deleted, and how derived evidence is
found by what it was derived from."""

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


ORIGIN_INDEX = "feedback_origin"


def m069_evidence_origin(conn: Connection) -> None:
    """Derived evidence is replaced per origin (`evidence.replace_evidence`: each capture's temporal credit, each
    consolidation): without an index on the origin every replacement read every row of its source, so an import
    got slower with each session it had stored (2,170 temporal rows read per capture by the end of 86 sessions)."""
    conn.execute(f"CREATE INDEX {ORIGIN_INDEX} ON feedback_events(source, json_extract(evidence, '$.origin'))")
