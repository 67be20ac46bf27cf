"""Core schema, as ordered named migrations. Later parts append their own (never edit an applied one)."""

from __future__ import annotations

from tempera.core.db import Connection, Migration, run_script
from tempera.core.learning.schema import m020_learning
from tempera.core.selfimprove.schema import m010_selfimprove
from tempera.core.textsearch import PROJECT_TOKEN, TRANSFERABLE_TOKEN


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


def m002_jobs_injections_links(conn: Connection) -> None:
    """The durable job queue (Stop hook -> daemon), the injection log (implicit feedback), episode links."""
    run_script(conn, """
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        dedupe_key TEXT,
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'leased', 'done', 'dead')),
        attempts INTEGER NOT NULL DEFAULT 0,
        run_after REAL NOT NULL,
        lease_until REAL,
        last_error TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX jobs_ready ON jobs(status, run_after);
    CREATE UNIQUE INDEX jobs_dedupe ON jobs(dedupe_key)
        WHERE dedupe_key IS NOT NULL AND status IN ('pending', 'leased');
    CREATE TABLE injections (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        project_id TEXT NOT NULL,
        event TEXT NOT NULL,
        prompt TEXT,
        episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        rank INTEGER NOT NULL,
        scores TEXT NOT NULL,
        created_at TEXT NOT NULL,
        evaluated_at TEXT,
        used REAL
    );
    CREATE INDEX injections_session ON injections(session_id, created_at);
    CREATE INDEX injections_episode ON injections(episode_id);
    CREATE TABLE episode_links (
        src_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        dst_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        relationship TEXT NOT NULL,
        weight REAL NOT NULL DEFAULT 1.0,
        created_at TEXT NOT NULL,
        PRIMARY KEY (src_id, dst_id, relationship)
    );
    CREATE INDEX episode_links_dst ON episode_links(dst_id);
    """)


def m030_transcript_cursors(conn: Connection) -> None:
    """Per transcript and session: how far capture got, so re-runs add nothing and grown turns are updated."""
    run_script(conn, """
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
    """)


def m040_session_context(conn: Connection) -> None:
    """Brief statements injected per session (episodes have `injections`), so none is repeated in a session."""
    run_script(conn, """
    CREATE TABLE session_context (
        session_id TEXT NOT NULL,
        key TEXT NOT NULL,
        event TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, key)
    );
    """)


def m050_dream(conn: Connection) -> None:
    """The dream cycle's records: cycles run, triage verdicts per project-day (so a day is never triaged twice),
    reflections, pattern pages and judged episode pairs. Episodes are named by id without a foreign key, like the
    self-improvement log, so pruning an episode never breaks a reflection or a verdict. A judged pair keeps a
    digest of what each side said, so it is judged again only when that changes."""
    run_script(conn, """
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
    """)


def m060_episode_facts(conn: Connection) -> None:
    """Which fact-graph transactions an episode produced (see `forget.link_fact_tx`), so that forgetting the
    episode undoes them. No foreign keys: the fact tables are created by the facts package, later."""
    run_script(conn, """
    CREATE TABLE episode_facts (
        episode_id TEXT NOT NULL,
        tx INTEGER NOT NULL,
        PRIMARY KEY (episode_id, tx)
    );
    CREATE INDEX episode_facts_tx ON episode_facts(tx);
    """)


def m065_vector_changes(conn: Connection) -> None:
    """A log of the episodes whose vector may have changed, for processes that keep vectors in memory
    (`vecindex.VectorCache`): `EpisodeStore` logs every vector it writes, these triggers every episode deleted
    or retired (forget and retire delete vectors in bulk), and a NULL row means "all of them" (the vector table
    was rebuilt). Only the newest 10,000 rows are kept; a reader that fell further behind reloads."""
    run_script(conn, """
    CREATE TABLE vector_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        episode_rowid INTEGER
    );
    CREATE TRIGGER vector_changes_prune AFTER INSERT ON vector_changes BEGIN
        DELETE FROM vector_changes WHERE seq <= NEW.seq - 10000;
    END;
    CREATE TRIGGER vector_changes_episode_deleted AFTER DELETE ON episodes BEGIN
        INSERT INTO vector_changes(episode_rowid) VALUES (OLD.rowid);
    END;
    CREATE TRIGGER vector_changes_episode_retired AFTER INSERT ON episode_retirements BEGIN
        INSERT INTO vector_changes(episode_rowid) SELECT rowid FROM episodes WHERE id = NEW.episode_id;
    END;
    """)


def m066_fts_stemmed_scoped(conn: Connection) -> None:
    """Stemmed keyword search ("painted" finds "painting", "failing" finds "failed": Porter over the same
    unicode61 tokens with `_` kept inside identifiers), and each row carries its project's token and, when
    transferable, the transferable token (textsearch.scope_tokens), so a project's search intersects postings
    instead of filtering every project's matches. The indexed bodies are copied, not rebuilt."""
    run_script(conn, f"""
    CREATE VIRTUAL TABLE episodes_fts_next USING fts5(body,
        tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'");
    INSERT INTO episodes_fts_next(rowid, body)
        SELECT f.rowid, f.body || char(10) || '{PROJECT_TOKEN}' || e.project_id
               || CASE WHEN e.transferable THEN ' {TRANSFERABLE_TOKEN}' ELSE '' END
        FROM episodes_fts f JOIN episodes e ON e.rowid = f.rowid;
    DROP TABLE episodes_fts;
    ALTER TABLE episodes_fts_next RENAME TO episodes_fts;
    """)


def m067_capture_jobs_needed_fields(conn: Connection) -> None:
    """Capture jobs queued by older hooks kept the Stop payload's `last_assistant_message` (never read; it may hold
    anything the agent printed) and `cwd` (never read): only the transcript path and session id stay."""
    conn.execute("UPDATE jobs SET payload = json_remove(payload, '$.last_assistant_message', '$.cwd') "
                 "WHERE kind = 'capture' AND json_valid(payload)")


def m068_capture_unlearned(conn: Connection) -> None:
    """Episodes a capture stored whose steps after capture (links, calibration, corrections, facts) have not finished:
    written in the transaction that stores them, deleted once the steps ran, so a crash in between is made good by
    the next capture of the transcript."""
    run_script(conn, """
    CREATE TABLE capture_unlearned (
        episode_id TEXT PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
        transcript_path TEXT NOT NULL,
        session_id TEXT NOT NULL
    );
    CREATE INDEX capture_unlearned_cursor ON capture_unlearned(transcript_path, session_id);
    """)


MIGRATIONS: list[Migration] = [
    ("core.001_initial", m001_initial),
    ("core.002_jobs_injections_links", m002_jobs_injections_links),
    ("core.010_selfimprove", m010_selfimprove),
    ("core.020_learning", m020_learning),
    ("core.030_transcript_cursors", m030_transcript_cursors),
    ("core.040_session_context", m040_session_context),
    ("core.050_dream", m050_dream),
    ("core.060_episode_facts", m060_episode_facts),
    ("core.065_vector_changes", m065_vector_changes),
    ("core.066_fts_stemmed_scoped", m066_fts_stemmed_scoped),
    ("core.067_capture_jobs_needed_fields", m067_capture_jobs_needed_fields),
    ("core.068_capture_unlearned", m068_capture_unlearned),
]
