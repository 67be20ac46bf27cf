"""Opening the one SQLite file: driver choice, pragmas, sqlite-vec, and named migrations.

The stdlib `sqlite3` of pyenv and macOS builds often cannot load extensions; then `pysqlite3` (which bundles a
recent SQLite with FTS5) is used. Which one is in use is reported by `tempera doctor`.
"""

from __future__ import annotations

import errno
import os
import sqlite3 as _stdlib_sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from tempera.core import paths
from tempera.core.errors import StorageError

BUSY_TIMEOUT_MS = 10_000


def _can_load_extensions(module: ModuleType) -> bool:
    conn = module.connect(":memory:")
    try:
        return hasattr(conn, "enable_load_extension")
    finally:
        conn.close()


def _pick_driver() -> ModuleType:
    if _can_load_extensions(_stdlib_sqlite3):
        return _stdlib_sqlite3
    try:
        import pysqlite3.dbapi2 as pysqlite3
    except ImportError:
        return _stdlib_sqlite3
    return pysqlite3


sqlite3: ModuleType = _pick_driver()
DRIVER_NAME = "pysqlite3" if sqlite3 is not _stdlib_sqlite3 else "sqlite3 (stdlib)"
Connection = Any  # either driver's Connection; they share the DB-API surface


def driver_info() -> dict[str, Any]:
    return {
        "driver": DRIVER_NAME,
        "sqlite_version": sqlite3.sqlite_version,
        "can_load_extensions": _can_load_extensions(sqlite3),
    }


def _load_vec(conn: Connection) -> str | None:
    """Load sqlite-vec; return None on success or the reason it could not be loaded."""
    try:
        conn.execute("select vec_version()")
        return None
    except sqlite3.OperationalError:
        pass
    if not hasattr(conn, "enable_load_extension"):
        return f"{DRIVER_NAME} cannot load extensions"
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        conn.execute("select vec_version()")
        return None
    except Exception as exc:  # any failure degrades to keyword-only, with the reason kept
        return f"sqlite-vec failed to load: {exc}"


_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_DENIED_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}
_SQLITE_FULL, _SQLITE_READONLY, _SQLITE_IOERR = 13, 8, 10


def storage_error(exc: BaseException) -> StorageError | None:
    """The user's view of an OS or SQLite error that comes from the disk (full, read-only, denied), so an edge can
    print one line instead of a traceback; None for anything else, which is a bug and keeps its traceback."""
    if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS | _DENIED_ERRNOS:
        where = f"cannot write {exc.filename}" if exc.filename else "cannot write"
        full = "the disk is full: " if exc.errno in _FULL_ERRNOS else ""
        return StorageError(f"{full}{where}: {exc.strerror}")
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(exc, (sqlite3.Error, _stdlib_sqlite3.Error)) and code is not None:
        if code & 0xFF == _SQLITE_FULL:
            return StorageError(
                f"the disk is full ({exc}); free some space and run the command again "
                "(the unfinished write was rolled back)"
            )
        if code & 0xFF in (_SQLITE_READONLY, _SQLITE_IOERR):
            return StorageError(f"cannot write the database: {exc}")
    return None


def require_writable_dir(path: Path) -> None:
    """Refuse a data dir we cannot write (a read-only mount stops root too) before anything half-starts there."""
    if not os.access(path, os.W_OK):
        raise StorageError(f"data dir {path} is read-only; set TEMPERA_DATA_DIR to a writable folder")


def _is_not_a_database(exc: Exception) -> bool:
    return "not a database" in str(exc) or "file is encrypted" in str(exc)


@dataclass
class Database:
    """One open connection in autocommit mode; transactions are explicit (`with db.transaction():`)."""

    conn: Connection
    path: Path
    vec_error: str | None

    @property
    def has_vec(self) -> bool:
        return self.vec_error is None

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        return self.conn.execute(sql, params)

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        return self.conn.execute(sql, params).fetchall()

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        return self.conn.execute(sql, params).fetchone()

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """BEGIN IMMEDIATE .. COMMIT; nested use becomes a savepoint."""
        if self.conn.in_transaction:
            name = f"sp_{time.monotonic_ns()}"
            self.conn.execute(f"SAVEPOINT {name}")
            try:
                yield self.conn
            except BaseException:
                if self.conn.in_transaction:  # SQLite ends the whole transaction itself on some errors (SQLITE_FULL)
                    self.conn.execute(f"ROLLBACK TO {name}")
                    self.conn.execute(f"RELEASE {name}")
                raise
            self.conn.execute(f"RELEASE {name}")
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            if self.conn.in_transaction:  # else SQLite rolled it back itself (SQLITE_FULL): keep that error, not ours
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def meta_get(self, key: str) -> str | None:
        row = self.one("SELECT value FROM meta WHERE key = ?", (key,))
        return row[0] if row else None

    def meta_set(self, key: str, value: str | None) -> None:
        if value is None:
            self.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def close(self) -> None:
        self.conn.close()


Migration = tuple[str, Callable[[Connection], None]]


def run_script(conn: Connection, sql: str) -> None:
    """Run several statements inside the current transaction (executescript would COMMIT first)."""
    buf = ""
    for line in sql.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            conn.execute(buf)
            buf = ""
    if buf.strip():
        conn.execute(buf)


def apply_migrations(db: Database, migrations: Sequence[Migration]) -> list[str]:
    """Apply each not-yet-applied migration and its record in one transaction, in order."""
    db.execute("CREATE TABLE IF NOT EXISTS _tempera_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    done = {r[0] for r in db.query("SELECT name FROM _tempera_migrations")}
    applied = []
    for name, fn in migrations:
        if name in done:
            continue
        with db.transaction() as conn:
            if conn.execute("SELECT 1 FROM _tempera_migrations WHERE name = ?", (name,)).fetchone():
                continue  # another process applied it while we waited for the lock
            fn(conn)
            conn.execute("INSERT INTO _tempera_migrations(name, applied_at) VALUES (?, ?)", (name, time.time()))
        applied.append(name)
    return applied


def open_database(
    path: Path | None = None, *, migrations: Sequence[Migration] = (), readonly: bool = False
) -> Database:
    """Open (creating if needed) the database with WAL, busy timeout, foreign keys and sqlite-vec, and apply
    `migrations` (core's are applied by `core/migrations.py` `connect`, the way the rest of the code opens it)."""
    path = path or paths.db_path()
    if not readonly:
        try:
            paths.ensure_data_dir(path.parent)
        except OSError as exc:
            raise StorageError(f"cannot create data dir {path.parent}: {exc.strerror or exc}") from exc
    # No peeking at the file header with open(): closing any descriptor of the database file drops every POSIX
    # lock this process holds on it, including those of SQLite connections already open here, and then another
    # process may checkpoint and delete the WAL under them. SQLite itself reports a file that is not a database.
    if not readonly and path.exists() and not os.access(path, os.W_OK):
        raise StorageError(f"{path} is read-only; Tempera needs to write its memory there")
    if not readonly:
        require_writable_dir(path.parent)
    try:
        uri = f"file:{path}?mode=ro" if readonly else f"file:{path}"
        conn = sqlite3.connect(
            uri, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise StorageError(f"cannot open {path}: {exc}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not readonly:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        db = Database(conn=conn, path=path, vec_error=_load_vec(conn))
        if migrations and not readonly:
            apply_migrations(db, migrations)
    except sqlite3.DatabaseError as exc:
        conn.close()
        if _is_not_a_database(exc):
            raise StorageError(
                f"{path} is not a SQLite database; move it away or set TEMPERA_DATA_DIR elsewhere"
            ) from exc
        raise StorageError(f"{path}: {exc}") from exc
    if not readonly:
        for suffix in ("", "-wal", "-shm"):
            paths.secure_file(Path(str(path) + suffix))
    return db
