"""How far capture got in one transcript for one session (table `transcript_cursors`).

Transcript files only grow, so a line number orders turns: a turn whose prompt sits below the cursor's line is new.
The cursor also remembers the last captured turn's prompt uuid, work signature and episode, so that more agent work
appended to that same turn (a later Stop before the user speaks again) updates its episode instead of adding one.
It keeps where the next capture starts reading, and what a read from there needs from above (`since.py`).
The cursor is written in the same transaction as the episodes it accounts for, and so is the mark that those
episodes still wait for the steps after capture (table `capture_unlearned`): the mark goes once the steps ran, so
a process killed in between leaves the next capture of the transcript to run them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from tempera.core.db import Database, apply_migrations
from tempera.transcripts.schema import MIGRATIONS
from tempera.transcripts.since import Since


@dataclass
class Cursor:
    transcript_path: str
    session_id: str
    turn_uuid: str | None = None  # prompt record of the last captured turn
    turn_line: int = 0  # its line; turns below it are new
    turn_signature: str | None = None  # Turn.work_signature() when it was captured
    episode_id: str | None = None  # the episode holding that turn
    lines_read: int = 0
    turns_captured: int = 0
    since: Since | None = None  # where the next capture starts reading (None: the whole file)


def load(db: Database, transcript_path: str, session_id: str) -> Cursor:
    apply_migrations(db, MIGRATIONS)
    row = db.one(
        "SELECT turn_uuid, turn_line, turn_signature, episode_id, lines_read, turns_captured, since "
        "FROM transcript_cursors WHERE transcript_path = ? AND session_id = ?",
        (transcript_path, session_id),
    )
    if row is None:
        return Cursor(transcript_path, session_id)
    return Cursor(transcript_path, session_id, *row[:-1], since=Since.loads(row[-1]))


def last_session(db: Database, transcript_path: str) -> str | None:
    """The session of the transcript's cursor that knows where to read from, updated last (a transcript has one
    session unless its first lines carried no id), so that a capture can start reading before it has read the
    session id; the capture reads the whole file if the id it then reads differs."""
    apply_migrations(db, MIGRATIONS)
    row = db.one(
        "SELECT session_id FROM transcript_cursors WHERE transcript_path = ? AND since IS NOT NULL "
        "ORDER BY updated_at DESC LIMIT 1",
        (transcript_path,),
    )
    return row[0] if row else None


def save(db: Database, cur: Cursor) -> None:
    apply_migrations(db, MIGRATIONS)
    db.execute(
        "INSERT INTO transcript_cursors(transcript_path, session_id, turn_uuid, turn_line, turn_signature, episode_id, "
        "lines_read, turns_captured, since, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(transcript_path, session_id) DO UPDATE SET turn_uuid = excluded.turn_uuid, "
        "turn_line = excluded.turn_line, turn_signature = excluded.turn_signature, episode_id = excluded.episode_id, "
        "lines_read = excluded.lines_read, turns_captured = excluded.turns_captured, since = excluded.since, "
        "updated_at = excluded.updated_at",
        (
            cur.transcript_path,
            cur.session_id,
            cur.turn_uuid,
            cur.turn_line,
            cur.turn_signature,
            cur.episode_id,
            cur.lines_read,
            cur.turns_captured,
            cur.since.dumps() if cur.since else None,
            datetime.now(timezone.utc).isoformat(),
        ),
    )


def mark_unlearned(db: Database, cur: Cursor, episode_ids: list[str]) -> None:
    """Inside the transaction that stores these episodes: the steps after capture have yet to run for them."""
    apply_migrations(db, MIGRATIONS)
    db.conn.executemany(
        "INSERT OR IGNORE INTO capture_unlearned(episode_id, transcript_path, session_id) VALUES (?, ?, ?)",
        [(eid, cur.transcript_path, cur.session_id) for eid in episode_ids],
    )


def unlearned(db: Database, transcript_path: str, session_id: str) -> list[str]:
    """The episodes of this transcript and session still waiting for the steps after capture, in the order stored."""
    apply_migrations(db, MIGRATIONS)
    return [
        r[0]
        for r in db.query(
            "SELECT u.episode_id FROM capture_unlearned u JOIN episodes e ON e.id = u.episode_id "
            "WHERE u.transcript_path = ? AND u.session_id = ? ORDER BY e.rowid",
            (transcript_path, session_id),
        )
    ]


def mark_learned(db: Database, episode_ids: list[str]) -> None:
    apply_migrations(db, MIGRATIONS)
    with db.transaction():
        db.conn.executemany("DELETE FROM capture_unlearned WHERE episode_id = ?", [(eid,) for eid in episode_ids])
