"""What the `tempera team` commands, `doctor` and the daemon do with a local memory and the team database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

import psycopg

from tempera.core import pause
from tempera.core.memory import Memory
from tempera.core.project import ProjectRef
from tempera.team import pgdb
from tempera.team.errors import TeamError
from tempera.team.kinds import NOT_PULLED
from tempera.team.local import TeamState
from tempera.team.sync import SyncReport, TeamSync


@contextmanager
def team_sync(mem: Memory) -> Iterator[TeamSync]:
    """A sync session over a fresh connection to the linked team database."""
    link = TeamState(mem.db).require_link()
    with pgdb.session(link.dsn) as conn:
        yield TeamSync(mem, conn)


def connect(mem: Memory, dsn: str, project: ProjectRef | None) -> dict[str, Any]:
    """Check the DSN and the schema, record the link (DSN without password) and share `project` when given."""
    pgdb.check_dsn(dsn)
    with pgdb.session(dsn) as conn:
        pgdb.require_schema(conn)
        member = conn.execute("SELECT current_user").fetchone()[0]
        state = TeamState(mem.db)
        state.set_link(dsn, member)
        state.machine()
        if project is not None:
            _share(mem, conn, project)
    return {"member": member, "database": pgdb.describe(dsn), "shared": state.shared()}


def _share(mem: Memory, conn: psycopg.Connection, ref: ProjectRef) -> str:
    try:
        how = conn.execute("SELECT tempera.share_project(%s, %s)", (ref.id, ref.name)).fetchone()[0]
    except psycopg.errors.InsufficientPrivilege as exc:
        raise TeamError(
            f"{exc.diag.message_primary}: ask the DBA to run the SQL of "
            f"`tempera team member-sql ROLE --project {ref.name}`"
        ) from exc
    mem.store.projects.ensure(ref)
    TeamState(mem.db).share(ref.id)
    return str(how)


def share(mem: Memory, ref: ProjectRef) -> str:
    """Opt a project in: 'created' (new to the team) or 'shared' (the team has it and shares it with you)."""
    link = TeamState(mem.db).require_link()
    with pgdb.session(link.dsn) as conn:
        return _share(mem, conn, ref)


def run(mem: Memory, direction: str) -> SyncReport:
    """push, pull or sync (both) once."""
    with team_sync(mem) as ts:
        return {"push": ts.push, "pull": ts.pull, "sync": ts.sync}[direction]()


def _lag_seconds(ok_at: object) -> float | None:
    if not isinstance(ok_at, str):
        return None
    return round((datetime.now(timezone.utc) - datetime.fromisoformat(ok_at)).total_seconds(), 1)


def status(mem: Memory, *, remote: bool = True) -> dict[str, Any]:
    """Link, shared projects (own and pulled episodes and facts, tombstones waiting, paused), last runs with lag
    and errors, the team's counts (episodes, facts, tombstones) per project."""
    state = TeamState(mem.db)
    link = state.link()
    if link is None:
        return {"connected": False}
    paused = pause.paused_projects(mem.db.path.parent)
    projects = []
    for pid in state.shared():
        row = mem.db.one("SELECT name FROM projects WHERE id = ?", (pid,))
        local = mem.db.one(
            f"SELECT COUNT(*), COALESCE(SUM({NOT_PULLED}), 0) FROM episodes e WHERE project_id = ?", (pid,)
        )
        facts = mem.db.one(
            "SELECT COALESCE(SUM(pulled = 0), 0), COALESCE(SUM(pulled = 1), 0) FROM team_facts WHERE project_id = ?",
            (pid,),
        )
        waiting = mem.db.one("SELECT COUNT(*) FROM team_tombstones WHERE project_id = ?", (pid,))
        projects.append(
            {
                "id": pid,
                "name": row[0] if row else pid,
                "paused": pid in paused,
                "episodes": int(local[0]),
                "own": int(local[1]),
                "pulled": int(local[0]) - int(local[1]),
                "facts_pushed": int(facts[0]),
                "facts_pulled": int(facts[1]),
                "tombstones_waiting": int(waiting[0]),
            }
        )
    runs = state.runs()
    for r in runs.values():
        r["lag_seconds"] = _lag_seconds(r["ok_at"])
    out: dict[str, Any] = {
        "connected": True,
        "database": pgdb.describe(link.dsn),
        "member": link.member,
        "machine": state.machine(),
        "projects": projects,
        "runs": runs,
    }
    if remote:
        try:
            with pgdb.session(link.dsn) as conn:
                out["team"] = _team_counts(conn)
        except (TeamError, psycopg.Error) as exc:
            out["team_error"] = str(exc).strip()
    return out


def _team_counts(conn: psycopg.Connection) -> dict[str, dict[str, int]]:
    """Per project the member can see: episodes (and how many are this role's), fact events, tombstones."""
    counts: dict[str, dict[str, int]] = {}
    for sql, keys in (
        (
            "SELECT project_id, count(*), count(*) FILTER (WHERE author = current_user) FROM tempera.episodes "
            "GROUP BY project_id",
            ("episodes", "yours"),
        ),
        ("SELECT project_id, count(*) FROM tempera.facts GROUP BY project_id", ("facts",)),
        ("SELECT project_id, count(*) FROM tempera.tombstones GROUP BY project_id", ("tombstones",)),
    ):
        for pid, *values in conn.execute(sql).fetchall():
            counts.setdefault(pid, {"episodes": 0, "yours": 0, "facts": 0, "tombstones": 0}).update(zip(keys, values))
    return counts


def doctor_check(mem: Memory) -> tuple[bool, str]:
    """The `doctor` line: not connected is fine; connected must reach the database, pgvector and the schema."""
    link = TeamState(mem.db).link()
    if link is None:
        return True, "not connected (optional: `tempera team connect DSN`)"
    try:
        with pgdb.session(link.dsn) as conn:
            ext = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
            if ext is None:
                return False, f"{pgdb.describe(link.dsn)}: the pgvector extension is not installed"
            pgdb.require_schema(conn)
    except (TeamError, psycopg.Error) as exc:
        return False, str(exc).strip()
    return True, f"{pgdb.describe(link.dsn)} as {link.member}, pgvector {ext[0]}, schema current"
