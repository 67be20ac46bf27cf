"""The team part's state in the local SQLite: the connection, the shared projects, the sync cursors and runs.

Applied as named migrations when the team part opens the data dir (the core never imports this package). The
machine id (in `meta`) names this data dir in the team database; it outlives a disconnect, so evidence pushed
again after a reconnect keeps its ids and merges instead of doubling.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

from tempera.core import forget as forgetting
from tempera.core.db import Connection, Database, Migration, apply_migrations, run_script
from tempera.facts.schema import MIGRATIONS as FACT_MIGRATIONS
from tempera.team.errors import NotConnected

MACHINE_KEY = "team.machine"


def m001_team_sync(conn: Connection) -> None:
    """`team_evidence` names the evidence rows that came from the team (never pushed back) by their team id."""
    run_script(
        conn,
        """
    CREATE TABLE team_link (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        dsn TEXT NOT NULL,
        member TEXT NOT NULL,
        connected_at TEXT NOT NULL
    );
    CREATE TABLE team_shared (
        project_id TEXT PRIMARY KEY,
        shared_at TEXT NOT NULL
    );
    CREATE TABLE team_cursors (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE team_evidence (
        local_id INTEGER PRIMARY KEY REFERENCES feedback_events(id) ON DELETE CASCADE,
        uid TEXT NOT NULL UNIQUE
    );
    CREATE TABLE team_runs (
        direction TEXT PRIMARY KEY CHECK (direction IN ('push', 'pull')),
        started_at TEXT NOT NULL,
        finished_at TEXT,
        ok_at TEXT,
        rows INTEGER NOT NULL DEFAULT 0,
        error TEXT
    );
    """,
    )


def m002_team_facts(conn: Connection) -> None:
    """`team_facts`: each datom known to the team (pushed from here or pulled), by its team id, with the project it
    is shared in and the retraction event last exchanged for it. `team_fact_tx`: the local transactions made for
    pulled team transactions (more than one when a team transaction came in several batches). `team_tombstones`:
    episodes forgotten here, waiting to be buried in the team database. `team_projects`: the local project that
    holds what was pushed to each team project; `projects merge` re-keys its `project_id` like every such column,
    and the next push moves the team's rows after it (the pair differs until then). The foreign keys to the fact
    tables (which `TeamState` makes sure exist) mean a datom or transaction that `forget` undoes takes its row
    here with it, so a reused local id is never mistaken for a shared one."""
    run_script(
        conn,
        """
    CREATE TABLE team_facts (
        local_id INTEGER PRIMARY KEY REFERENCES fact_datoms(id) ON DELETE CASCADE,
        uid TEXT NOT NULL UNIQUE,
        project_id TEXT NOT NULL,
        pulled INTEGER NOT NULL,
        retraction TEXT
    );
    CREATE TABLE team_fact_tx (
        local_tx INTEGER PRIMARY KEY REFERENCES fact_tx(tx) ON DELETE CASCADE,
        uid TEXT NOT NULL
    );
    CREATE TABLE team_tombstones (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        forgotten_at TEXT NOT NULL
    );
    CREATE TABLE team_projects (
        pg_id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL
    );
    INSERT INTO team_projects(pg_id, project_id) SELECT project_id, project_id FROM team_shared;
    """,
    )


def m003_team_pushed(conn: Connection) -> None:
    """`team_pushed`: each episode as it was last pushed (its `updated_at` and project then), so a push sends what
    was never sent or changed since, whatever its times: an episode imported from an old transcript after a push
    carries the old session's times, which the cursor on `updated_at` it replaces (`push.episodes`, left unread) had
    passed long ago; the first push after it sends every episode once more, which changes nothing there. The column
    is not named `project_id`: a project merge must not re-key it, so that the next push sends the moved episodes.
    The row goes with its episode (forget)."""
    run_script(
        conn,
        """
    CREATE TABLE team_pushed (
        episode_id TEXT PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
        updated_at TEXT NOT NULL,
        in_project TEXT NOT NULL
    ) WITHOUT ROWID;
    """,
    )


MIGRATIONS: list[Migration] = [
    ("team.001_sync", m001_team_sync),
    ("team.002_facts", m002_team_facts),
    ("team.003_pushed", m003_team_pushed),
]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


@dataclass(frozen=True)
class Link:
    dsn: str
    member: str
    connected_at: str


class TeamState:
    """Reads and writes the team tables of one local database."""

    def __init__(self, db: Database):
        self.db = db
        apply_migrations(db, FACT_MIGRATIONS)  # team_facts and team_fact_tx point into them
        apply_migrations(db, MIGRATIONS)

    def machine(self) -> str:
        value = self.db.meta_get(MACHINE_KEY)
        if value is None:
            value = str(uuid.uuid4())
            self.db.meta_set(MACHINE_KEY, value)
        return value

    # -- the connection ---------------------------------------------------------------------------
    def link(self) -> Link | None:
        row = self.db.one("SELECT dsn, member, connected_at FROM team_link WHERE id = 1")
        return Link(*row) if row else None

    def require_link(self) -> Link:
        link = self.link()
        if link is None:
            raise NotConnected("not connected to a team: run `tempera team connect DSN` first")
        return link

    def set_link(self, dsn: str, member: str) -> None:
        self.db.execute(
            "INSERT INTO team_link(id, dsn, member, connected_at) VALUES (1, ?, ?, ?) ON CONFLICT(id) "
            "DO UPDATE SET dsn = excluded.dsn, member = excluded.member, "
            "connected_at = excluded.connected_at",
            (dsn, member, _now()),
        )

    def disconnect(self) -> None:
        """Forget the connection, shares and cursors; what was pulled stays (it is memory now)."""
        with self.db.transaction():
            for table in ("team_link", "team_shared", "team_cursors", "team_runs", "team_projects"):
                self.db.execute(f"DELETE FROM {table}")

    # -- shared projects --------------------------------------------------------------------------
    def shared(self) -> list[str]:
        return [r[0] for r in self.db.query("SELECT project_id FROM team_shared ORDER BY shared_at")]

    def share(self, project_id: str) -> None:
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO team_shared(project_id, shared_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (project_id, _now()),
            )
            self.db.execute(
                "INSERT OR IGNORE INTO team_projects(pg_id, project_id) VALUES (?, ?)", (project_id, project_id)
            )

    def moves(self) -> list[tuple[str, str]]:
        """(team project, local project) pairs that a merge made differ: the team's rows have to follow."""
        return [
            (r[0], r[1])
            for r in self.db.query(
                "SELECT pg_id, project_id FROM team_projects WHERE pg_id <> project_id ORDER BY pg_id"
            )
        ]

    def moved(self, pg_id: str, project_id: str) -> None:
        """The team's rows of `pg_id` now are `project_id`'s: the pair becomes the target's own, and the source's
        cursors go (its rows come back under the target with new change numbers and merge by id)."""
        with self.db.transaction():
            self.db.execute("DELETE FROM team_projects WHERE pg_id = ?", (pg_id,))
            self.db.execute(
                "INSERT OR IGNORE INTO team_projects(pg_id, project_id) SELECT project_id, project_id "
                "FROM team_shared WHERE project_id = ?",
                (project_id,),
            )
            self.db.execute("DELETE FROM team_cursors WHERE name LIKE ?", (f"%:{pg_id}",))

    def unshare(self, project_id: str) -> bool:
        """Stop syncing a project; its cursors go, so sharing it again resumes from the start (idempotently)."""
        with self.db.transaction():
            cur = self.db.execute("DELETE FROM team_shared WHERE project_id = ?", (project_id,))
            self.db.execute("DELETE FROM team_cursors WHERE name LIKE ?", (f"%:{project_id}",))
        return cur.rowcount > 0

    # -- forgotten episodes ---------------------------------------------------------------------
    def bury_later(self, pairs: list[tuple[str, str]]) -> None:
        """Queue tombstones for forgotten episodes (id, project id); the next push sends them."""
        self.db.conn.executemany(
            "INSERT OR IGNORE INTO team_tombstones(id, project_id, forgotten_at) VALUES (?, ?, ?)",
            [(i, p, _now()) for i, p in pairs],
        )

    # -- cursors and runs -------------------------------------------------------------------------
    def cursor(self, name: str, project_id: str, default: str) -> str:
        row = self.db.one("SELECT value FROM team_cursors WHERE name = ?", (f"{name}:{project_id}",))
        return row[0] if row else default

    def set_cursor(self, name: str, project_id: str, value: str) -> None:
        """Call inside the transaction that applied what the cursor moves past."""
        self.db.execute(
            "INSERT INTO team_cursors(name, value) VALUES (?, ?) "
            "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            (f"{name}:{project_id}", value),
        )

    def run_started(self, direction: str) -> None:
        self.db.execute(
            "INSERT INTO team_runs(direction, started_at) VALUES (?, ?) ON CONFLICT(direction) "
            "DO UPDATE SET started_at = excluded.started_at",
            (direction, _now()),
        )

    def run_finished(self, direction: str, rows: int, error: str | None) -> None:
        now = _now()
        self.db.execute(
            "UPDATE team_runs SET finished_at = ?, rows = ?, error = ?, "
            "ok_at = CASE WHEN ? IS NULL THEN ? ELSE ok_at END WHERE direction = ?",
            (now, rows, error, error, now, direction),
        )

    def runs(self) -> dict[str, dict[str, object]]:
        rows = self.db.query("SELECT direction, started_at, finished_at, ok_at, rows, error FROM team_runs")
        return {
            r[0]: {"started_at": r[1], "finished_at": r[2], "ok_at": r[3], "rows": r[4], "error": r[5]} for r in rows
        }


def forget(db: Database, sel: forgetting.Selector) -> forgetting.Report:
    """`tempera forget` from the CLI and the browser, team or not (this module needs no PostgreSQL client): forget
    locally, then queue a tombstone for every forgotten episode of a shared project (read before, since forgetting
    a project also ends its share) for the next push."""
    state = TeamState(db)
    shared = state.shared() if state.link() else []
    marks = ",".join("?" * len(shared))
    before = db.query(f"SELECT id, project_id FROM episodes WHERE project_id IN ({marks})", shared) if shared else []
    report = forgetting.forget(db, sel)
    if before:
        left = {r[0] for r in db.query(f"SELECT id FROM episodes WHERE project_id IN ({marks})", shared)}
        gone = [(i, p) for i, p in before if i not in left]
        state.bury_later(gone)
        report.counts["team tombstones (sent by the next push)"] = len(gone)
    return report
