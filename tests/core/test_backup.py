"""`tempera memory backup`, `--list` and `--restore` through the real executable on a real database."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path

from tests.conftest import TRANSCRIPTS
from tests.support.cli import tempera
from tests.support.datadir import kill_daemon
from tempera.core import paths

SESSION = TRANSCRIPTS / "spotter" / "tool_heavy.jsonl"


def ok(*args: str) -> str:
    r = tempera(*args)
    assert r.returncode == 0, r.stderr
    return r.stdout


def contents(db: Path) -> dict[str, list[str]]:
    """Every table's rows (virtual tables are read through their shadow tables), in a stable order."""
    with sqlite3.connect(db) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name"
            )
        ]
        return {t: sorted(repr(row) for row in conn.execute(f'SELECT * FROM "{t}"')) for t in tables}


def filled(data_dir: Path, tmp_path: Path) -> dict[str, list[str]]:
    ok("import", "--no-embed", "-q", "--project", str(tmp_path), str(SESSION))
    [first, *_] = json.loads(ok("retrieve", "--all", "--json", "--project", str(tmp_path)))
    ok("feedback", "helpful", "--episodes", first["id"])
    state = contents(data_dir / paths.DB_NAME)
    assert len(state["episodes"]) > 1 and state["feedback_events"]
    return state


def test_backup_forget_restore_round_trip(data_dir: Path, tmp_path: Path) -> None:
    before = filled(data_dir, tmp_path)
    report = json.loads(ok("memory", "backup", "--json"))
    made = Path(report["path"])
    assert made.parent == data_dir / paths.BACKUPS_DIR and made.name.startswith("tempera-")
    assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert not list(made.parent.glob("*-wal")) and not list(made.parent.glob("*-journal"))
    assert contents(made) == before

    ok("forget", "project", str(tmp_path), "--yes")
    forgotten = contents(data_dir / paths.DB_NAME)
    assert forgotten["episodes"] == []

    out = json.loads(ok("memory", "backup", "--restore", made.name, "--yes", "--json"))
    assert contents(data_dir / paths.DB_NAME) == before
    aside = Path(out["kept_aside"])
    assert aside.name.startswith("before-restore-") and contents(aside) == forgotten
    assert stat.S_IMODE(aside.stat().st_mode) == 0o600
    assert len(json.loads(ok("retrieve", "--all", "--json", "--project", str(tmp_path)))) == len(before["episodes"])


def test_rotation_and_list(data_dir: Path, tmp_path: Path) -> None:
    ok("capture", "-s", "Fixed ECONNREFUSED by waiting for Postgres", "--project", str(tmp_path))
    made = [Path(json.loads(ok("memory", "backup", "--keep", "2", "--json"))["path"]) for _ in range(3)]
    assert not made[0].exists() and made[1].exists() and made[2].exists()
    listed = json.loads(ok("memory", "backup", "--list", "--json"))
    assert [r["path"] for r in listed] == [str(made[1]), str(made[2])]
    own = tmp_path / "elsewhere" / "mine.db"
    ok("memory", "backup", str(own))
    assert own.exists() and stat.S_IMODE(own.stat().st_mode) == 0o600
    assert (
        len(json.loads(ok("memory", "backup", "--list", "--json"))) == 2
    )  # a named file is not in the folder's rotation
    r = tempera("memory", "backup", str(own))
    assert r.returncode == 1 and r.stderr == f"Error: {own} already exists; name a new file\n"


def refused(data_dir: Path, source: Path, *needles: str) -> None:
    db = data_dir / paths.DB_NAME
    before = contents(db)
    r = tempera("memory", "backup", "--restore", str(source), "--yes")
    assert r.returncode == 1 and r.stderr.startswith("Error: ") and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1 and "nothing was restored" in r.stderr, r.stderr
    for n in needles:
        assert n in r.stderr, r.stderr
    assert contents(db) == before
    assert not list((data_dir / paths.BACKUPS_DIR).glob("before-restore-*"))


def test_restore_refuses_a_corrupt_file(data_dir: Path, tmp_path: Path) -> None:
    filled(data_dir, tmp_path)
    good = Path(json.loads(ok("memory", "backup", "--json"))["path"])
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all\n" * 500)
    refused(data_dir, junk, str(junk))

    damaged = tmp_path / "damaged.db"
    data = bytearray(good.read_bytes())
    with sqlite3.connect(good) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'episodes'").fetchone()[0]
    start = (root - 1) * page_size
    data[start + 100 : start + page_size] = os.urandom(page_size - 100)  # the episodes table's root page, scrambled
    damaged.write_bytes(bytes(data))
    refused(data_dir, damaged, str(damaged))

    plain = tmp_path / "plain.db"
    with sqlite3.connect(plain) as conn:
        conn.execute("CREATE TABLE t (x)")
    refused(data_dir, plain, "is not a Tempera database")


def test_restore_refuses_a_newer_schema(data_dir: Path, tmp_path: Path) -> None:
    filled(data_dir, tmp_path)
    newer = Path(json.loads(ok("memory", "backup", "--json"))["path"])
    with sqlite3.connect(newer) as conn:
        conn.execute("INSERT INTO _tempera_migrations(name, applied_at) VALUES ('core.999_from_the_future', 0)")
    refused(data_dir, newer, "newer Tempera", "core.999_from_the_future")


def test_restore_of_an_unknown_name(data_dir: Path) -> None:
    r = tempera("memory", "backup", "--restore", "20990101T000000Z", "--yes")
    assert r.returncode == 1 and "no backup '20990101T000000Z'" in r.stderr and "Traceback" not in r.stderr


def _quick_check(db: Path) -> str:
    try:
        with sqlite3.connect(db) as conn:
            return str(conn.execute("PRAGMA quick_check(1)").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        return str(exc)


def test_restore_replaces_a_malformed_database_and_keeps_it_aside(data_dir: Path, tmp_path: Path) -> None:
    """Issue 40: 64 KB of garbage in the middle of tempera.db made restore fail with "database disk image is
    malformed" until the user deleted the file by hand, the one moment restore is needed."""
    before = filled(data_dir, tmp_path)
    good = Path(json.loads(ok("memory", "backup", "--json"))["path"])
    kill_daemon(data_dir)  # one that closes the file after the damage would write into it
    db = data_dir / paths.DB_NAME
    size = db.stat().st_size
    with db.open("r+b") as fh:
        fh.seek(size // 2 - 32768)
        fh.write(os.urandom(65536))
    assert _quick_check(db) != "ok"  # broken indeed
    broken = db.read_bytes()
    wal = Path(f"{db}-wal")
    wal.write_bytes(b"a WAL the broken file left\n")

    out = json.loads(ok("memory", "backup", "--restore", good.name, "--yes", "--json"))
    assert contents(db) == before and not wal.exists()
    aside = Path(out["kept_aside"])
    assert aside.parent == data_dir / paths.BACKUPS_DIR and aside.name.startswith("broken-")
    assert aside.read_bytes() == broken and Path(f"{aside}-wal").read_bytes() == b"a WAL the broken file left\n"
    assert [b["path"] for b in json.loads(ok("memory", "backup", "--list", "--json"))] == [str(good)]  # not a backup
    assert len(json.loads(ok("retrieve", "--all", "--json", "--project", str(tmp_path)))) == len(before["episodes"])
