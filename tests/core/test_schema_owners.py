"""Each package creates its own tables, and a database made before the migrations moved out of core keeps working:
nothing runs twice, no row is lost, and the schema is the one the old code built."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tempera.core import paths
from tests.conftest import REPO, TRANSCRIPTS

# main's last commit with every migration in core/migrations.py (the dream tables, the transcript cursors)
BEFORE_THE_MOVE = "8231cfce51781806da4fc2c74847457066fb72a0"
TRANSCRIPT = TRANSCRIPTS / "spotter" / "short.jsonl"
# migrations written after that commit, with the (type, name) of what each adds: an old database gets them when it
# opens, and only them; a new one has them beside everything the old code built
ADDED_SINCE = {
    "core.069_evidence_origin": {("index", "feedback_origin")},
    "core.070_outcome_links": {("table", "outcome_links"), ("index", "outcome_links_episode")},
    "core.071_episode_files": {("table", "episode_files"), ("index", "episode_files_episode")},
    "core.072_fact_injections": {
        ("table", "fact_injections"),
        ("index", "fact_injections_project"),
        ("index", "fact_injections_session"),
    },
    "core.073_session_projects": {
        ("table", "session_projects"),
        ("index", "session_projects_root"),
        ("index", "session_projects_project"),
    },
    "core.074_code_symbols": {
        ("table", "code_files"),
        ("table", "code_symbols"),
        ("index", "code_symbols_file"),
        ("table", "code_changed"),
        ("table", "episode_symbols"),
        ("index", "episode_symbols_episode"),
    },
    "transcripts.001_cursor_since": set(),  # a column: ALTERED_SINCE
}
ALTERED_SINCE = {"transcript_cursors": "since TEXT"}  # tables a later migration added a column to, and the column
WRITTEN_BY_TOUCH = {"session_projects": 1}  # the capture in `_touch_every_package` records its session's project
# tables a later migration fills from rows the old code stored, with how many rows each should then have (the
# backfill itself is tested on a real session in tests/learning/test_outcome_links.py)
BACKFILLED = {
    "episode_files": "SELECT COUNT(DISTINCT e.id || char(0) || j.value) FROM episodes e "
    "JOIN json_each(e.data, '$.context.files_modified') j",
}

BUILD = """
import json, sys
from pathlib import Path
import tempera
from tempera.core.memory import Memory
from tempera.dream import run_cycle
from tempera.facts import FactStore
from tempera.transcripts import capture_transcript

db_path, transcript = Path(sys.argv[1]), Path(sys.argv[2])
with Memory(db_path=db_path, use_model=False) as mem:
    added = capture_transcript(mem, transcript).added
    run_cycle(mem, phases=["decay"], max_usd=0)
    FactStore(mem.db).transact('[[:decision/cache :decision/text "use redis"]]', reason="a decision")
print(json.dumps({"module": tempera.__file__, "added": len(added)}))
"""


def _old_tree(dest: Path) -> Path:
    """The package as it was before the move, from git. The test needs the repository's history, and fails naming
    that (never a skip): a shallow clone would otherwise pass without testing the upgrade."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", BEFORE_THE_MOVE, "tempera"], capture_output=True)
    if archive.returncode != 0:
        pytest.fail(
            f"commit {BEFORE_THE_MOVE[:8]} is not in this checkout's history (a shallow clone? "
            f"`git fetch --unshallow`): {archive.stderr.decode(errors='replace').strip()}"
        )
    dest.mkdir(parents=True, exist_ok=True)
    # tar(1), not tarfile: extractall's `filter` needs Python 3.11.4, and Debian's python3 is 3.11.2
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def _state(path: Path) -> tuple[list[tuple[str, float]], dict[str, int], set[tuple[str, str, str]]]:
    """(migrations recorded with when, rows per table, schema) of the database file, read without migrating."""
    from tempera.core.migrations import connect

    db = connect(path, migrate=False, readonly=True)
    try:
        migrations = [tuple(r) for r in db.query("SELECT name, applied_at FROM _tempera_migrations ORDER BY name")]
        schema = {
            tuple(r) for r in db.query("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        }
        tables = [n for t, n, sql in schema if t == "table" and (sql or "").startswith("CREATE TABLE")]
        counts = {n: db.one(f'SELECT COUNT(*) FROM "{n}"')[0] for n in tables}
    finally:
        db.close()
    return migrations, counts, schema  # type: ignore[return-value]


def _count(path: Path, sql: str) -> int:
    from tempera.core.migrations import connect

    db = connect(path, migrate=False, readonly=True)
    try:
        return int(db.one(sql)[0])
    finally:
        db.close()


def _added(schema: set[tuple[str, str, str]]) -> set[tuple[str, str]]:
    return {(kind, name) for kind, name, _ in schema}


def _same_but_added(old: set[tuple[str, str, str]], new: set[tuple[str, str, str]]) -> None:
    """`new` holds `old`, but for the tables and indexes added since and the columns ALTERED_SINCE added."""
    altered = {(kind, name, sql) for kind, name, sql in old if name in ALTERED_SINCE}
    assert old - altered <= new
    for kind, name, sql in altered:
        (now,) = [s for k, n, s in new if (k, n) == (kind, name)]
        assert now.replace(f", {ALTERED_SINCE[name]}", "") == sql, now
    assert _added(new - old) - {("table", n) for n in ALTERED_SINCE} == _added_since()


def _added_since() -> set[tuple[str, str]]:
    return set().union(*ADDED_SINCE.values())


def _touch_every_package(path: Path) -> None:
    """Open the database the way the new code does and let each package reach its tables."""
    from tempera.core.memory import Memory
    from tempera.dream import last_cycle
    from tempera.facts import FactStore
    from tempera.transcripts import capture_transcript
    from tempera.transcripts.cursor import unlearned

    with Memory(db_path=path, use_model=False) as mem:
        assert capture_transcript(mem, TRANSCRIPT).added == []  # the cursor kept from before: nothing captured twice
        assert last_cycle(mem.db) is not None
        assert unlearned(mem.db, str(TRANSCRIPT.resolve()), "x") == []
        FactStore(mem.db)


def _older_env() -> dict[str, str]:
    """The environment for the old code: without the settings it did not know yet (its config refuses them)."""
    return {k: v for k, v in os.environ.items() if k != "TEMPERA_INJECT__DAEMON_START_SECONDS"}


def test_a_database_made_before_the_move_opens_unchanged(tmp_path: Path) -> None:
    old = _old_tree(tmp_path / "old")
    db_path = tmp_path / "data" / paths.DB_NAME
    env = {**_older_env(), "PYTHONPATH": str(old), "TEMPERA_DATA_DIR": str(db_path.parent)}
    built = subprocess.run(
        [sys.executable, "-c", BUILD, str(db_path), str(TRANSCRIPT)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    made = json.loads(built.stdout.splitlines()[-1])
    assert Path(made["module"]).is_relative_to(old) and made["added"] > 0  # the old code built it, with episodes
    migrations, counts, schema = _state(db_path)
    assert {"core.030_transcript_cursors", "core.050_dream", "core.068_capture_unlearned"} <= {n for n, _ in migrations}
    assert counts["transcript_cursors"] and counts["dream_cycles"] and counts["fact_datoms"]

    _touch_every_package(db_path)

    after_migrations, after_counts, after_schema = _state(db_path)
    kept = [m for m in after_migrations if m[0] not in ADDED_SINCE]
    assert kept == migrations  # same names, same times: no migration ran again
    assert {n for n, _ in after_migrations} - {n for n, _ in kept} == set(ADDED_SINCE)  # the later ones ran
    new_tables = dict.fromkeys((name for kind, name in _added_since() if kind == "table"), 0)  # empty, as made
    new_tables.update({table: _count(db_path, sql) for table, sql in BACKFILLED.items()} | WRITTEN_BY_TOUCH)
    assert after_counts == {**counts, **new_tables, "_tempera_migrations": len(after_migrations)}
    _same_but_added(schema, after_schema)


def test_a_new_database_gets_the_schema_the_old_code_built(tmp_path: Path) -> None:
    """Whichever package creates a table, a fresh database ends up with the same tables, indexes and triggers."""
    old = _old_tree(tmp_path / "old")
    before, after = tmp_path / "before" / paths.DB_NAME, tmp_path / "after" / paths.DB_NAME
    env = {**_older_env(), "PYTHONPATH": str(old), "TEMPERA_DATA_DIR": str(before.parent)}
    built = subprocess.run(
        [sys.executable, "-c", BUILD, str(before), str(TRANSCRIPT)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    from tempera.core.memory import Memory
    from tempera.dream import run_cycle
    from tempera.facts import FactStore
    from tempera.transcripts import capture_transcript

    with Memory(db_path=after, use_model=False) as mem:
        capture_transcript(mem, TRANSCRIPT)
        run_cycle(mem, phases=["decay"], max_usd=0)
        FactStore(mem.db)
    old_migrations, _, old_schema = _state(before)
    new_migrations, _, new_schema = _state(after)
    assert {n for n, _ in new_migrations} == {n for n, _ in old_migrations} | set(ADDED_SINCE)
    _same_but_added(old_schema, new_schema)


def test_a_backup_with_every_package_s_tables_is_restorable(data_dir: Path) -> None:
    """`tempera memory backup --restore` refuses a schema it does not know; every package's migrations must be
    known, the team's too (the daemon's team sync creates its tables on every database it serves)."""
    from tempera.cli.backup import known_migrations
    from tempera.core import backup
    from tempera.core.memory import Memory
    from tempera.dream import last_cycle
    from tempera.facts import FactStore
    from tempera.team.local import TeamState
    from tempera.transcripts.cursor import unlearned

    with Memory(use_model=False) as mem:
        last_cycle(mem.db)
        unlearned(mem.db, "/nowhere.jsonl", "s")
        FactStore(mem.db)
        TeamState(mem.db).link()
        made = backup.create(mem.db)
    backup.check(made, known_migrations())  # raises InvalidInput for a schema it does not know
