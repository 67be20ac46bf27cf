"""Push and pull: this machine's shareable memory to the team database, teammates' into the local store.

Per shared project and per kind of row there is one cursor per direction. A push sends a batch in one team
transaction and moves its local cursor after that commits; a pull applies a batch and moves its cursor in one
local transaction. A connection dropped anywhere leaves at most a batch to send or apply again, and both sides
merge by id (episodes keep their UUIDs and update only when newer; evidence, links and log rows are inserted
once), so a repeated batch changes nothing.

What never leaves: projects not shared, paused projects, episodes pulled from teammates, derived evidence
(propagation, temporal credit, chains: each machine derives its own from the direct rows). What leaves is
redacted again first (`<private>` blocks and secrets become placeholders), without local paths; a pulled
episode is redacted again before it is stored (a teammate's client may be older, its rules fewer).

Facts are shared as append-only events: an assertion (one datom, with its valid time and its transaction's
reason and time) and a retraction (naming the assertion). A datom is shared in project P when the transaction
that made it came from a turn of one of this machine's episodes of P (`episode_facts`); facts transacted by hand
or ingested from git belong to no project and stay local. A retraction travels with the datom it retracts,
whoever made it. Pulled events become local transactions (transaction time: when this machine learned them;
valid time as sent), linked to their episode when it is here, so forgetting the episode undoes them too. The
push side marks what it sent (`team_facts`) instead of keeping a number: SQLite reuses the ids of datoms that
`forget` deleted.

A forgotten episode leaves a tombstone (queued by `local.forget`, sent by the next push, even of a paused
project): the team database deletes the episode and everything about it (the closed copies later turns made of
its facts too) and refuses it from then on;
teammates' next pull forgets it as `tempera forget` would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import Connection

from tempera.core import forget as forgetting
from tempera.core import pause
from tempera.core.memory import Memory
from tempera.core.project import ProjectRef
from tempera.facts.store import FactStore
from tempera.team import pgdb
from tempera.team.errors import TeamError
from tempera.team.kinds import KINDS, TOMBSTONES, Kind, Push
from tempera.team.local import TeamState

BATCH = 200


@dataclass
class SyncReport:
    pushed: dict[str, int] = field(default_factory=dict)
    pulled: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # project id -> why it was not synced

    def add(self, direction: str, kind: str, n: int) -> None:
        side = self.pushed if direction == "push" else self.pulled
        side[kind] = side.get(kind, 0) + n


class TeamSync:
    """One sync session: a local memory, its team state, and an open team connection (autocommit). What each
    kind of row does is in `kinds.KINDS`; this runs their batches, transactions and cursors in its order."""

    def __init__(self, mem: Memory, conn: Connection, *, batch: int = BATCH):
        self.mem = mem
        self.batch = batch
        self.db = mem.db
        self.state = TeamState(mem.db)
        self.conn = conn
        self.machine: str = self.state.machine()
        self.facts = FactStore(mem.db)
        self.forgot = False  # a pull forgot episodes: wipe once it is committed

    def projects(self) -> list[ProjectRef]:
        rows = self.db.query(
            "SELECT p.id, p.name, p.path FROM team_shared s JOIN projects p ON p.id = s.project_id ORDER BY s.shared_at"
        )
        return [ProjectRef(*r) for r in rows]

    # -- both directions --------------------------------------------------------------------------
    def sync(self, report: SyncReport | None = None) -> SyncReport:
        report = report or SyncReport()
        self.push(report)
        self.pull(report)
        return report

    def _run(self, direction: str, report: SyncReport, fn: Any) -> SyncReport:
        """Run one direction, recording its outcome in `team_runs`; database errors become TeamErrors."""
        self.state.run_started(direction)
        side = report.pushed if direction == "push" else report.pulled
        try:
            pgdb.require_schema(self.conn)  # a database older than this Tempera: say so, not a missing table
            fn(report)
        except Exception as exc:
            message = str(exc).strip() or type(exc).__name__
            self.state.run_finished(direction, sum(side.values()), message)
            if isinstance(exc, psycopg.Error):
                raise TeamError(f"team {direction} failed: {message}") from exc
            raise
        self.state.run_finished(direction, sum(side.values()), None)
        return report

    # -- push -------------------------------------------------------------------------------------
    def push(self, report: SyncReport | None = None) -> SyncReport:
        return self._run("push", report or SyncReport(), self._push_all)

    def _push_all(self, report: SyncReport) -> None:
        paused = pause.paused_projects(self.db.path.parent)
        report.add("push", "tombstones", self.bury())
        self._follow_merges(report)
        for ref in self.projects():
            if ref.id in paused:
                report.skipped[ref.id] = "paused"
                continue
            try:
                self.conn.execute("SELECT tempera.share_project(%s, %s)", (ref.id, ref.name))
            except psycopg.errors.ObjectNotInPrerequisiteState as exc:  # a teammate merged it into another
                report.skipped[ref.id] = exc.diag.message_primary or str(exc)
                continue
            for kind in KINDS:
                for source in kind.pushes:
                    report.add("push", source.key, self.send(kind, source, ref))

    def _follow_merges(self, report: SyncReport) -> None:
        """After `projects merge` here, the team's rows of the source become the (shared) target's."""
        shared = set(self.state.shared())
        for pg_id, project_id in self.state.moves():
            if project_id in shared:
                name = self.db.one("SELECT name FROM projects WHERE id = ?", (project_id,))
                moved = self.conn.execute(
                    "SELECT tempera.move_project(%s, %s, %s)", (pg_id, project_id, name[0] if name else project_id)
                ).fetchone()[0]
                report.add("push", "moved episodes", int(moved))
            self.state.moved(pg_id, project_id)

    def bury(self) -> int:
        """Send the queued tombstones of projects the team holds (those it never had hold nothing to bury)."""
        pending = self.db.query("SELECT id, project_id FROM team_tombstones ORDER BY forgotten_at, id")
        if not pending:
            return 0
        known = {
            r[0]
            for r in self.conn.execute(
                "SELECT id FROM tempera.projects WHERE id = ANY(%s)", (list({p for _, p in pending}),)
            )
        }
        with self.conn.transaction():
            with self.conn.cursor() as cur:
                cur.executemany(TOMBSTONES.insert, [(i, p, self.machine) for i, p in pending if p in known])
        with self.db.transaction():
            self.db.conn.executemany("DELETE FROM team_tombstones WHERE id = ?", [(i,) for i, _ in pending])
        return sum(p in known for _, p in pending)

    def send(self, kind: Kind, source: Push, ref: ProjectRef) -> int:
        """Push what `source` has not sent yet in batches: each one team transaction, then remembered here."""
        sent = 0
        while rows := source.pending(self, ref):
            events = source.events(self, ref, rows)
            with self.conn.transaction():
                with self.conn.cursor() as cur:
                    cur.executemany(kind.insert, events)
            with self.db.transaction():
                source.sent(self, ref, rows, events)
            sent += len(rows)
        return sent

    # -- pull -------------------------------------------------------------------------------------
    def pull(self, report: SyncReport | None = None) -> SyncReport:
        return self._run("pull", report or SyncReport(), self._pull_all)

    def _pull_all(self, report: SyncReport) -> None:
        for ref in self.projects():
            for kind in KINDS:
                report.add("pull", kind.table, self._pull(kind, ref))
        if self.forgot:  # what teammates forgot is made unrecoverable here too, once committed
            forgetting.wipe(self.db)
            self.forgot = False

    def _pull(self, kind: Kind, ref: ProjectRef) -> int:
        """Fetch teammates' rows after the cursor in change order; apply each batch with its cursor, locally."""
        got = 0
        while True:
            after = int(self.state.cursor(f"pull.{kind.table}", ref.id, "0"))
            rows = self.conn.execute(
                f"SELECT seq, {kind.columns} FROM tempera.{kind.table} WHERE project_id = %s AND "
                f"seq > %s AND origin <> %s ORDER BY seq LIMIT %s",
                (ref.id, after, self.machine, self.batch),
            ).fetchall()
            if not rows:
                return got
            prepared = kind.prepare(self, ref, [r[1:] for r in rows])
            with self.db.transaction():
                kind.apply(self, ref, prepared)
                self.state.set_cursor(f"pull.{kind.table}", ref.id, str(rows[-1][0]))
            got += len(rows)
