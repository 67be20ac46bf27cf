"""Core's schema, as ordered named migrations (never edit an applied one; add a new one).

Tables whose code lives in a package above core are created by that package when its code first touches them
(`transcripts/schema.py`, `dream/schema.py`, `facts/schema.py`, `team/local.py`, through `db.apply_migrations`):
core imports no package above it. A moved migration keeps its name, since the name is what `_tempera_migrations`
records: a database that already ran it never runs it again."""

from __future__ import annotations

from pathlib import Path

from tempera.core.db import Connection, Database, Migration, open_database, run_script
from tempera.core.episode_files import m071_episode_files
from tempera.core.project_lineage import m073_session_projects
from tempera.core.learning.schema import m020_learning, m069_evidence_origin, m070_outcome_links
from tempera.core.selfimprove.schema import m010_selfimprove
from tempera.core.symbols import m074_code_symbols
from tempera.core.textsearch import PROJECT_TOKEN, TRANSFERABLE_TOKEN


def m001_initial(conn: Connection) -> None:
    run_script(
        conn,
        """
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
    """,
    )


def m002_jobs_injections_links(conn: Connection) -> None:
    """The durable job queue (Stop hook -> daemon), the injection log (implicit feedback), episode links."""
    run_script(
        conn,
        """
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
    """,
    )


def m040_session_context(conn: Connection) -> None:
    """Brief statements injected per session (episodes have `injections`), so none is repeated in a session."""
    run_script(
        conn,
        """
    CREATE TABLE session_context (
        session_id TEXT NOT NULL,
        key TEXT NOT NULL,
        event TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, key)
    );
    """,
    )


def m060_episode_facts(conn: Connection) -> None:
    """Which fact-graph transactions an episode produced (see `forget.link_fact_tx`), so that forgetting the
    episode undoes them. No foreign keys: the fact tables are created by the facts package, later."""
    run_script(
        conn,
        """
    CREATE TABLE episode_facts (
        episode_id TEXT NOT NULL,
        tx INTEGER NOT NULL,
        PRIMARY KEY (episode_id, tx)
    );
    CREATE INDEX episode_facts_tx ON episode_facts(tx);
    """,
    )


def m065_vector_changes(conn: Connection) -> None:
    """A log of the episodes whose vector may have changed, for processes that keep vectors in memory
    (`vecindex.VectorCache`): `vecindex.VectorIndex` logs every vector it writes, these triggers every episode deleted
    or retired (forget and retire delete vectors in bulk), and a NULL row means "all of them" (the vector table
    was rebuilt). Only the newest 10,000 rows are kept; a reader that fell further behind reloads."""
    run_script(
        conn,
        """
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
    """,
    )


def m066_fts_stemmed_scoped(conn: Connection) -> None:
    """Stemmed keyword search ("painted" finds "painting", "failing" finds "failed": Porter over the same
    unicode61 tokens with `_` kept inside identifiers), and each row carries its project's token and, when
    transferable, the transferable token (textsearch.scope_tokens), so a project's search intersects postings
    instead of filtering every project's matches. The indexed bodies are copied, not rebuilt."""
    run_script(
        conn,
        f"""
    CREATE VIRTUAL TABLE episodes_fts_next USING fts5(body,
        tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'");
    INSERT INTO episodes_fts_next(rowid, body)
        SELECT f.rowid, f.body || char(10) || '{PROJECT_TOKEN}' || e.project_id
               || CASE WHEN e.transferable THEN ' {TRANSFERABLE_TOKEN}' ELSE '' END
        FROM episodes_fts f JOIN episodes e ON e.rowid = f.rowid;
    DROP TABLE episodes_fts;
    ALTER TABLE episodes_fts_next RENAME TO episodes_fts;
    """,
    )


def m067_capture_jobs_needed_fields(conn: Connection) -> None:
    """Capture jobs queued by older hooks kept the Stop payload's `last_assistant_message` (never read; it may hold
    anything the agent printed) and `cwd` (never read): only the transcript path and session id stay."""
    conn.execute(
        "UPDATE jobs SET payload = json_remove(payload, '$.last_assistant_message', '$.cwd') "
        "WHERE kind = 'capture' AND json_valid(payload)"
    )


def m072_fact_injections(conn: Connection) -> None:
    """The facts each prompt was shown (`lines`, a JSON list, [] for none), one row per prompt the facts channel
    answered: the browser's injection log shows them beside the episodes (same session, event and time), and a
    fact found by words alone is held back once it was shown on more than a fifth of the project's recent prompts
    (`inject/injectlog.py`)."""
    run_script(
        conn,
        """
    CREATE TABLE fact_injections (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        project_id TEXT NOT NULL,
        event TEXT NOT NULL,
        prompt TEXT,
        lines TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX fact_injections_project ON fact_injections(project_id, id);
    CREATE INDEX fact_injections_session ON fact_injections(session_id, created_at);
    """,
    )


MIGRATIONS: list[Migration] = [
    ("core.001_initial", m001_initial),
    ("core.002_jobs_injections_links", m002_jobs_injections_links),
    ("core.010_selfimprove", m010_selfimprove),
    ("core.020_learning", m020_learning),
    ("core.040_session_context", m040_session_context),
    ("core.060_episode_facts", m060_episode_facts),
    ("core.065_vector_changes", m065_vector_changes),
    ("core.066_fts_stemmed_scoped", m066_fts_stemmed_scoped),
    ("core.067_capture_jobs_needed_fields", m067_capture_jobs_needed_fields),
    ("core.069_evidence_origin", m069_evidence_origin),
    ("core.070_outcome_links", m070_outcome_links),
    ("core.071_episode_files", m071_episode_files),
    ("core.072_fact_injections", m072_fact_injections),
    ("core.073_session_projects", m073_session_projects),
    ("core.074_code_symbols", m074_code_symbols),
]


def connect(path: Path | None = None, *, migrate: bool = True, readonly: bool = False) -> Database:
    """The database (by default the data dir's) opened with core's schema brought up to date, unless `migrate` is
    off or it is opened read-only: how memory's file is opened. Here, not in db.py, so that db.py imports none of the
    modules whose tables the migrations create (they use db's helpers)."""
    return open_database(path, readonly=readonly, migrations=MIGRATIONS if migrate else ())
