"""The kinds of shared rows, one entry each: how to select what to push, how to insert it in PostgreSQL, and how
to apply what is pulled. `TeamSync` (sync.py) runs the batches, transactions and cursors around them, in the
order of `KINDS`.

How a push remembers what it sent differs by kind: a cursor on a growing local id (evidence, links, log rows),
the episode as it was sent (`team_pushed`: an episode changes, and an import can bring old times), or a mark per
fact (`team_facts`: SQLite reuses the ids of datoms that `forget` deleted). A pull always keeps one cursor per
team table and project (`pull.<table>`), on the team's change numbers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from tempera.core import forget as forgetting
from tempera.core.db import Database
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
from tempera.team.local import TeamState
from tempera.team.pgschema import EMBED_DIM

Row = tuple[Any, ...]
LOG_KINDS: tuple[LogKind, ...] = (MISTAKES, ASKS)
PULLED_SOURCE = "team"  # the `source` of log rows pulled from teammates (never pushed back)
NOT_PULLED = "json_extract(e.data, '$.source.author') IS NULL"
_TX_EPISODE = "(SELECT tx, min(episode_id) AS episode_id FROM episode_facts GROUP BY tx)"  # a fact tx's episode


class Session(Protocol):
    """What a kind uses of the sync session (`sync.TeamSync`)."""

    mem: Memory
    db: Database
    state: TeamState
    facts: FactStore
    machine: str
    batch: int
    forgot: bool  # set when a pull forgot episodes: the session wipes once the pull is committed


@dataclass(frozen=True)
class Push:
    """One source of rows to push: `pending` selects a batch not sent yet (empty when done), `events` makes them
    the team table's rows (the parameters of the kind's insert), `sent` remembers them here once the team
    transaction committed (called inside a local transaction). Counted in the push report under `key`."""

    key: str
    pending: Callable[[Session, ProjectRef], list[Row]]
    events: Callable[[Session, ProjectRef, list[Row]], list[Row]]
    sent: Callable[[Session, ProjectRef, list[Row], list[Row]], None]


def _as_is(ts: Session, ref: ProjectRef, rows: list[Row]) -> Any:
    return rows


@dataclass(frozen=True)
class Kind:
    """One team table: its insert, the sources pushed into it (in this order), and its pull: the columns read
    after the cursor, `prepare` (outside the local transaction: the slow part) and `apply` (inside it, with
    the cursor). Counted in the pull report under `table`."""

    table: str
    insert: str
    pushes: tuple[Push, ...]
    columns: str
    apply: Callable[[Session, ProjectRef, Any], None]
    prepare: Callable[[Session, ProjectRef, list[Row]], Any] = _as_is


def _ts(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _exists(ts: Session, episode_id: str) -> bool:
    return ts.db.one("SELECT 1 FROM episodes WHERE id = ?", (episode_id,)) is not None


def _each(shape: Callable[[Session, ProjectRef, Row], Row]) -> Callable[[Session, ProjectRef, list[Row]], list[Row]]:
    """Events made row by row."""
    return lambda ts, ref, rows: [shape(ts, ref, r) for r in rows]


def _cursor_push(key: str, name: str, select: str, shape: Callable[[Session, ProjectRef, Row], Row]) -> Push:
    """A source remembered by a cursor: `select` (params: project id, cursor, limit) has the cursor first."""

    def pending(ts: Session, ref: ProjectRef) -> list[Row]:
        return ts.db.query(select, (ref.id, int(ts.state.cursor(name, ref.id, "0")), ts.batch))

    def sent(ts: Session, ref: ProjectRef, rows: list[Row], events: list[Row]) -> None:
        ts.state.set_cursor(name, ref.id, str(rows[-1][0]))

    return Push(key, pending, _each(shape), sent)


def _marked_push(
    key: str,
    select: str,
    params: Callable[[Session, ProjectRef], Row],
    shape: Callable[[Session, ProjectRef, Row], Row],
    mark: str,
    marks: Callable[[ProjectRef, Row, Row], Row],
) -> Push:
    """A source remembered by marks: `select` (params, then the limit) picks rows never marked; `shape` makes a
    row's event, `marks` the parameters of `mark` (the SQL that marks it here) from the row and its event."""

    def pending(ts: Session, ref: ProjectRef) -> list[Row]:
        return ts.db.query(select, (*params(ts, ref), ts.batch))

    def sent(ts: Session, ref: ProjectRef, rows: list[Row], events: list[Row]) -> None:
        ts.db.conn.executemany(mark, [marks(ref, r, e) for r, e in zip(rows, events)])

    return Push(key, pending, _each(shape), sent)


# -- episodes -------------------------------------------------------------------------------------------


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


def _episodes_pending(ts: Session, ref: ProjectRef) -> list[Row]:
    """What was never pushed, or changed (or moved to this project) since (`team_pushed`)."""
    return ts.db.query(
        "SELECT e.rowid, e.updated_at, e.data FROM episodes e LEFT JOIN team_pushed p ON p.episode_id = e.id "
        "WHERE e.project_id = ? AND "
        + NOT_PULLED
        + " AND e.id NOT IN (SELECT episode_id FROM episode_retirements) AND (p.episode_id IS NULL "
        "OR p.updated_at != e.updated_at OR p.in_project != e.project_id) ORDER BY e.rowid LIMIT ?",
        (ref.id, ts.batch),
    )


def _episodes_events(ts: Session, ref: ProjectRef, rows: list[Row]) -> list[Row]:
    """Redacted and portable, with the stored vector when it is the team's size."""
    model = ts.db.meta_get("embedding_model")
    dim = int(ts.db.meta_get("embedding_dim") or 0)
    blobs = ts.mem.store.vectors.blobs([r[0] for r in rows]) if dim == EMBED_DIM else {}
    events = []
    for rowid_, _updated, data in rows:
        ep = _portable(Episode.model_validate_json(data).redacted())
        blob = blobs.get(rowid_)
        vec = np.frombuffer(blob, dtype=np.float32) if blob is not None else None
        events.append(
            (
                ep.id,
                ref.id,
                ts.machine,
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
    return events


def _episodes_sent(ts: Session, ref: ProjectRef, rows: list[Row], events: list[Row]) -> None:
    ts.db.conn.executemany(
        "INSERT INTO team_pushed(episode_id, updated_at, in_project) VALUES (?, ?, ?) ON CONFLICT "
        "DO UPDATE SET updated_at = excluded.updated_at, in_project = excluded.in_project",
        [(e[0], updated, ref.id) for e, (_, updated, _) in zip(events, rows)],
    )


def _episodes_prepare(ts: Session, ref: ProjectRef, rows: list[Row]) -> Any:
    """Teammates' episodes and their vectors, embedding outside the write transaction."""
    episodes = []
    for eid, author, data, _model, _vec in rows:
        ep = _placed(Episode.model_validate(data).redacted(), ref)
        ep.source.author = author
        episodes.append(ep)
    vectors = None
    embedder = ts.mem.store.vectors.writable_embedder()
    if embedder is not None:
        model = embedder.spec.name
        missing = [i for i, r in enumerate(rows) if r[3] != model or r[4] is None]
        made = embedder.embed([episodes[i].embed_text() for i in missing]) if missing else []
        vectors = np.zeros((len(rows), embedder.spec.dim), dtype=np.float32)
        for i, r in enumerate(rows):
            if r[4] is not None and r[3] == model:
                vectors[i] = r[4].to_numpy()
        for i, vec in zip(missing, made):
            vectors[i] = vec
    return episodes, vectors


def _episodes_apply(ts: Session, ref: ProjectRef, prepared: Any) -> None:
    """New episodes are added, known ones updated when the team's copy is newer."""
    store = ts.mem.store
    episodes, vectors = prepared
    known = {
        r[0]: r[1]
        for r in ts.db.query(
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
            ts.db.execute("UPDATE episodes SET updated_at = ? WHERE id = ?", (updated_at.isoformat(), ep.id))


EPISODES = Kind(
    "episodes",
    "INSERT INTO tempera.episodes(id, project_id, origin, session_id, created_at, updated_at, "
    "summary, transferable, body, model, embedding, data) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
    "session_id = EXCLUDED.session_id, updated_at = EXCLUDED.updated_at, "
    "summary = EXCLUDED.summary, transferable = EXCLUDED.transferable, body = EXCLUDED.body, "
    "model = EXCLUDED.model, embedding = EXCLUDED.embedding, data = EXCLUDED.data "
    "WHERE tempera.episodes.updated_at < EXCLUDED.updated_at",
    (Push("episodes", _episodes_pending, _episodes_events, _episodes_sent),),
    "id, author, data, model, embedding",
    _episodes_apply,
    _episodes_prepare,
)


# -- evidence (direct only: each machine derives the rest) ------------------------------------------------


def _evidence_apply(ts: Session, ref: ProjectRef, rows: list[Row]) -> None:
    touched: set[str] = set()
    for uid, episode_id, author, signal, weight, source, evidence, created_at in rows:
        if not _exists(ts, episode_id):
            continue  # an episode its author kept to themselves
        if ts.db.one("SELECT 1 FROM team_evidence WHERE uid = ?", (uid,)):
            continue
        cur = ts.db.execute(
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
        ts.db.execute("INSERT INTO team_evidence(local_id, uid) VALUES (?, ?)", (cur.lastrowid, uid))
        if signal == "helpful":
            ts.db.execute(
                "UPDATE episodes SET last_useful_at = max(COALESCE(last_useful_at, ''), ?) WHERE id = ?",
                (created_at.isoformat(), episode_id),
            )
        touched.add(episode_id)
    for episode_id in touched:
        recompute(ts.db, episode_id)


_SOURCES = ",".join(f"'{s}'" for s in DIRECT_SOURCES)
EVIDENCE = Kind(
    "evidence",
    "INSERT INTO tempera.evidence(uid, episode_id, project_id, origin, signal, weight, source, evidence, "
    "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (uid) DO NOTHING",
    (
        _cursor_push(
            "evidence",
            "push.evidence",
            f"SELECT f.id, f.episode_id, f.signal, f.weight, f.source, f.evidence, f.created_at "
            f"FROM feedback_events f JOIN episodes e ON e.id = f.episode_id WHERE e.project_id = ?1 AND "
            f"f.id > ?2 AND f.source IN ({_SOURCES}) AND f.id NOT IN (SELECT local_id FROM team_evidence) "
            f"ORDER BY f.id LIMIT ?3",
            lambda ts, ref, r: (
                f"{ts.machine}:{r[0]}",
                r[1],
                ref.id,
                ts.machine,
                r[2],
                r[3],
                r[4],
                json.dumps(redact_data(json.loads(r[5] or "{}"))),
                _ts(r[6]),
            ),
        ),
    ),
    "uid, episode_id, author, signal, weight, source, evidence, created_at",
    _evidence_apply,
)


# -- session links --------------------------------------------------------------------------------------------


def _links_apply(ts: Session, ref: ProjectRef, rows: list[Row]) -> None:
    """Only between episodes this machine has."""
    for src, dst, relationship, weight, created_at in rows:
        ts.db.execute(
            "INSERT OR IGNORE INTO episode_links(src_id, dst_id, relationship, weight, created_at) "
            "SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM episodes WHERE id = ?) "
            "AND EXISTS (SELECT 1 FROM episodes WHERE id = ?)",
            (src, dst, relationship, weight, created_at.isoformat(), src, dst),
        )


LINKS = Kind(
    "links",
    "INSERT INTO tempera.links(src_id, dst_id, relationship, weight, project_id, origin, created_at) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
    (
        _cursor_push(
            "links",
            "push.links",
            "SELECT l.rowid, l.src_id, l.dst_id, l.relationship, l.weight, l.created_at FROM episode_links l "
            "JOIN episodes e ON e.id = l.src_id WHERE e.project_id = ?1 AND l.rowid > ?2 AND "
            + NOT_PULLED
            + " ORDER BY l.rowid LIMIT ?3",
            lambda ts, ref, r: (r[1], r[2], r[3], r[4], ref.id, ts.machine, _ts(r[5])),
        ),
    ),
    "src_id, dst_id, relationship, weight, created_at",
    _links_apply,
)


# -- self-improvement logs (mistakes, should-have-asked) --------------------------------------------------


def _log_push(kind: LogKind) -> Push:
    n = len(kind.fields)
    return _cursor_push(
        kind.table,
        f"push.{kind.table}",
        f"SELECT id, {', '.join(kind.fields)}, episode_id, session_id, scope, created_at, "
        f"(SELECT json_group_array(path) FROM selfimprove_files WHERE kind = '{kind.name}' AND row_id = t.id) "
        f"FROM {kind.table} t WHERE project_id = ?1 AND id > ?2 AND source <> '{PULLED_SOURCE}' "
        f"ORDER BY id LIMIT ?3",
        lambda ts, ref, r: (
            f"{ts.machine}:{kind.table}:{r[0]}",
            kind.table,
            ref.id,
            ts.machine,
            r[n + 1],
            r[n + 2],
            json.dumps(redact_data(dict(zip(kind.fields, r[1 : n + 1])))),
            json.loads(r[-1] or "[]"),
            r[n + 3],
            _ts(r[n + 4]),
        ),
    )


def _logs_apply(ts: Session, ref: ProjectRef, rows: list[Row]) -> None:
    kinds = {k.table: k for k in LOG_KINDS}
    for uid, table, _author, episode_id, session_id, fields, files, scope in rows:
        add_entry(
            ts.db,
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


LOG_ENTRIES = Kind(
    "log_entries",
    "INSERT INTO tempera.log_entries(uid, kind, project_id, origin, episode_id, session_id, fields, files, "
    "scope, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (uid) DO NOTHING",
    tuple(_log_push(kind) for kind in LOG_KINDS),
    "uid, kind, author, episode_id, session_id, fields, files, scope",
    _logs_apply,
)


# -- facts: assertions and retractions ----------------------------------------------------------------


def _tx_uid(ts: Session, at: int, tx: int) -> str:
    return f"{ts.machine}:{at}.{tx}"


def _assertion(ts: Session, ref: ProjectRef, r: Row) -> Row:
    i, e, a, vt, v, vfrom, vto, tx, at, reason, episode_id = r
    uid = f"{_tx_uid(ts, at, tx)}.{i}"
    return (
        uid,
        "assert",
        uid,
        _tx_uid(ts, at, tx),
        ref.id,
        ts.machine,
        episode_id,
        e,
        a,
        vt,
        json.dumps(redact_data(v)),
        vfrom,
        vto,
        redact_data(reason),
        at,
    )


def _retraction(ts: Session, ref: ProjectRef, r: Row) -> Row:
    local_id, datom, tx, at, reason, episode_id = r
    return (
        f"{datom}/r/{_tx_uid(ts, at, tx)}",
        "retract",
        datom,
        _tx_uid(ts, at, tx),
        ref.id,
        ts.machine,
        episode_id,
        None,
        None,
        None,
        None,
        None,
        None,
        redact_data(reason),
        at,
    )


ASSERTIONS = _marked_push(  # this machine's datoms made from turns of its own episodes of the project, not sent yet
    "facts",
    "SELECT d.id, d.e, d.a, d.vt, d.v, d.valid_from, d.valid_to, d.tx, t.at, t.reason, f.episode_id "
    f"FROM fact_datoms d JOIN fact_tx t ON t.tx = d.tx JOIN {_TX_EPISODE} f ON f.tx = d.tx "
    "JOIN episodes e ON e.id = f.episode_id WHERE e.project_id = ? AND "
    + NOT_PULLED
    + " AND d.id NOT IN (SELECT local_id FROM team_facts) "
    "AND d.tx NOT IN (SELECT local_tx FROM team_fact_tx) ORDER BY d.id LIMIT ?",
    lambda ts, ref: (ref.id,),
    _assertion,
    "INSERT INTO team_facts(local_id, uid, project_id, pulled) VALUES (?, ?, ?, 0)",
    lambda ref, row, event: (row[0], event[0], ref.id),
)
RETRACTIONS = _marked_push(  # retractions made here of datoms the team knows (ours or pulled), each once
    "facts",
    "SELECT tf.local_id, tf.uid, d.retracted_tx, t.at, t.reason, f.episode_id FROM team_facts tf "
    "JOIN fact_datoms d ON d.id = tf.local_id JOIN fact_tx t ON t.tx = d.retracted_tx "
    f"LEFT JOIN {_TX_EPISODE} f ON f.tx = d.retracted_tx WHERE tf.project_id = ? "
    "AND d.retracted_tx NOT IN (SELECT local_tx FROM team_fact_tx) "
    "AND tf.retraction IS NOT (tf.uid || '/r/' || ? || ':' || t.at || '.' || d.retracted_tx) "
    "ORDER BY d.retracted_tx, tf.local_id LIMIT ?",
    lambda ts, ref: (ref.id, ts.machine),
    _retraction,
    "UPDATE team_facts SET retraction = ? WHERE local_id = ?",
    lambda ref, row, event: (event[0], row[0]),
)


def _facts_apply(ts: Session, ref: ProjectRef, rows: list[Row]) -> None:
    """Each team transaction's events (in change order) as one local transaction; events seen before, and
    retractions of datoms this machine never had, change nothing."""
    groups: dict[str, list[Any]] = {}
    for row in rows:
        groups.setdefault(row[3], []).append(row)
    for tx_uid, events in groups.items():
        known = {
            r[0]
            for r in ts.db.query(
                f"SELECT uid FROM team_facts WHERE uid IN ({','.join('?' * len(events))})", [e[0] for e in events]
            )
        }
        new = [e for e in events if e[1] == "assert" and e[0] not in known]
        ends: dict[int, str] = {}
        for ev in events:
            if ev[1] == "retract":
                found = ts.db.one(
                    "SELECT tf.local_id FROM team_facts tf JOIN fact_datoms d ON d.id = "
                    "tf.local_id WHERE tf.uid = ? AND d.retracted_tx IS NULL",
                    (ev[2],),
                )
                if found:
                    ends[int(found[0])] = ev[0]
        if not new and not ends:
            continue
        first = events[0]
        local_tx, ids = ts.facts.record(
            f"teammate {first[4]}: {first[12]}", [(e[6], e[7], e[8], e[9], e[10], e[11]) for e in new], list(ends)
        )
        ts.db.execute("INSERT INTO team_fact_tx(local_tx, uid) VALUES (?, ?)", (local_tx, tx_uid))
        ts.db.conn.executemany(
            "INSERT INTO team_facts(local_id, uid, project_id, pulled) VALUES (?, ?, ?, 1)",
            [(i, e[0], ref.id) for i, e in zip(ids, new)],
        )
        ts.db.conn.executemany(
            "UPDATE team_facts SET retraction = ? WHERE local_id = ?", [(uid, i) for i, uid in ends.items()]
        )
        episode_id = first[5]
        if episode_id and _exists(ts, episode_id):
            forgetting.link_fact_tx(ts.db, episode_id, local_tx)


FACTS = Kind(
    "facts",
    "INSERT INTO tempera.facts(uid, op, datom, tx, project_id, origin, episode_id, e, a, vt, v, "
    "valid_from, valid_to, reason, at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
    "%s, %s, %s) ON CONFLICT (uid) DO NOTHING",
    (ASSERTIONS, RETRACTIONS),
    "uid, op, datom, tx, author, episode_id, e, a, vt, v, valid_from, valid_to, reason",
    _facts_apply,
)


# -- tombstones ---------------------------------------------------------------------------------------------


def _tombstones_apply(ts: Session, ref: ProjectRef, rows: list[Row]) -> None:
    """A teammate forgot these episodes: forget them here, with all that was derived from them."""
    for (episode_id,) in rows:
        if _exists(ts, episode_id):
            forgetting.forget_within(ts.db, forgetting.Selector("episode", episode_id))
            ts.forgot = True


TOMBSTONES = Kind(  # pushed by `TeamSync.bury`, not per project: the queue holds every project's, paused ones too
    "tombstones",
    "INSERT INTO tempera.tombstones(episode_id, project_id, origin) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
    (),
    "episode_id",
    _tombstones_apply,
)


# Pushed per project and pulled in this order. What the order must keep:
# - episodes before every other kind, both ways: a pull applies evidence and links only of episodes this machine
#   has (the cursor passes the others for good) and ties pulled facts to their episode only when it is here; so a
#   push gives an episode its change number before its rows get theirs, and a pull takes episodes first.
# - within facts, assertions before retractions: the retractions pushed are those of datoms in `team_facts`, which
#   the assertion push fills (a datom made and retracted here between two pushes goes out in one), and a pull
#   applies a retraction only of a datom it already has.
# - tombstones last when pulling: a forget undoes what the same pull brought about the episode, and the run wipes
#   once after it. (They are pushed first of all, by `TeamSync.bury`, before any project.)
# Evidence, links and log rows do not depend on each other; their order is the report's.
KINDS: tuple[Kind, ...] = (EPISODES, EVIDENCE, LINKS, LOG_ENTRIES, FACTS, TOMBSTONES)
