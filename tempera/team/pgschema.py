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
SHARED_TABLES = ("episodes", "evidence", "links", "log_entries")  # of team.001
FACT_TABLES = ("facts", "tombstones")  # of team.002

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
        conn.execute(
            f"CREATE TRIGGER {table}_stamp BEFORE INSERT OR UPDATE ON tempera.{table} "
            "FOR EACH ROW EXECUTE FUNCTION tempera.stamp()"
        )
    _access_control(conn)


def _share_project(*, merged: bool = False) -> str:
    """`tempera.share_project(id, name)`: 'created' (new to the team, the caller gets access), 'shared' (the caller
    has access), else refused; with `merged` (team.002) a project merged into another is refused with what to do."""
    check = (
        """
    DECLARE target text;
    BEGIN
        SELECT merged_into INTO target FROM tempera.projects WHERE id = p_id;
        IF target IS NOT NULL THEN
            RAISE EXCEPTION 'project % was merged into project % in the team: run `tempera projects merge % %`',
                p_name, target, p_id, target USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;"""
        if merged
        else """
    BEGIN"""
    )
    return f"""
    CREATE OR REPLACE FUNCTION tempera.share_project(p_id text, p_name text) RETURNS text LANGUAGE plpgsql
        SECURITY DEFINER SET search_path = pg_catalog, tempera AS $${check}
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
    END $$;"""


def _policies(conn: Connection, tables: tuple[str, ...]) -> None:
    """Members read the rows of their projects and insert their own."""
    for table in tables:
        conn.execute(f"ALTER TABLE tempera.{table} ENABLE ROW LEVEL SECURITY")
        conn.execute(f"CREATE POLICY read_shared ON tempera.{table} FOR SELECT USING ({_visible()})")
        conn.execute(
            f"CREATE POLICY write_own ON tempera.{table} FOR INSERT WITH CHECK (author = current_user AND {_visible()})"
        )


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
    {_share_project()}
    REVOKE ALL ON FUNCTION tempera.share_project(text, text) FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION tempera.share_project(text, text) TO {MEMBER_ROLE};
    """)
    _policies(conn, SHARED_TABLES)
    conn.execute(
        f"CREATE POLICY update_own ON tempera.episodes FOR UPDATE USING (author = current_user AND "
        f"{_visible()}) WITH CHECK (author = current_user AND {_visible()})"
    )


def m002_facts_and_forgetting(conn: Connection) -> None:
    """Facts as append-only events, tombstones of forgotten episodes, and moving a project's rows to another id.

    `facts`: an assertion (op 'assert': the datom with its valid time) or a retraction of one (op 'retract',
    `datom` naming the assertion), each with the reason and transaction time of the transaction that made it on
    its origin machine (`tx` names that transaction, so a puller groups them as they were). Ids are made on the
    origin machine, so a repeated push merges.
    `tombstones`: an episode forgotten by a member. Inserting one deletes the episode and every row about it
    (evidence, links, log rows, facts of its turns) in the same transaction, and a trigger drops any later
    insert or update of them (a stale push from another machine), so nothing forgotten comes back. Both the
    tombstone and the guard take the change-number lock after the row's own stamp: whichever commits second
    sees the other.
    `move_project(source, target, name)`: what `tempera projects merge` does to the team's rows (re-keyed, with
    new change numbers so every member pulls them again under the target, where they merge by id); members with
    access to the source get access to the target, and the source is marked as merged."""
    conn.execute("""
    CREATE TABLE tempera.facts (
        uid text PRIMARY KEY,
        op text NOT NULL CHECK (op IN ('assert', 'retract')),
        datom text NOT NULL,
        tx text NOT NULL,
        project_id text NOT NULL REFERENCES tempera.projects(id),
        author text NOT NULL DEFAULT current_user,
        origin text NOT NULL,
        episode_id text,
        e text, a text, vt smallint, v jsonb, valid_from bigint, valid_to bigint,
        reason text NOT NULL,
        at bigint NOT NULL,
        seq bigint NOT NULL,
        CHECK (op = 'retract' OR (e IS NOT NULL AND a IS NOT NULL AND vt IS NOT NULL AND valid_from IS NOT NULL))
    );
    CREATE INDEX facts_seq ON tempera.facts (project_id, seq);
    CREATE INDEX facts_episode ON tempera.facts (episode_id);
    CREATE TABLE tempera.tombstones (
        episode_id text PRIMARY KEY,
        project_id text NOT NULL REFERENCES tempera.projects(id),
        author text NOT NULL DEFAULT current_user,
        origin text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        seq bigint NOT NULL
    );
    CREATE INDEX tombstones_seq ON tempera.tombstones (project_id, seq);
    ALTER TABLE tempera.projects ADD COLUMN merged_into text REFERENCES tempera.projects(id);
    CREATE FUNCTION tempera.bury() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = pg_catalog, tempera AS $$
    BEGIN
        DELETE FROM tempera.episodes WHERE id = NEW.episode_id;
        DELETE FROM tempera.evidence WHERE episode_id = NEW.episode_id;
        DELETE FROM tempera.links WHERE src_id = NEW.episode_id OR dst_id = NEW.episode_id;
        DELETE FROM tempera.log_entries WHERE episode_id = NEW.episode_id;
        DELETE FROM tempera.facts WHERE episode_id = NEW.episode_id;
        RETURN NULL;
    END $$;
    CREATE TRIGGER tombstones_bury AFTER INSERT ON tempera.tombstones FOR EACH ROW EXECUTE FUNCTION tempera.bury();
    CREATE FUNCTION tempera.unforgotten() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = pg_catalog, tempera AS $$
    DECLARE ids text[];
    BEGIN
        IF TG_TABLE_NAME = 'episodes' THEN ids := ARRAY[NEW.id];
        ELSIF TG_TABLE_NAME = 'links' THEN ids := ARRAY[NEW.src_id, NEW.dst_id];
        ELSE ids := ARRAY[NEW.episode_id];
        END IF;
        IF EXISTS (SELECT 1 FROM tempera.tombstones WHERE episode_id = ANY (ids)) THEN
            RETURN NULL;
        END IF;
        RETURN NEW;
    END $$;
    CREATE FUNCTION tempera.move_project(p_source text, p_target text, p_name text) RETURNS integer
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, tempera AS $$
    DECLARE moved integer := 0; n integer;
    BEGIN
        IF NOT EXISTS (SELECT 1 FROM tempera.access WHERE project_id = p_source AND member = session_user) THEN
            RAISE EXCEPTION 'project % is not shared with role %', p_source, session_user
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        PERFORM tempera.share_project(p_target, p_name);
        INSERT INTO tempera.access(project_id, member) SELECT p_target, member FROM tempera.access
            WHERE project_id = p_source ON CONFLICT DO NOTHING;
        UPDATE tempera.episodes SET project_id = p_target WHERE project_id = p_source;
        GET DIAGNOSTICS n = ROW_COUNT; moved := moved + n;
        UPDATE tempera.evidence SET project_id = p_target WHERE project_id = p_source;
        UPDATE tempera.links SET project_id = p_target WHERE project_id = p_source;
        UPDATE tempera.log_entries SET project_id = p_target WHERE project_id = p_source;
        UPDATE tempera.facts SET project_id = p_target WHERE project_id = p_source;
        UPDATE tempera.tombstones SET project_id = p_target WHERE project_id = p_source;
        UPDATE tempera.projects SET merged_into = p_target WHERE id = p_source;
        RETURN moved;
    END $$;
    """)
    conn.execute(_share_project(merged=True))  # refuses a merged project: a member who has not merged is told
    for table in FACT_TABLES:
        conn.execute(
            f"CREATE TRIGGER {table}_stamp BEFORE INSERT OR UPDATE ON tempera.{table} "
            "FOR EACH ROW EXECUTE FUNCTION tempera.stamp()"
        )
    for table in ("episodes", "evidence", "links", "log_entries", "facts"):  # after `_stamp` (names sort so)
        conn.execute(
            f"CREATE TRIGGER {table}_unforgotten BEFORE INSERT OR UPDATE ON tempera.{table} "
            "FOR EACH ROW EXECUTE FUNCTION tempera.unforgotten()"
        )
    conn.execute(f"""
    GRANT SELECT, INSERT ON tempera.facts, tempera.tombstones TO {MEMBER_ROLE};
    REVOKE ALL ON FUNCTION tempera.move_project(text, text, text) FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION tempera.move_project(text, text, text) TO {MEMBER_ROLE};
    """)
    _policies(conn, FACT_TABLES)


def m003_bury_closed_copies(conn: Connection) -> None:
    """A tombstone also buries the closed copies later transactions made of the episode's facts (same fact and
    valid-from, a valid-to: a later turn superseded it) and the retractions of any of them, as a local forget
    does (`core/forget.py` `_fact_copies`): each copy carries what the forgotten episode said."""
    conn.execute("""
    CREATE OR REPLACE FUNCTION tempera.bury() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = pg_catalog, tempera AS $$
    DECLARE gone text[];
    BEGIN
        DELETE FROM tempera.episodes WHERE id = NEW.episode_id;
        DELETE FROM tempera.evidence WHERE episode_id = NEW.episode_id;
        DELETE FROM tempera.links WHERE src_id = NEW.episode_id OR dst_id = NEW.episode_id;
        DELETE FROM tempera.log_entries WHERE episode_id = NEW.episode_id;
        SELECT array_agg(c.uid) INTO gone FROM tempera.facts o JOIN tempera.facts c ON c.op = 'assert'
            AND c.e = o.e AND c.a = o.a AND c.vt = o.vt AND c.v IS NOT DISTINCT FROM o.v
            AND c.valid_from = o.valid_from AND (c.uid = o.uid OR (c.valid_to IS NOT NULL AND c.at >= o.at))
            WHERE o.episode_id = NEW.episode_id AND o.op = 'assert';
        DELETE FROM tempera.facts
            WHERE episode_id = NEW.episode_id OR uid = ANY (gone) OR (op = 'retract' AND datom = ANY (gone));
        RETURN NULL;
    END $$;
    """)


def m004_guard_buried_copies(conn: Connection) -> None:
    """A closed copy pushed after the tombstone stays out, as the forgotten episode's own rows do.

    A teammate who pulled the episode's fact and superseded it before pulling the tombstone pushes a closed copy
    under their own episode, which the episode-id guard lets in. A tombstone now also keeps a digest of each fact
    the episode asserted (sha256 of fact, valid-from and value: not the text, which is what was forgotten, and
    readable by no member), and a guard drops a later closed copy whose digest matches. Trigger names sort so:
    the digests are kept before `tombstones_bury` deletes the facts, the guard runs after `facts_stamp`."""
    conn.execute("""
    CREATE TABLE tempera.buried_facts (
        digest text PRIMARY KEY,
        at bigint NOT NULL
    );
    CREATE FUNCTION tempera.fact_digest(e text, a text, vt smallint, v jsonb, valid_from bigint) RETURNS text
        LANGUAGE sql IMMUTABLE SET search_path = pg_catalog AS $$
        SELECT encode(sha256(convert_to(concat_ws(chr(31), e, a, vt::text, v::text, valid_from::text), 'UTF8')),
                      'hex')
    $$;
    CREATE FUNCTION tempera.keep_buried_digests() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = pg_catalog, tempera AS $$
    BEGIN
        INSERT INTO tempera.buried_facts(digest, at)
            SELECT tempera.fact_digest(e, a, vt, v, valid_from), min(at)
            FROM tempera.facts WHERE episode_id = NEW.episode_id AND op = 'assert'
            GROUP BY 1 ON CONFLICT (digest) DO UPDATE SET at = least(buried_facts.at, excluded.at);
        RETURN NULL;
    END $$;
    CREATE TRIGGER tombstones_buried_digests AFTER INSERT ON tempera.tombstones
        FOR EACH ROW EXECUTE FUNCTION tempera.keep_buried_digests();
    CREATE FUNCTION tempera.unburied() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = pg_catalog, tempera AS $$
    BEGIN
        IF NEW.op = 'assert' AND NEW.valid_to IS NOT NULL AND EXISTS (
            SELECT 1 FROM tempera.buried_facts b
            WHERE b.digest = tempera.fact_digest(NEW.e, NEW.a, NEW.vt, NEW.v, NEW.valid_from) AND NEW.at >= b.at
        ) THEN
            RETURN NULL;
        END IF;
        RETURN NEW;
    END $$;
    CREATE TRIGGER facts_unburied BEFORE INSERT OR UPDATE ON tempera.facts
        FOR EACH ROW EXECUTE FUNCTION tempera.unburied();
    """)


MIGRATIONS: list[PgMigration] = [
    ("team.001_shared_memory", m001_shared_memory),
    ("team.002_facts_and_forgetting", m002_facts_and_forgetting),
    ("team.003_bury_closed_copies", m003_bury_closed_copies),
    ("team.004_guard_buried_copies", m004_guard_buried_copies),
]
