"""A real PostgreSQL 16 with pgvector (the `pgserver` wheel), started once per run in a temp dir.

Each test gets its own team database, set up the way a DBA does it (`tempera team init` as the owner), and its
members are added by running the SQL `tempera team member-sql` prints. pgserver runs the server as an
unprivileged `pgserver` user when the tests run as root (postgres refuses root), so this works in CI too.
Without the `team` extra or pgserver (a default install) each test module is skipped with that reason; with them
installed, nothing is skipped without PostgreSQL: the fixture fails with the reason.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from importlib.util import find_spec

import pytest

from tempera.core import paths
from tempera.core.extras import missing_extra
from tempera.core.memory import Memory
from tempera.core.project import ProjectRef

# looked up, not imported: pgserver reads XDG_RUNTIME_DIR on import, which pg_server sets first
SKIP_REASON = missing_extra("team") or (find_spec("pgserver") is None and "pgserver missing: pip install -e '.[dev]'")

if SKIP_REASON:

    class SkippedModule(pytest.Module):
        """A test module left unimported (it imports psycopg), reported as skipped with the reason."""

        def collect(self) -> list[pytest.Item]:
            pytest.skip(f"team tests: {SKIP_REASON}")

    def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Module:
        return SkippedModule.from_parent(parent, path=module_path)

else:
    import psycopg
    from teamdb import Dev, Team

    from tempera.team import pgdb


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The server's superuser URI (unix socket, trust auth inside the temp dir). Its folder is not under pytest's
    temp root: pytest resets that root to owner-only on every run, which would lock the `pgserver` user out."""
    base = Path(tempfile.mkdtemp(prefix="tempera-team-pg-"))
    os.environ.setdefault("XDG_RUNTIME_DIR", str(base))  # pgserver keeps its lock file there (read on import)
    import pgserver

    pgdata = base / "pgdata"
    try:
        server = pgserver.get_server(pgdata, cleanup_mode="delete")
    except Exception as exc:  # the reason, instead of a skip
        pytest.fail(f"cannot start PostgreSQL through pgserver in {pgdata}: {exc}")
    with server:  # stops the server and deletes pgdata on the way out
        yield server.get_uri()
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def team(pg_server: str) -> Iterator[Team]:
    dbname = f"team_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_server, autocommit=True) as root:
        root.execute(f'CREATE DATABASE "{dbname}"')
    t = Team(pg_server, dbname, pgdb.connect(pg_server.replace("/postgres?", f"/{dbname}?")))
    pgdb.apply_migrations(t.admin)  # what `tempera team init` runs
    yield t
    t.admin.close()
    with psycopg.connect(pg_server, autocommit=True) as root:
        root.execute(f'DROP DATABASE "{dbname}" WITH (FORCE)')
        for role in t.roles:
            root.execute(f'DROP ROLE IF EXISTS "{role}"')


@pytest.fixture
def devs(tmp_path: Path, team: Team) -> Iterator[Callable[..., Dev]]:
    """make(name, project) -> a developer whose role is a member with `project` shared, linked and opted in."""
    made: list[Dev] = []

    def make(name: str, project: ProjectRef, *, member_of: list[ProjectRef] | None = None) -> Dev:
        role = f"{name}_{team.dbname[-6:]}"
        team.add_member(role, [project] if member_of is None else member_of)
        data_dir = tmp_path / f"dev-{name}"
        mem = Memory(db_path=data_dir / paths.DB_NAME)
        mem.store.projects.ensure(project)
        dev = Dev(role, data_dir, mem)
        dev.state.set_link(team.dsn(role), role)
        dev.state.share(project.id)
        made.append(dev)
        return dev

    yield make
    for dev in made:
        dev.mem.close()
