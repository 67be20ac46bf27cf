"""The capture tables: per-transcript cursors and the episodes still waiting for the steps after capture.

Both migrations were core's before the transcripts package owned them, and keep the names databases recorded then.
Every function of `cursor.py` applies them (`core.db.apply_migrations`, as `FactStore` does) before touching the tables.
"""

from __future__ import annotations

from tempera.core.db import Connection, Migration, run_script


def m030_transcript_cursors(conn: Connection) -> None:
    """Per transcript and session: how far capture got, so re-runs add nothing and grown turns are updated."""
    run_script(
        conn,
        """
    CREATE TABLE transcript_cursors (
        transcript_path TEXT NOT NULL,
        session_id TEXT NOT NULL,
        turn_uuid TEXT,
        turn_line INTEGER NOT NULL DEFAULT 0,
        turn_signature TEXT,
        episode_id TEXT,
        lines_read INTEGER NOT NULL DEFAULT 0,
        turns_captured INTEGER NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (transcript_path, session_id)
    );
    """,
    )


def m068_capture_unlearned(conn: Connection) -> None:
    """Episodes a capture stored whose steps after capture (links, calibration, corrections, facts) have not finished:
    written in the transaction that stores them, deleted once the steps ran, so a crash in between is made good by
    the next capture of the transcript."""
    run_script(
        conn,
        """
    CREATE TABLE capture_unlearned (
        episode_id TEXT PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
        transcript_path TEXT NOT NULL,
        session_id TEXT NOT NULL
    );
    CREATE INDEX capture_unlearned_cursor ON capture_unlearned(transcript_path, session_id);
    """,
    )


def m001_cursor_since(conn: Connection) -> None:
    """Where the next capture of a transcript starts reading, and what it carries from above (`since.py`, as JSON);
    NULL in cursors written before it: their next capture reads the whole file once."""
    run_script(conn, "ALTER TABLE transcript_cursors ADD COLUMN since TEXT;")


MIGRATIONS: list[Migration] = [
    ("core.030_transcript_cursors", m030_transcript_cursors),
    ("core.068_capture_unlearned", m068_capture_unlearned),
    ("transcripts.001_cursor_since", m001_cursor_since),
]
