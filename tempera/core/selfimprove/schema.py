"""Tables of the self-improvement log, appended to the core migrations as `core.010_selfimprove`.

Rows point at episodes by id without a foreign key on purpose: the log and the calibration history must outlive
an episode that pruning removes. File anchors live in one side table so "which rows touch these files" is an
indexed lookup by full relative path.
"""

from __future__ import annotations

from tempera.core.db import Connection, run_script


def _log_table(table: str, own_columns: str, index_column: str) -> str:
    """A log table: its own text columns, then what both logs carry (see logs.py), and their indexes."""
    return f"""
    CREATE TABLE {table} (
        id INTEGER PRIMARY KEY,
        {own_columns},
        project_id TEXT NOT NULL REFERENCES projects(id),
        episode_id TEXT,
        session_id TEXT,
        scope TEXT NOT NULL DEFAULT 'project',
        transferable INTEGER NOT NULL DEFAULT 0,
        source TEXT NOT NULL,
        dedupe_key TEXT UNIQUE,
        created_at TEXT NOT NULL
    );
    CREATE INDEX {table}_project ON {table}(project_id, {index_column});
    CREATE INDEX {table}_transferable ON {table}(scope) WHERE transferable = 1;"""


def m010_selfimprove(conn: Connection) -> None:
    run_script(
        conn,
        _log_table(
            "mistakes", "category TEXT NOT NULL, description TEXT NOT NULL, correction TEXT NOT NULL", "category"
        )
        + _log_table(
            "should_have_asked",
            "trigger TEXT NOT NULL, question TEXT NOT NULL, answer TEXT NOT NULL DEFAULT ''",
            "created_at",
        )
        + """
    CREATE TABLE selfimprove_files (
        kind TEXT NOT NULL,
        row_id INTEGER NOT NULL,
        path TEXT NOT NULL,
        PRIMARY KEY (kind, row_id, path)
    );
    CREATE INDEX selfimprove_files_path ON selfimprove_files(kind, path);
    CREATE TABLE ask_backs (
        id INTEGER PRIMARY KEY,
        project_id TEXT NOT NULL REFERENCES projects(id),
        episode_id TEXT UNIQUE,
        session_id TEXT,
        question TEXT NOT NULL,
        context TEXT NOT NULL,
        drafted_by TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'consumed')),
        created_at TEXT NOT NULL,
        consumed_at TEXT,
        consumed_by TEXT
    );
    CREATE INDEX ask_backs_pending ON ask_backs(project_id, status, created_at);
    CREATE TABLE reasoning_templates (
        id INTEGER PRIMARY KEY,
        project_id TEXT NOT NULL REFERENCES projects(id),
        task_type TEXT NOT NULL,
        domain TEXT NOT NULL DEFAULT '',
        title TEXT NOT NULL,
        steps TEXT NOT NULL,
        evidence TEXT NOT NULL,
        transferable INTEGER NOT NULL DEFAULT 0,
        extracted_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (project_id, task_type, domain)
    );
    CREATE TABLE calibration_events (
        episode_id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        task_type TEXT NOT NULL,
        declared INTEGER NOT NULL,
        verified INTEGER NOT NULL,
        corrected INTEGER NOT NULL DEFAULT 0,
        episode_updated_at TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX calibration_bucket ON calibration_events(project_id, task_type);
    """,
    )
