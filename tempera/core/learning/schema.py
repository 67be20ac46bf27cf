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


def m070_outcome_links(conn: Connection) -> None:
    """`outcome_links`: an earlier episode that changed a file a later session's turns changed, with the terms of
    the prompt that led there (`core/learning/outcomes.py`). Read per candidate at retrieval, hence the index on
    `episode_id`; written per session, hence the one on `session_id`. `src_id` is the later episode holding the
    prompt, so forgetting either episode (or the session) forgets the link and its prompt's words."""
    run_script(
        conn,
        """
    CREATE TABLE outcome_links (
        episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        src_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        session_id TEXT NOT NULL,
        terms TEXT NOT NULL,
        weight REAL NOT NULL CHECK (weight > 0),
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, src_id, episode_id)
    );
    CREATE INDEX outcome_links_episode ON outcome_links(episode_id);
    """,
    )
