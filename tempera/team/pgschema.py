"""The team database's schema, as ordered named migrations (each in one transaction, recorded by name).

Everything lives in the `tempera` schema of the team's database; members are PostgreSQL roles in the group role
`tempera_member`. Row-level security limits a member to the projects in `tempera.access` that name them; the
owner (the DBA who ran `tempera team init`) is not limited. Evidence, links and log rows are append-only for
members (INSERT and SELECT only); episodes may be updated by their author only.

Every insert and update takes the next number of `tempera.change_seq` under one transaction-scoped advisory
lock, so numbers become visible in the order they were given: a reader that has seen number n has seen every
number below it, and a pull cursor ("the last number I applied") never skips a row.
"""

from __future__ import annotations

from collections.abc import Callable

from psycopg import Connection

EMBED_DIM = 384  # the dimension of the default and the offline model; other vectors are not shared
MEMBER_ROLE = "tempera_member"
SEQ_LOCK = 7_411_019  # the advisory lock key that orders change numbers
SHARED_TABLES = ("episodes", "evidence", "links", "log_entries")

PgMigration = tuple[str, Callable[[Connection], None]]


def _visible(column: str = "project_id") -> str:
    """The policy condition: the row's project is one the current role has access to."""
    return f"{column} IN (SELECT a.project_id FROM tempera.access a WHERE a.member = current_user)"


def m001_shared_memory(conn: Connection) -> None:
    conn.execute(f"""
    DO $$ BEGIN CREATE ROLE {MEMBER_ROLE} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
    CREATE SEQUENCE tempera.change_seq;
    CREATE FUNCTION tempera.stamp() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = pg_catalog, tempera AS $$
    BEGIN
        PERFORM pg_advisory_xact_lock({SEQ_LOCK});
        NEW.seq := nextval('tempera.change_seq');
        RETURN NEW;
    END $$;
    CREATE TABLE tempera.projects (
        id text PRIMARY KEY,
        name text NOT NULL,
        created_by text NOT NULL DEFAULT current_user,
        created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE tempera.access (
        project_id text NOT NULL REFERENCES tempera.projects(id) ON DELETE CASCADE,
        member text NOT NULL,
        granted_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, member)
    );
    CREATE TABLE tempera.episodes (
        id text PRIMARY KEY,
        project_id text NOT NULL REFERENCES tempera.projects(id),
        author text NOT NULL DEFAULT current_user,
        origin text NOT NULL,
        session_id text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        summary text NOT NULL,
        transferable boolean NOT NULL,
        body text NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED,
        model text,
        embedding vector({EMBED_DIM}),
        data jsonb NOT NULL,
        seq bigint NOT NULL
    );
    CREATE INDEX episodes_tsv ON tempera.episodes USING gin (tsv);
    CREATE INDEX episodes_hnsw ON tempera.episodes USING hnsw (embedding vector_cosine_ops);
    CREATE INDEX episodes_seq ON tempera.episodes (project_id, seq);
    CREATE TABLE tempera.evidence (
        uid text PRIMARY KEY,
        episode_id text NOT NULL,
        project_id text NOT NULL REFERENCES tempera.projects(id),
        author text NOT NULL DEFAULT current_user,
        origin text NOT NULL,
        signal text NOT NULL CHECK (signal IN ('helpful', 'unhelpful')),
        weight double precision NOT NULL CHECK (weight >= 0),
        source text NOT NULL,
        evidence jsonb NOT NULL DEFAULT '{{}}',
        created_at timestamptz NOT NULL,
        seq bigint NOT NULL
    );
    CREATE INDEX evidence_seq ON tempera.evidence (project_id, seq);
    CREATE INDEX evidence_episode ON tempera.evidence (episode_id);
    CREATE TABLE tempera.links (
        src_id text NOT NULL,
        dst_id text NOT NULL,
        relationship text NOT NULL,
        weight double precision NOT NULL,
        project_id text NOT NULL REFERENCES tempera.projects(id),
        author text NOT NULL DEFAULT current_user,
        origin text NOT NULL,
        created_at timestamptz NOT NULL,
        seq bigint NOT NULL,
        PRIMARY KEY (src_id, dst_id, relationship)
    );
    CREATE INDEX links_seq ON tempera.links (project_id, seq);
    CREATE TABLE tempera.log_entries (
        uid text PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('mistakes', 'should_have_asked')),
        project_id text NOT NULL REFERENCES tempera.projects(id),
        author text NOT NULL DEFAULT current_user,
        origin text NOT NULL,
        episode_id text,
        session_id text,
        fields jsonb NOT NULL,
        files text[] NOT NULL DEFAULT '{{}}',
        scope text NOT NULL,
        created_at timestamptz NOT NULL,
        seq bigint NOT NULL
    );
    CREATE INDEX log_entries_seq ON tempera.log_entries (project_id, seq);
    """)
    for table in SHARED_TABLES:
        conn.execute(f"CREATE TRIGGER {table}_stamp BEFORE INSERT OR UPDATE ON tempera.{table} "
                     "FOR EACH ROW EXECUTE FUNCTION tempera.stamp()")
    _access_control(conn)


def _access_control(conn: Connection) -> None:
    """Grants to the member group and the row-level security policies."""
    conn.execute(f"""
    REVOKE ALL ON SCHEMA tempera FROM PUBLIC;
    GRANT USAGE ON SCHEMA tempera TO {MEMBER_ROLE};
    GRANT SELECT ON tempera._tempera_migrations TO {MEMBER_ROLE};
    GRANT SELECT ON tempera.projects, tempera.access TO {MEMBER_ROLE};
    GRANT SELECT, INSERT, UPDATE ON tempera.episodes TO {MEMBER_ROLE};
    GRANT SELECT, INSERT ON tempera.evidence, tempera.links, tempera.log_entries TO {MEMBER_ROLE};
    ALTER TABLE tempera.access ENABLE ROW LEVEL SECURITY;
    CREATE POLICY own_rows ON tempera.access FOR SELECT USING (member = current_user);
    ALTER TABLE tempera.projects ENABLE ROW LEVEL SECURITY;
    CREATE POLICY shared ON tempera.projects FOR SELECT USING ({_visible("id")});
    CREATE FUNCTION tempera.share_project(p_id text, p_name text) RETURNS text LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = pg_catalog, tempera AS $$
    BEGIN
        IF NOT EXISTS (SELECT 1 FROM tempera.projects WHERE id = p_id) THEN
            INSERT INTO tempera.projects(id, name, created_by) VALUES (p_id, p_name, session_user);
            INSERT INTO tempera.access(project_id, member) VALUES (p_id, session_user);
            RETURN 'created';
        END IF;
        IF EXISTS (SELECT 1 FROM tempera.access WHERE project_id = p_id AND member = session_user) THEN
            RETURN 'shared';
        END IF;
        RAISE EXCEPTION 'project % is in the team but not shared with role %', p_name, session_user
            USING ERRCODE = 'insufficient_privilege';
    END $$;
    REVOKE ALL ON FUNCTION tempera.share_project(text, text) FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION tempera.share_project(text, text) TO {MEMBER_ROLE};
    """)
    for table in SHARED_TABLES:
        conn.execute(f"ALTER TABLE tempera.{table} ENABLE ROW LEVEL SECURITY")
        conn.execute(f"CREATE POLICY read_shared ON tempera.{table} FOR SELECT USING ({_visible()})")
        conn.execute(f"CREATE POLICY write_own ON tempera.{table} FOR INSERT "
                     f"WITH CHECK (author = current_user AND {_visible()})")
    conn.execute(f"CREATE POLICY update_own ON tempera.episodes FOR UPDATE USING (author = current_user AND "
                 f"{_visible()}) WITH CHECK (author = current_user AND {_visible()})")


MIGRATIONS: list[PgMigration] = [
    ("team.001_shared_memory", m001_shared_memory),
]
