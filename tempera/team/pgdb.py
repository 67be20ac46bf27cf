"""Connecting to the team database: DSN checks (no password in it), migrations, the schema's state.

The password never sits in the DSN Tempera stores: libpq finds it in PGPASSFILE (~/.pgpass), PGPASSWORD, a
service file (PGSERVICEFILE, `service=` in the DSN) or a client certificate. TLS settings (`sslmode`,
`sslrootcert`, ...) pass through the DSN untouched.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg import Connection
from psycopg.conninfo import conninfo_to_dict

from tempera.team.errors import TeamError
from tempera.team.pgschema import MIGRATIONS

CONNECT_TIMEOUT = 10  # seconds; only the daemon and the `team` commands connect, never a hook


def check_dsn(dsn: str) -> str:
    """The DSN as given, once it parses and holds no password."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        raise TeamError(f"not a PostgreSQL connection string: {exc}") from exc
    if parts.get("password"):
        raise TeamError(
            "the DSN holds a password; Tempera stores the DSN, so keep the password in ~/.pgpass "
            "(PGPASSFILE), PGPASSWORD or a service file instead"
        )
    return dsn


def describe(dsn: str) -> str:
    """Where a DSN points, for status lines: user@host/dbname."""
    parts = conninfo_to_dict(dsn)
    return f"{parts.get('user') or '(default user)'}@{parts.get('host') or 'localhost'}/{parts.get('dbname') or ''}"


def connect(dsn: str, **kwargs: Any) -> Connection:
    """One autocommit connection (so `with conn.transaction()` is a real transaction) with the pgvector adapter
    registered when the extension is installed."""
    try:
        conn = psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT, autocommit=True, **kwargs)
    except psycopg.OperationalError as exc:
        raise TeamError(f"cannot connect to the team database ({describe(dsn)}): {str(exc).strip()}") from exc
    configure(conn)
    return conn


def configure(conn: Connection) -> None:
    """What every (autocommit) connection needs: the pgvector type, when the extension exists; the daemon's pool
    calls this too."""
    row = conn.execute("SELECT 1 FROM pg_type WHERE typname = 'vector'").fetchone()
    if row:
        register_vector(conn)


@contextmanager
def session(dsn: str) -> Iterator[Connection]:
    """A connection for one piece of work; any database error inside becomes a TeamError with its message."""
    conn = connect(dsn)
    try:
        yield conn
    except psycopg.Error as exc:
        raise TeamError(f"team database {describe(dsn)}: {str(exc).strip() or type(exc).__name__}") from exc
    finally:
        conn.close()


def pending_migrations(conn: Connection) -> list[str]:
    """Names of the team migrations this database has not applied yet (all of them on a blank database)."""
    if conn.execute("SELECT to_regclass('tempera._tempera_migrations')").fetchone()[0] is None:
        return [name for name, _ in MIGRATIONS]
    done = {r[0] for r in conn.execute("SELECT name FROM tempera._tempera_migrations")}
    return [name for name, _ in MIGRATIONS if name not in done]


def apply_migrations(conn: Connection) -> list[str]:
    """Create the extension and schema, then apply each pending migration and its record in one transaction."""
    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute("CREATE SCHEMA IF NOT EXISTS tempera")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS tempera._tempera_migrations "
                "(name text PRIMARY KEY, applied_at double precision NOT NULL)"
            )
    except psycopg.Error as exc:
        raise TeamError(
            f"cannot prepare the team schema (run this as the database owner; the `vector` "
            f"extension needs a superuser once): {str(exc).strip()}"
        ) from exc
    register_vector(conn)
    applied = []
    for name, fn in MIGRATIONS:
        with conn.transaction():
            conn.execute("LOCK TABLE tempera._tempera_migrations IN EXCLUSIVE MODE")
            if conn.execute("SELECT 1 FROM tempera._tempera_migrations WHERE name = %s", (name,)).fetchone():
                continue
            fn(conn)
            conn.execute(
                "INSERT INTO tempera._tempera_migrations(name, applied_at) VALUES (%s, %s)", (name, time.time())
            )
        applied.append(name)
    return applied


def require_schema(conn: Connection) -> None:
    """Fail with what to do when the team schema is missing or older than this Tempera."""
    pending = pending_migrations(conn)
    if pending:
        raise TeamError(
            f"the team database lacks {', '.join(pending)}: the DBA runs `tempera team init DSN` "
            "(as the database owner) first"
        )
