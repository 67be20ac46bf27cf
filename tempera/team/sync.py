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

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from psycopg import Connection

from tempera.core import forget as forgetting
from tempera.core import pause
from tempera.core.learning.evidence import DIRECT_SOURCES
from tempera.core.memory import Memory
from tempera.core.models import Episode, ValidityScope
from tempera.core.project import ProjectRef, relative_to
from tempera.core.redact import redact_data
from tempera.core.selfimprove.asks import ASKS
from tempera.core.selfimprove.logs import LogKind, add_entry
from tempera.core.selfimprove.mistakes import MISTAKES
from tempera.core.utility import recompute
from tempera.facts.store import FactStore
from tempera.team import pgdb
from tempera.team.errors import TeamError
from tempera.team.local import TeamState
from tempera.team.pgschema import EMBED_DIM

BATCH = 200
LOG_KINDS: tuple[LogKind, ...] = (MISTAKES, ASKS)
PULLED_SOURCE = "team"  # the `source` of log rows pulled from teammates (never pushed back)
NOT_PULLED = "json_extract(e.data, '$.source.author') IS NULL"
_TX_EPISODE = "(SELECT tx, min(episode_id) AS episode_id FROM episode_facts GROUP BY tx)"  # a fact tx's episode


@dataclass
class SyncReport:
    pushed: dict[str, int] = field(default_factory=dict)
    pulled: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # project id -> why it was not synced

    def add(self, direction: str, kind: str, n: int) -> None:
        side = self.pushed if direction == "push" else self.pulled
        side[kind] = side.get(kind, 0) + n


def _ts(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _relative_paths(value: Any, root: str) -> Any:
    """Every string inside `value` with paths under `root` written relative to it."""
    if isinstance(value, str):
        return relative_to(value, root) if value.startswith(root) else value.replace(root, "")
    if isinstance(value, dict):
        return {k: _relative_paths(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_relative_paths(v, root) for v in value]
    return value


def _portable(ep: Episode) -> Episode:
    """The episode without this machine's paths: paths under the project root relative to it (in files and in
    text alike), no transcript path."""
    ep.source.transcript_path = None
    root, ep.project_path = ep.project_path, None
    if not root:
        return ep
    return Episode.model_validate(_relative_paths(ep.model_dump(mode="json"), root.rstrip("/") + "/"))


def _placed(ep: Episode, ref: ProjectRef) -> Episode:
    """A teammate's episode in this machine's checkout of the project: its relative files under our root."""
    if ref.path:
        ep.context.files_read = [os.path.join(ref.path, f) for f in ep.context.files_read]
        ep.context.files_modified = [os.path.join(ref.path, f) for f in ep.context.files_modified]
    ep.project_path = ref.path
    return ep


class TeamSync:
    """One sync session: a local memory, its team state, and an open team connection (autocommit)."""

    def __init__(self, mem: Memory, conn: Connection, *, batch: int = BATCH):
        self.mem = mem
        self.batch = batch
        self.db = mem.db
        self.state = TeamState(mem.db)
        self.conn = conn
        self.machine = self.state.machine()
        self.facts = FactStore(mem.db)
        self._forgot = False

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
            report.add("push", "episodes", self._push_episodes(ref))
            report.add("push", "evidence", self._push_evidence(ref))
            report.add("push", "links", self._push_links(ref))
            for kind in LOG_KINDS:
                report.add("push", kind.table, self._push_log(ref, kind))
            report.add("push", "facts", self._push_assertions(ref) + self._push_retractions(ref))

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
                cur.executemany(
                    "INSERT INTO tempera.tombstones(episode_id, project_id, origin) VALUES (%s, %s, %s) "
                    "ON CONFLICT DO NOTHING",
                    [(i, p, self.machine) for i, p in pending if p in known],
                )
        with self.db.transaction():
            self.db.conn.executemany("DELETE FROM team_tombstones WHERE id = ?", [(i,) for i, _ in pending])
        return sum(p in known for _, p in pending)

    def _tx_uid(self, at: int, tx: int) -> str:
        return f"{self.machine}:{at}.{tx}"

    def _push_facts(self, select: str, params: tuple[Any, ...], shape: Any, mark: str) -> int:
        """Send fact events in batches: rows of `select` (params, then the batch size) become (event, local mark)
        pairs by `shape`; each batch is one team transaction, then its marks are written here (`mark`)."""
        sent = 0
        while True:
            rows = self.db.query(select, (*params, self.batch))
            if not rows:
                return sent
            events, marks = zip(*(shape(r) for r in rows))
            with self.conn.transaction():
                with self.conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO tempera.facts(uid, op, datom, tx, project_id, origin, episode_id, e, a, vt, v, "
                        "valid_from, valid_to, reason, at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                        "%s, %s, %s) ON CONFLICT (uid) DO NOTHING",
                        events,
                    )
            with self.db.transaction():
                self.db.conn.executemany(mark, marks)
            sent += len(rows)

    def _push_assertions(self, ref: ProjectRef) -> int:
        """This machine's datoms made from turns of its own episodes of the project, not sent yet."""

        def shape(r: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
            i, e, a, vt, v, vfrom, vto, tx, at, reason, episode_id = r
            uid = f"{self._tx_uid(at, tx)}.{i}"
            return (
                (
                    uid,
                    "assert",
                    uid,
                    self._tx_uid(at, tx),
                    ref.id,
                    self.machine,
                    episode_id,
                    e,
                    a,
                    vt,
                    json.dumps(redact_data(v)),
                    vfrom,
                    vto,
                    redact_data(reason),
                    at,
                ),
                (i, uid, ref.id),
            )

        return self._push_facts(
            "SELECT d.id, d.e, d.a, d.vt, d.v, d.valid_from, d.valid_to, d.tx, t.at, t.reason, f.episode_id "
            f"FROM fact_datoms d JOIN fact_tx t ON t.tx = d.tx JOIN {_TX_EPISODE} f ON f.tx = d.tx "
            "JOIN episodes e ON e.id = f.episode_id WHERE e.project_id = ? AND "
            + NOT_PULLED
            + " AND d.id NOT IN (SELECT local_id FROM team_facts) "
            "AND d.tx NOT IN (SELECT local_tx FROM team_fact_tx) ORDER BY d.id LIMIT ?",
            (ref.id,),
            shape,
            "INSERT INTO team_facts(local_id, uid, project_id, pulled) VALUES (?, ?, ?, 0)",
        )

    def _push_retractions(self, ref: ProjectRef) -> int:
        """Retractions made here of datoms the team knows (ours or pulled), each once."""

        def shape(r: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
            local_id, datom, tx, at, reason, episode_id = r
            uid = f"{datom}/r/{self._tx_uid(at, tx)}"
            return (
                (
                    uid,
                    "retract",
                    datom,
                    self._tx_uid(at, tx),
                    ref.id,
                    self.machine,
                    episode_id,
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    redact_data(reason),
                    at,
                ),
                (uid, local_id),
            )

        return self._push_facts(
            "SELECT tf.local_id, tf.uid, d.retracted_tx, t.at, t.reason, f.episode_id FROM team_facts tf "
            "JOIN fact_datoms d ON d.id = tf.local_id JOIN fact_tx t ON t.tx = d.retracted_tx "
            f"LEFT JOIN {_TX_EPISODE} f ON f.tx = d.retracted_tx WHERE tf.project_id = ? "
            "AND d.retracted_tx NOT IN (SELECT local_tx FROM team_fact_tx) "
            "AND tf.retraction IS NOT (tf.uid || '/r/' || ? || ':' || t.at || '.' || d.retracted_tx) "
            "ORDER BY d.retracted_tx, tf.local_id LIMIT ?",
            (ref.id, self.machine),
            shape,
            "UPDATE team_facts SET retraction = ? WHERE local_id = ?",
        )

    def _vector_blobs(self, rowids: Sequence[int]) -> dict[int, bytes]:
        if not rowids or self.db.meta_get("embedding_model") is None or not self.db.has_vec:
            return {}
        marks = ",".join("?" * len(rowids))
        return {
            r[0]: r[1]
            for r in self.db.query(f"SELECT rowid, embedding FROM episode_vec WHERE rowid IN ({marks})", list(rowids))
        }

    def _push_episodes(self, ref: ProjectRef) -> int:
        model = self.db.meta_get("embedding_model")
        dim = int(self.db.meta_get("embedding_dim") or 0)
        sent = 0
        while True:  # what was never pushed, or changed (or moved to this project) since (`team_pushed`)
            rows = self.db.query(
                "SELECT e.rowid, e.updated_at, e.data FROM episodes e LEFT JOIN team_pushed p ON p.episode_id = e.id "
                "WHERE e.project_id = ? AND "
                + NOT_PULLED
                + " AND e.id NOT IN (SELECT episode_id FROM episode_retirements) AND (p.episode_id IS NULL "
                "OR p.updated_at != e.updated_at OR p.in_project != e.project_id) ORDER BY e.rowid LIMIT ?",
                (ref.id, self.batch),
            )
            if not rows:
                return sent
            blobs = self._vector_blobs([r[0] for r in rows]) if dim == EMBED_DIM else {}
            params = []
            for rowid_, _updated, data in rows:
                ep = _portable(Episode.model_validate_json(data).redacted())
                blob = blobs.get(rowid_)
                vec = np.frombuffer(blob, dtype=np.float32) if blob is not None else None
                params.append(
                    (
                        ep.id,
                        ref.id,
                        self.machine,
                        ep.session_id,
                        ep.created_at,
                        ep.updated_at,
                        ep.summary,
                        ep.scope.transferable,
                        ep.search_text(),
                        model if vec is not None else None,
                        vec,
                        json.dumps(ep.model_dump(mode="json", exclude={"utility"})),
                    )
                )
            with self.conn.transaction():
                with self.conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO tempera.episodes(id, project_id, origin, session_id, created_at, updated_at, "
                        "summary, transferable, body, model, embedding, data) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
                        "session_id = EXCLUDED.session_id, updated_at = EXCLUDED.updated_at, "
                        "summary = EXCLUDED.summary, transferable = EXCLUDED.transferable, body = EXCLUDED.body, "
                        "model = EXCLUDED.model, embedding = EXCLUDED.embedding, data = EXCLUDED.data "
                        "WHERE tempera.episodes.updated_at < EXCLUDED.updated_at",
                        params,
                    )
            with self.db.transaction():
                self.db.conn.executemany(
                    "INSERT INTO team_pushed(episode_id, updated_at, in_project) VALUES (?, ?, ?) ON CONFLICT "
                    "DO UPDATE SET updated_at = excluded.updated_at, in_project = excluded.in_project",
                    [(p[0], updated, ref.id) for p, (_, updated, _) in zip(params, rows)],
                )
            sent += len(rows)

    def _push_rows(self, name: str, ref: ProjectRef, select: str, insert: str, shape: Any) -> int:
        """Push rows selected by `select` (params: project id, cursor, limit; first column the cursor) in batches."""
        sent = 0
        while True:
            after = int(self.state.cursor(name, ref.id, "0"))
            rows = self.db.query(select, (ref.id, after, self.batch))
            if not rows:
                return sent
            with self.conn.transaction():
                with self.conn.cursor() as cur:
                    cur.executemany(insert, [shape(r) for r in rows])
            self.state.set_cursor(name, ref.id, str(rows[-1][0]))
            sent += len(rows)

    def _push_evidence(self, ref: ProjectRef) -> int:
        sources = ",".join(f"'{s}'" for s in DIRECT_SOURCES)
        select = (
            f"SELECT f.id, f.episode_id, f.signal, f.weight, f.source, f.evidence, f.created_at "
            f"FROM feedback_events f JOIN episodes e ON e.id = f.episode_id WHERE e.project_id = ?1 AND "
            f"f.id > ?2 AND f.source IN ({sources}) AND f.id NOT IN (SELECT local_id FROM team_evidence) "
            f"ORDER BY f.id LIMIT ?3"
        )
        return self._push_rows(
            "push.evidence",
            ref,
            select,
            "INSERT INTO tempera.evidence(uid, episode_id, project_id, origin, signal, weight, source, evidence, "
            "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (uid) DO NOTHING",
            lambda r: (
                f"{self.machine}:{r[0]}",
                r[1],
                ref.id,
                self.machine,
                r[2],
                r[3],
                r[4],
                json.dumps(redact_data(json.loads(r[5] or "{}"))),
                _ts(r[6]),
            ),
        )

    def _push_links(self, ref: ProjectRef) -> int:
        return self._push_rows(
            "push.links",
            ref,
            "SELECT l.rowid, l.src_id, l.dst_id, l.relationship, l.weight, l.created_at FROM episode_links l "
            "JOIN episodes e ON e.id = l.src_id WHERE e.project_id = ?1 AND l.rowid > ?2 AND "
            + NOT_PULLED
            + " ORDER BY l.rowid LIMIT ?3",
            "INSERT INTO tempera.links(src_id, dst_id, relationship, weight, project_id, origin, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            lambda r: (r[1], r[2], r[3], r[4], ref.id, self.machine, _ts(r[5])),
        )

    def _push_log(self, ref: ProjectRef, kind: LogKind) -> int:
        cols = ", ".join(kind.fields)
        return self._push_rows(
            f"push.{kind.table}",
            ref,
            f"SELECT id, {cols}, episode_id, session_id, scope, created_at, "
            f"(SELECT json_group_array(path) FROM selfimprove_files WHERE kind = '{kind.name}' AND row_id = t.id) "
            f"FROM {kind.table} t WHERE project_id = ?1 AND id > ?2 AND source <> '{PULLED_SOURCE}' "
            f"ORDER BY id LIMIT ?3",
            "INSERT INTO tempera.log_entries(uid, kind, project_id, origin, episode_id, session_id, fields, files, "
            "scope, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (uid) DO NOTHING",
            lambda r: (
                f"{self.machine}:{kind.table}:{r[0]}",
                kind.table,
                ref.id,
                self.machine,
                r[len(kind.fields) + 1],
                r[len(kind.fields) + 2],
                json.dumps(redact_data(dict(zip(kind.fields, r[1 : len(kind.fields) + 1])))),
                json.loads(r[-1] or "[]"),
                r[len(kind.fields) + 3],
                _ts(r[len(kind.fields) + 4]),
            ),
        )

    # -- pull -------------------------------------------------------------------------------------
    def pull(self, report: SyncReport | None = None) -> SyncReport:
        return self._run("pull", report or SyncReport(), self._pull_all)

    def _pull_all(self, report: SyncReport) -> None:
        for ref in self.projects():
            report.add(
                "pull",
                "episodes",
                self._pull("episodes", ref, self._apply_episodes, "id, author, data, model, embedding"),
            )
            report.add(
                "pull",
                "evidence",
                self._pull(
                    "evidence",
                    ref,
                    self._apply_evidence,
                    "uid, episode_id, author, signal, weight, source, evidence, created_at",
                ),
            )
            report.add(
                "pull",
                "links",
                self._pull("links", ref, self._apply_links, "src_id, dst_id, relationship, weight, created_at"),
            )
            report.add(
                "pull",
                "log_entries",
                self._pull(
                    "log_entries",
                    ref,
                    self._apply_logs,
                    "uid, kind, author, episode_id, session_id, fields, files, scope",
                ),
            )
            report.add(
                "pull",
                "facts",
                self._pull(
                    "facts",
                    ref,
                    self._apply_facts,
                    "uid, op, datom, tx, author, episode_id, e, a, vt, v, valid_from, valid_to, reason",
                ),
            )
            report.add("pull", "tombstones", self._pull("tombstones", ref, self._apply_tombstones, "episode_id"))
        if self._forgot:  # what teammates forgot is made unrecoverable here too, once committed
            forgetting.wipe(self.db)
            self._forgot = False

    def _pull(self, table: str, ref: ProjectRef, apply: Any, columns: str) -> int:
        """Fetch teammates' rows after the cursor in change order; apply each batch with its cursor, locally."""
        got = 0
        while True:
            after = int(self.state.cursor(f"pull.{table}", ref.id, "0"))
            rows = self.conn.execute(
                f"SELECT seq, {columns} FROM tempera.{table} WHERE project_id = %s AND "
                f"seq > %s AND origin <> %s ORDER BY seq LIMIT %s",
                (ref.id, after, self.machine, self.batch),
            ).fetchall()
            if not rows:
                return got
            prepared = apply(ref, [r[1:] for r in rows], prepare=True)
            with self.db.transaction():
                apply(ref, prepared, prepare=False)
                self.state.set_cursor(f"pull.{table}", ref.id, str(rows[-1][0]))
            got += len(rows)

    def _apply_episodes(self, ref: ProjectRef, rows: list[Any], *, prepare: bool) -> Any:
        """Prepare: episodes and their vectors, embedding outside the write transaction. Apply: store them."""
        store = self.mem.store
        if prepare:
            episodes = []
            for eid, author, data, _model, _vec in rows:
                ep = _placed(Episode.model_validate(data).redacted(), ref)
                ep.source.author = author
                episodes.append(ep)
            vectors = None
            if store.vectors.writable():
                model = store.vectors.embedder.spec.name  # type: ignore[union-attr]
                missing = [i for i, r in enumerate(rows) if r[3] != model or r[4] is None]
                made = store.vectors.embedder.embed([episodes[i].embed_text() for i in missing]) if missing else []  # type: ignore[union-attr]
                vectors = np.zeros((len(rows), store.vectors.embedder.spec.dim), dtype=np.float32)  # type: ignore[union-attr]
                for i, r in enumerate(rows):
                    if r[4] is not None and r[3] == model:
                        vectors[i] = r[4].to_numpy()
                for i, vec in zip(missing, made):
                    vectors[i] = vec
            return episodes, vectors
        episodes, vectors = rows
        known = {
            r[0]: r[1]
            for r in self.db.query(
                f"SELECT id, updated_at FROM episodes WHERE id IN ({','.join('?' * len(episodes))})",
                [e.id for e in episodes],
            )
        }
        fresh = [i for i, e in enumerate(episodes) if e.id not in known]
        if fresh:
            store.add_many([episodes[i] for i in fresh], ref, vectors=None if vectors is None else vectors[fresh])
        for i, ep in enumerate(episodes):
            if ep.id in known and _ts(known[ep.id]) < ep.updated_at:
                updated_at = ep.updated_at
                store.update(ep)
                self.db.execute("UPDATE episodes SET updated_at = ? WHERE id = ?", (updated_at.isoformat(), ep.id))
        return None

    def _apply_evidence(self, ref: ProjectRef, rows: list[Any], *, prepare: bool) -> Any:
        if prepare:
            return rows
        touched: set[str] = set()
        for uid, episode_id, author, signal, weight, source, evidence, created_at in rows:
            if self.db.one("SELECT 1 FROM episodes WHERE id = ?", (episode_id,)) is None:
                continue  # an episode its author kept to themselves
            if self.db.one("SELECT 1 FROM team_evidence WHERE uid = ?", (uid,)):
                continue
            cur = self.db.execute(
                "INSERT INTO feedback_events(episode_id, signal, weight, source, evidence, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    episode_id,
                    signal,
                    weight,
                    source,
                    json.dumps({**(evidence or {}), "team_author": author}),
                    created_at.isoformat(),
                ),
            )
            self.db.execute("INSERT INTO team_evidence(local_id, uid) VALUES (?, ?)", (cur.lastrowid, uid))
            if signal == "helpful":
                self.db.execute(
                    "UPDATE episodes SET last_useful_at = max(COALESCE(last_useful_at, ''), ?) WHERE id = ?",
                    (created_at.isoformat(), episode_id),
                )
            touched.add(episode_id)
        for episode_id in touched:
            recompute(self.db, episode_id)
        return None

    def _apply_links(self, ref: ProjectRef, rows: list[Any], *, prepare: bool) -> Any:
        if prepare:
            return rows
        for src, dst, relationship, weight, created_at in rows:
            self.db.execute(
                "INSERT OR IGNORE INTO episode_links(src_id, dst_id, relationship, weight, created_at) "
                "SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM episodes WHERE id = ?) "
                "AND EXISTS (SELECT 1 FROM episodes WHERE id = ?)",
                (src, dst, relationship, weight, created_at.isoformat(), src, dst),
            )
        return None

    def _apply_logs(self, ref: ProjectRef, rows: list[Any], *, prepare: bool) -> Any:
        if prepare:
            return rows
        kinds = {k.table: k for k in LOG_KINDS}
        for uid, table, _author, episode_id, session_id, fields, files, scope in rows:
            add_entry(
                self.db,
                kinds[table],
                ref,
                fields,
                files=files,
                scope=ValidityScope.parse(scope),
                episode_id=episode_id,
                session_id=session_id,
                source=PULLED_SOURCE,
                dedupe_key=uid,
            )
        return None

    def _apply_facts(self, ref: ProjectRef, rows: list[Any], *, prepare: bool) -> Any:
        """Each team transaction's events (in change order) as one local transaction; events seen before, and
        retractions of datoms this machine never had, change nothing."""
        if prepare:
            return rows
        groups: dict[str, list[Any]] = {}
        for row in rows:
            groups.setdefault(row[3], []).append(row)
        for tx_uid, events in groups.items():
            known = {
                r[0]
                for r in self.db.query(
                    f"SELECT uid FROM team_facts WHERE uid IN ({','.join('?' * len(events))})", [e[0] for e in events]
                )
            }
            new = [e for e in events if e[1] == "assert" and e[0] not in known]
            ends: dict[int, str] = {}
            for ev in events:
                if ev[1] == "retract":
                    found = self.db.one(
                        "SELECT tf.local_id FROM team_facts tf JOIN fact_datoms d ON d.id = "
                        "tf.local_id WHERE tf.uid = ? AND d.retracted_tx IS NULL",
                        (ev[2],),
                    )
                    if found:
                        ends[int(found[0])] = ev[0]
            if not new and not ends:
                continue
            first = events[0]
            local_tx, ids = self.facts.record(
                f"teammate {first[4]}: {first[12]}", [(e[6], e[7], e[8], e[9], e[10], e[11]) for e in new], list(ends)
            )
            self.db.execute("INSERT INTO team_fact_tx(local_tx, uid) VALUES (?, ?)", (local_tx, tx_uid))
            self.db.conn.executemany(
                "INSERT INTO team_facts(local_id, uid, project_id, pulled) VALUES (?, ?, ?, 1)",
                [(i, e[0], ref.id) for i, e in zip(ids, new)],
            )
            self.db.conn.executemany(
                "UPDATE team_facts SET retraction = ? WHERE local_id = ?", [(uid, i) for i, uid in ends.items()]
            )
            episode_id = first[5]
            if episode_id and self.db.one("SELECT 1 FROM episodes WHERE id = ?", (episode_id,)):
                forgetting.link_fact_tx(self.db, episode_id, local_tx)
        return None

    def _apply_tombstones(self, ref: ProjectRef, rows: list[Any], *, prepare: bool) -> Any:
        """A teammate forgot these episodes: forget them here, with all that was derived from them."""
        if prepare:
            return rows
        for (episode_id,) in rows:
            if self.db.one("SELECT 1 FROM episodes WHERE id = ?", (episode_id,)):
                forgetting.forget_within(self.db, forgetting.Selector("episode", episode_id))
                self._forgot = True
        return None
