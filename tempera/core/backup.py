"""Backups of the one database file through SQLite's online backup API, and restoring one.

The backup API copies a consistent snapshot page by page while other connections keep reading and writing (the
daemon need not stop), and it carries the WAL's committed content, which copying the file would miss. A backup is
written under a temporary name and renamed when complete, so a half-written one never looks real; it is owner-only
(0600) like the database, and in DELETE journal mode, so reading it later leaves no -wal/-shm beside it.

Restoring checks the file first (PRAGMA integrity_check, and no migration this version does not know: a newer
Tempera's schema would be misread), keeps the current database aside in the backups folder (`before-restore-*`,
listed but never rotated away), then copies the file into the live database with the same API, so connections
elsewhere see the old database or the new one. A current database that is missing, or fails its quick_check (the
moment a restore is needed most), is never read: it and its -wal and -shm are moved aside as they are
(`broken-*`, not listed as backups), and a copy of the backup takes its place by rename. An older schema is migrated
on the next open, as usual.

Backups hold what `tempera forget` later deletes; forgetting does not reach into them.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tempera.core import paths
from tempera.core.db import Database, sqlite3
from tempera.core.migrations import connect
from tempera.core.errors import InvalidInput, NotFound, StorageError

DEFAULT_KEEP = 10
ROTATED, ASIDE, BROKEN = "tempera-", "before-restore-", "broken-"
NAME = re.compile(rf"^({ROTATED}|{ASIDE})(\d{{8}}T\d{{6}}Z)(?:-(\d+))?\.db$")


@dataclass(frozen=True)
class BackupFile:
    path: Path
    size: int
    created: str  # the UTC timestamp in its name


def backups_dir() -> Path:
    return paths.data_dir() / paths.BACKUPS_DIR


def create(db: Database, dest: Path | None = None, *, keep: int = DEFAULT_KEEP) -> Path:
    """Snapshot `db` into `dest`, or into a timestamped file in the backups folder, keeping the newest `keep` there
    (`dest` given: no rotation, the file is the user's)."""
    if keep < 1:
        raise InvalidInput("--keep must be at least 1")
    target = dest if dest is not None else _timestamped(paths.ensure_data_dir(backups_dir()))
    if target.exists():
        raise InvalidInput(f"{target} already exists; name a new file")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    _copy_into_new(db, partial)
    os.replace(partial, target)
    if dest is None:
        rotate(keep)
    return target


def listing() -> list[BackupFile]:
    """The backups folder's backups, oldest first."""
    folder = backups_dir()
    if not folder.is_dir():
        return []
    found = [(m.group(2), int(m.group(3) or 1), p) for p in folder.iterdir() if (m := NAME.match(p.name))]
    return [BackupFile(p, p.stat().st_size, stamp) for stamp, _, p in sorted(found)]


def rotate(keep: int) -> list[Path]:
    """Delete all but the newest `keep` backups Tempera named in the backups folder; returns what was deleted."""
    old = [b.path for b in listing() if b.path.name.startswith(ROTATED)][:-keep]
    for path in old:
        path.unlink(missing_ok=True)
    return old


def resolve(name: str) -> Path:
    """A backup named on the command line: a path, or a name or timestamp from `tempera memory backup --list`."""
    as_path = Path(name).expanduser()
    if as_path.is_file():
        return as_path
    for b in reversed(listing()):
        if name in (b.path.name, b.created, str(b.path)):
            return b.path
    raise NotFound(f"no backup {name!r}: give a file, or a name from `tempera memory backup --list`")


def check(path: Path, known_migrations: Iterable[str]) -> None:
    """Refuse a file that is not an intact Tempera database of a schema this version knows."""
    try:
        db = connect(path, migrate=False, readonly=True)
    except StorageError as exc:
        raise InvalidInput(f"{path} cannot be restored ({exc.__cause__ or exc}); nothing was restored") from exc
    try:
        try:
            problems = [" ".join(r[0].split()) for r in db.query("PRAGMA integrity_check(3)")]
            ours = db.one("SELECT 1 FROM sqlite_master WHERE name = '_tempera_migrations'")
            applied = {r[0] for r in db.query("SELECT name FROM _tempera_migrations")} if ours else set()
        except sqlite3.DatabaseError as exc:
            raise InvalidInput(f"{path} cannot be restored ({exc}); nothing was restored") from exc
    finally:
        db.close()
    if problems != ["ok"]:
        raise InvalidInput(f"{path} is damaged (integrity_check: {'; '.join(problems[:3])}); nothing was restored")
    if not ours:
        raise InvalidInput(f"{path} is not a Tempera database; nothing was restored")
    newer = sorted(applied - set(known_migrations))
    if newer:
        raise InvalidInput(
            f"{path} was written by a newer Tempera (schema {', '.join(newer[:3])}); upgrade "
            "tempera-memory before restoring it; nothing was restored"
        )


def restore(source: Path, db_file: Path, known_migrations: Iterable[str]) -> Path | None:
    """Replace the database at `db_file` by `source` after `check`; the caller has stopped the daemon. Returns
    where the database as it was is kept (None when there was none)."""
    check(source, known_migrations)
    if not _sound(db_file):
        return _replace_file(source, db_file)
    aside = None
    live = connect(db_file, migrate=False)
    try:
        if live.one("SELECT count(*) FROM sqlite_master")[0]:
            aside = _timestamped(paths.ensure_data_dir(backups_dir()), prefix=ASIDE)
            _copy_into_new(live, aside)
        src = connect(source, migrate=False, readonly=True)
        try:
            src.conn.backup(live.conn)
        finally:
            src.close()
    finally:
        live.close()
    return aside


def _sound(db_file: Path) -> bool:
    """Whether the database file is there and passes a quick_check, read-only (a broken one is not touched)."""
    if not db_file.exists():
        return False
    try:
        db = connect(db_file, migrate=False, readonly=True)
    except StorageError:
        return False
    try:
        return [r[0] for r in db.query("PRAGMA quick_check(1)")] == ["ok"]
    except sqlite3.DatabaseError:
        return False
    finally:
        db.close()


def _replace_file(source: Path, db_file: Path) -> Path | None:
    """Put a copy of `source` where `db_file` is, moving the file there (and its -wal, -shm) aside unread first;
    returns where it went (None when there was none)."""
    partial = db_file.with_name(f".{db_file.name}.restore-{os.getpid()}")
    partial.unlink(missing_ok=True)
    src = connect(source, migrate=False, readonly=True)
    try:
        _copy_into_new(src, partial)
    finally:
        src.close()
    aside = None
    if db_file.exists():
        aside = _timestamped(paths.ensure_data_dir(backups_dir()), prefix=BROKEN)
        for suffix in ("-wal", "-shm", ""):  # the database last: a crash in between leaves it, not a stray WAL
            moved = Path(f"{db_file}{suffix}")
            if moved.exists():
                os.replace(moved, Path(f"{aside}{suffix}"))
    else:
        for suffix in ("-wal", "-shm"):  # a WAL without its database belongs to no file we restore
            Path(f"{db_file}{suffix}").unlink(missing_ok=True)
    os.replace(partial, db_file)
    return aside


def _copy_into_new(db: Database, target: Path) -> None:
    """The online backup of `db` into a new owner-only file, in DELETE journal mode."""
    os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    try:
        out = sqlite3.connect(str(target), isolation_level=None)
        try:
            db.conn.backup(out)
            out.execute("PRAGMA journal_mode = DELETE")
        finally:
            out.close()
    except BaseException:
        target.unlink(missing_ok=True)
        raise


def _timestamped(folder: Path, prefix: str = ROTATED) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for n in range(1, 1000):
        candidate = folder / f"{prefix}{stamp}{f'-{n}' if n > 1 else ''}.db"
        if not candidate.exists():
            return candidate
    raise StorageError(f"too many backups named {stamp} in {folder}")
