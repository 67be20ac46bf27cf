"""The dream cycle's tables: cycles run, triage verdicts, reflections, patterns, judged episode pairs.

The migration was core's before the dream package owned it, and keeps the name databases recorded then. The
cycle and every reader of these tables outside a cycle apply it first (`db.apply_migrations`, as `FactStore` does).
"""

from __future__ import annotations

from tempera.core.db import Connection, Migration, run_script


def m050_dream(conn: Connection) -> None:
    """The dream cycle's records: cycles run, triage verdicts per project-day (so a day is never triaged twice),
    reflections, pattern pages and judged episode pairs. Episodes are named by id without a foreign key, like the
    self-improvement log, so pruning an episode never breaks a reflection or a verdict. A judged pair keeps a
    digest of what each side said, so it is judged again only when that changes."""
    run_script(
        conn,
        """
    CREATE TABLE dream_cycles (
        id INTEGER PRIMARY KEY,
        trigger TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'done', 'interrupted', 'failed')),
        max_usd REAL NOT NULL,
        spent_usd REAL NOT NULL DEFAULT 0,
        llm TEXT NOT NULL,
        phases TEXT NOT NULL DEFAULT '[]',
        signature TEXT,
        started_at TEXT NOT NULL,
        finished_at TEXT
    );
    CREATE TABLE dream_verdicts (
        project_id TEXT NOT NULL REFERENCES projects(id),
        day TEXT NOT NULL,
        score REAL NOT NULL,
        judged_by TEXT NOT NULL CHECK (judged_by IN ('llm', 'heuristic')),
        model TEXT,
        reason TEXT NOT NULL DEFAULT '',
        evidence TEXT NOT NULL,
        cost_usd REAL NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        PRIMARY KEY (project_id, day)
    );
    CREATE TABLE reflections (
        id INTEGER PRIMARY KEY,
        project_id TEXT NOT NULL REFERENCES projects(id),
        day TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        written_by TEXT NOT NULL CHECK (written_by IN ('llm', 'extractive')),
        model TEXT,
        score REAL NOT NULL,
        evidence TEXT NOT NULL,
        path TEXT NOT NULL,
        cost_usd REAL NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (project_id, day)
    );
    CREATE TABLE patterns (
        id INTEGER PRIMARY KEY,
        project_id TEXT NOT NULL REFERENCES projects(id),
        label TEXT NOT NULL,
        summary TEXT NOT NULL,
        terms TEXT NOT NULL,
        labelled_by TEXT NOT NULL CHECK (labelled_by IN ('llm', 'terms')),
        evidence TEXT NOT NULL,
        days TEXT NOT NULL,
        path TEXT NOT NULL,
        active INTEGER NOT NULL DEFAULT 1,
        cost_usd REAL NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX patterns_project ON patterns(project_id, active);
    CREATE TABLE contradiction_checks (
        a_id TEXT NOT NULL,
        b_id TEXT NOT NULL,
        a_digest TEXT NOT NULL,
        b_digest TEXT NOT NULL,
        similarity REAL NOT NULL,
        contradicts INTEGER NOT NULL,
        confidence REAL NOT NULL,
        claim TEXT NOT NULL DEFAULT '',
        judged_by TEXT NOT NULL CHECK (judged_by IN ('llm', 'heuristic')),
        model TEXT,
        cost_usd REAL NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        PRIMARY KEY (a_id, b_id)
    );
    """,
    )


MIGRATIONS: list[Migration] = [("core.050_dream", m050_dream)]
