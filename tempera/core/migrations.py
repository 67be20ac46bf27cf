"""Core schema, as ordered named migrations. Later parts append their own (never edit an applied one)."""

from __future__ import annotations

from tempera.core.db import Connection, Migration, run_script


def m001_initial(conn: Connection) -> None:
    run_script(conn, """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
    CREATE TABLE projects (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        path TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX projects_name ON projects(name COLLATE NOCASE);
    CREATE TABLE episodes (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        project_id TEXT NOT NULL REFERENCES projects(id),
        session_id TEXT,
        task_type TEXT NOT NULL,
        outcome TEXT NOT NULL,
        verification TEXT NOT NULL,
        scope_kind TEXT NOT NULL,
        transferable INTEGER NOT NULL,
        summary TEXT NOT NULL,
        utility REAL NOT NULL DEFAULT 0.5,
        helpful REAL NOT NULL DEFAULT 0,
        unhelpful REAL NOT NULL DEFAULT 0,
        retrieval_count INTEGER NOT NULL DEFAULT 0,
        last_useful_at TEXT,
        data TEXT NOT NULL
    );
    CREATE INDEX episodes_project ON episodes(project_id, created_at);
    CREATE INDEX episodes_session ON episodes(session_id, created_at);
    CREATE INDEX episodes_transferable ON episodes(transferable) WHERE transferable = 1;
    CREATE VIRTUAL TABLE episodes_fts USING fts5(body, tokenize = "unicode61 remove_diacritics 2 tokenchars '_'");
    CREATE TABLE feedback_events (
        id INTEGER PRIMARY KEY,
        episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        signal TEXT NOT NULL CHECK (signal IN ('helpful', 'unhelpful')),
        weight REAL NOT NULL CHECK (weight >= 0),
        source TEXT NOT NULL,
        evidence TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX feedback_episode ON feedback_events(episode_id, created_at);
    CREATE TABLE retrievals (
        id INTEGER PRIMARY KEY,
        episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        query TEXT,
        via TEXT NOT NULL,
        session_id TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX retrievals_episode ON retrievals(episode_id);
    """)


MIGRATIONS: list[Migration] = [
    ("core.001_initial", m001_initial),
]
