"""Forgetting an episode, a session, a project, or everything before a date, with all that was derived from it,
so that none of its text is left in the database file or its WAL.

What goes, counted first by `plan` and deleted by `forget` in one transaction:
- the episodes, their FTS rows and vectors, and every row of any table that points at them by `episode_id`
  (feedback, retrievals, injections, retirements, ask-backs, mistakes and should-have-asked rows, calibration, and
  tables added later, such as the dream cycle's), their links, and their share of reasoning-template evidence;
- evidence derived from them on other episodes (`origin` in the evidence row), whose utility is then recomputed;
- the fact-graph transactions they produced (`episode_facts`), undone as if they had never been made;
- for a session, a project or a date: that session's, project's or period's logs even where they concern kept
  episodes (the injection log holds prompts, retrievals hold queries), and finished capture jobs of the sessions
  concerned (their payload holds the last assistant message).
Kept on purpose: transcript cursors. They hold positions, not text, and without them the transcript still on disk
would be captured again on the next Stop.

Deleted rows are then made unrecoverable: FTS5 segments are merged (a deleted row's terms otherwise stay in older
segments), the WAL is checkpointed and truncated, and the file is rebuilt by VACUUM under `secure_delete`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempera.core.db import Database
from tempera.core.errors import InvalidInput
from tempera.core.utility import recompute

if TYPE_CHECKING:
    from tempera.core.episodes import EpisodeStore

KINDS = ("episode", "session", "project", "before")
IDS = "(SELECT id FROM temp.forget_ids)"
SESSIONS = "(SELECT id FROM temp.forget_sessions)"
# Tables a rule below handles itself, or that must never be swept by column name.
SPECIAL = frozenset(
    {
        "episodes",
        "projects",
        "transcript_cursors",
        "jobs",
        "meta",
        "_tempera_migrations",
        "selfimprove_files",
        "reasoning_templates",
        "feedback_events",
    }
)
PAIR_COLUMNS = ("src_id", "dst_id", "a_id", "b_id")  # episode pairs: links, contradiction checks
# One prompt injects several episodes, one query retrieves several: the rows of such an event share these columns,
# and each holds the prompt or query that led to the forgotten episode, so the whole event goes.
EVENT_KEYS = {"injections": ("session_id", "event", "created_at"), "retrievals": ("query", "created_at")}
# A log of the same events without episode ids: its row of an event goes with the event (the facts a prompt was
# shown, logged with the same session, event and time as its episodes; swept before `injections`, by name order).
EVENT_PARTNERS = {"fact_injections": "injections"}
# Activity logs that "everything before a date" clears even where they concern kept episodes.
BEFORE_LOGS = (
    "injections",
    "fact_injections",
    "retrievals",
    "mistakes",
    "should_have_asked",
    "ask_backs",
    "session_context",
)
DERIVED_SOURCES = ("propagation", "temporal", "chain")
LOG_FILES = {"mistake": "mistakes", "ask": "should_have_asked"}


@dataclass(frozen=True)
class Selector:
    """What to forget: `episode` (a full id), `session` (an id), `project` (an id) or `before` (an ISO date/time,
    optionally narrowed to one project)."""

    kind: str
    value: str
    project_id: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidInput(f"forget what? one of {', '.join(KINDS)}")
        if not self.value.strip():
            raise InvalidInput(f"forget {self.kind}: give a value")
        if self.kind == "before":
            self.before  # noqa: B018 -- refuse a bad date now, not halfway through a plan

    @property
    def before(self) -> str:
        """The cut-off as the ISO text episodes store (UTC), so string comparison is time comparison."""
        try:
            moment = datetime.fromisoformat(self.value.strip())
        except ValueError:
            raise InvalidInput(f"{self.value!r} is not a date: use YYYY-MM-DD or an ISO date/time") from None
        return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).astimezone(timezone.utc).isoformat()

    def describe(self) -> str:
        where = f" in project {self.project_id}" if self.project_id else ""
        return f"everything before {self.value}{where}" if self.kind == "before" else f"{self.kind} {self.value}"


def selector(store: "EpisodeStore", kind: str, value: str, project: str | None = None) -> Selector:
    """A selector from what a person typed (the CLI's arguments, the browser's form): an episode id prefix, a session
    id, a project path, name or id, a date (optionally with a project)."""
    if kind == "episode":
        return Selector("episode", store.resolve_id(value))
    if kind == "project":
        return Selector("project", store.projects.resolve(value).id)
    if kind == "before":
        return Selector("before", value, store.projects.resolve(project).id if project else None)
    return Selector(kind, value.strip())


@dataclass
class Report:
    selector: Selector
    counts: dict[str, int] = field(default_factory=dict)
    executed: bool = False
    wiped: bool = False  # WAL truncated and file vacuumed (False when another connection kept a read open)

    @property
    def episodes(self) -> int:
        return self.counts.get("episodes", 0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "what": self.selector.describe(),
            "executed": self.executed,
            "wiped": self.wiped,
            "counts": {k: v for k, v in self.counts.items() if v},
        }


@dataclass(frozen=True)
class _Rule:
    label: str
    table: str
    where: str
    params: tuple[Any, ...] = ()


def link_fact_tx(db: Database, episode_id: str, tx: int) -> None:
    """Record that fact transaction `tx` was produced from `episode_id` (decision extraction calls this), so that
    forgetting the episode undoes the transaction."""
    db.execute("INSERT OR IGNORE INTO episode_facts(episode_id, tx) VALUES (?, ?)", (episode_id, tx))


def table_columns(db: Database) -> dict[str, set[str]]:
    """Ordinary tables (no virtual tables, no shadow tables of virtual ones) and their columns."""
    rows = db.query(
        "SELECT name, sql LIKE 'CREATE VIRTUAL%' FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    )
    virtual = [n for n, v in rows if v]
    plain = [n for n, v in rows if not v and not any(n.startswith(f"{x}_") for x in virtual)]
    return {n: {c[1] for c in db.query(f'PRAGMA table_info("{n}")')} for n in plain} | {n: set() for n in virtual}


def _select_episodes(db: Database, sel: Selector) -> None:
    db.execute("CREATE TEMP TABLE forget_ids(id TEXT PRIMARY KEY, rid INTEGER NOT NULL)")
    db.execute("CREATE TEMP TABLE forget_sessions(id TEXT PRIMARY KEY)")
    column = {"episode": "id", "session": "session_id", "project": "project_id"}.get(sel.kind)
    where, params = (f"{column} = ?", [sel.value]) if column else ("created_at < ?", [sel.before])
    if sel.kind == "before" and sel.project_id:
        where, params = where + " AND project_id = ?", params + [sel.project_id]
    db.execute(f"INSERT INTO temp.forget_ids(id, rid) SELECT id, rowid FROM episodes WHERE {where}", params)
    db.execute(
        "INSERT OR IGNORE INTO temp.forget_sessions(id) SELECT session_id FROM episodes "
        f"WHERE id IN {IDS} AND session_id IS NOT NULL"
    )
    if sel.kind == "session":
        db.execute("INSERT OR IGNORE INTO temp.forget_sessions(id) VALUES (?)", (sel.value,))
    if sel.kind == "project":
        db.execute(
            "INSERT OR IGNORE INTO temp.forget_sessions(id) SELECT DISTINCT session_id FROM injections "
            "WHERE project_id = ?",
            (sel.value,),
        )


@contextmanager
def _selection(db: Database, sel: Selector) -> Iterator[None]:
    db.execute("DROP TABLE IF EXISTS temp.forget_ids")
    db.execute("DROP TABLE IF EXISTS temp.forget_sessions")
    _select_episodes(db, sel)
    try:
        yield
    finally:
        db.execute("DROP TABLE IF EXISTS temp.forget_ids")
        db.execute("DROP TABLE IF EXISTS temp.forget_sessions")


def _sweep_where(table: str, cols: set[str], sel: Selector) -> tuple[str, tuple[Any, ...]] | None:
    """Which rows of a table go: those about the episodes, plus the session's / project's / period's rows."""
    parts: list[str] = []
    params: list[Any] = []
    if "episode_id" in cols:
        parts.append(f"episode_id IN {IDS}")
    if table in EVENT_KEYS:
        key = ", ".join(EVENT_KEYS[table])
        parts.append(f"({key}) IN (SELECT {key} FROM {table} WHERE episode_id IN {IDS})")
    if table in EVENT_PARTNERS:
        key = ", ".join(EVENT_KEYS[EVENT_PARTNERS[table]])
        parts.append(f"({key}) IN (SELECT {key} FROM {EVENT_PARTNERS[table]} WHERE episode_id IN {IDS})")
    parts += [f"{c} IN {IDS}" for c in PAIR_COLUMNS if c in cols]
    if "evidence" in cols:  # reflections, patterns, verdicts: built from these episodes (ids are UUIDs)
        parts.append(f"EXISTS (SELECT 1 FROM temp.forget_ids f WHERE instr({table}.evidence, f.id) > 0)")
    if sel.kind == "session" and "session_id" in cols:
        parts.append("session_id = ?")
        params.append(sel.value)
    if sel.kind == "project" and "project_id" in cols:
        parts.append("project_id = ?")
        params.append(sel.value)
    if sel.kind == "before" and table in BEFORE_LOGS and "created_at" in cols:
        if sel.project_id is None:
            parts.append("created_at < ?")
            params.append(sel.before)
        elif "project_id" in cols:
            parts.append("(created_at < ? AND project_id = ?)")
            params += [sel.before, sel.project_id]
    return (" OR ".join(parts), tuple(params)) if parts else None


def _jobs_rule(sel: Selector) -> _Rule:
    """Finished jobs of the sessions concerned (and, for a date, every finished job queued before it)."""
    where = f"json_extract(payload, '$.session_id') IN {SESSIONS}"
    params: tuple[Any, ...] = ()
    if sel.kind == "before" and sel.project_id is None:
        where, params = where + " OR created_at < ?", (datetime.fromisoformat(sel.before).timestamp(),)
    return _Rule("jobs (finished)", "jobs", f"status IN ('done', 'dead') AND ({where})", params)


def _rules(db: Database, sel: Selector, tables: dict[str, set[str]]) -> list[_Rule]:
    """Plain deletions, children before parents; `episodes` and `projects` come last."""
    rules = []
    if "feedback_events" in tables:
        rules.append(_Rule("feedback_events", "feedback_events", f"episode_id IN {IDS}"))
    for kind, table in LOG_FILES.items():
        swept = _sweep_where(table, tables.get(table, set()), sel)
        if swept and "selfimprove_files" in tables:
            rules.append(
                _Rule(
                    f"selfimprove_files ({kind})",
                    "selfimprove_files",
                    f"kind = ? AND row_id IN (SELECT id FROM {table} WHERE {swept[0]})",
                    (kind, *swept[1]),
                )
            )
    for table in sorted(set(tables) - SPECIAL):
        swept = _sweep_where(table, tables[table], sel)
        if swept:
            rules.append(_Rule(table, table, *swept))
    if "jobs" in tables:
        rules.append(_jobs_rule(sel))
    if "reasoning_templates" in tables and sel.kind == "project":
        rules.append(_Rule("reasoning_templates", "reasoning_templates", "project_id = ?", (sel.value,)))
    rules.append(_Rule("episodes_fts", "episodes_fts", "rowid IN (SELECT rid FROM temp.forget_ids)"))
    if "episode_vec" in tables and db.has_vec:
        rules.append(_Rule("episode_vec", "episode_vec", "rowid IN (SELECT rid FROM temp.forget_ids)"))
    rules.append(_Rule("episodes", "episodes", f"id IN {IDS}"))
    if sel.kind == "project":
        rules.append(_Rule("projects", "projects", "id = ?", (sel.value,)))
    return rules


def _derived_where() -> str:
    return (
        f"source IN ({','.join('?' * len(DERIVED_SOURCES))}) AND episode_id NOT IN {IDS} "
        f"AND json_extract(evidence, '$.origin') IN {IDS}"
    )


def _template_rows(db: Database) -> list[tuple[int, list[str], list[str]]]:
    """(row id, evidence kept, evidence forgotten) of templates whose evidence names a forgotten episode."""
    gone = {r[0] for r in db.query(f"SELECT id FROM {IDS}")}
    out = []
    for row_id, evidence in db.query("SELECT id, evidence FROM reasoning_templates"):
        ids = json.loads(evidence or "[]")
        if gone.intersection(ids):
            out.append((row_id, [i for i in ids if i not in gone], [i for i in ids if i in gone]))
    return out


def _fact_txs(db: Database, tables: dict[str, set[str]]) -> list[int]:
    if not {"episode_facts", "fact_tx", "fact_datoms"} <= set(tables):
        return []
    return [r[0] for r in db.query(f"SELECT DISTINCT tx FROM episode_facts WHERE episode_id IN {IDS}")]


def _fact_copies(txs: list[int]) -> tuple[str, list[int]]:
    """Datoms asserted in the transactions, and the closed copies later transactions made of them (same fact, same
    valid-from, a valid-to): both carry what the episode said."""
    marks = ",".join("?" * len(txs))
    return (
        f"id IN (SELECT c.id FROM fact_datoms c JOIN fact_datoms o ON o.e = c.e AND o.a = c.a AND o.vt = c.vt "
        f"AND o.v IS c.v AND o.valid_from = c.valid_from WHERE o.tx IN ({marks}) AND (c.id = o.id OR "
        "(c.tx > o.tx AND c.valid_to IS NOT NULL)))",
        txs,
    )


def _named_files(db: Database, rules: list[_Rule], tables: dict[str, set[str]]) -> list[Path]:
    """Files inside the data dir named by rows that go (the dream cycle's pages); never anything outside it."""
    root = db.path.parent.resolve()
    found: dict[Path, None] = {}
    for rule in rules:
        if "path" not in tables[rule.table] or rule.table in SPECIAL:
            continue
        for (name,) in db.query(f"SELECT path FROM {rule.table} WHERE {rule.where}", rule.params):
            target = (root / str(name)).resolve() if name else root
            if target.is_relative_to(root) and target.is_file():
                found[target] = None
    return list(found)


def _count(db: Database, sel: Selector) -> dict[str, int]:
    tables = table_columns(db)
    rules = _rules(db, sel, tables)
    counts = {
        rule.label: int(db.one(f"SELECT COUNT(*) FROM {rule.table} WHERE {rule.where}", rule.params)[0])
        for rule in rules
    }
    counts["files"] = len(_named_files(db, rules, tables))
    if "feedback_events" in tables:
        counts["derived evidence on kept episodes"] = int(
            db.one(f"SELECT COUNT(*) FROM feedback_events WHERE {_derived_where()}", DERIVED_SOURCES)[0]
        )
    if "reasoning_templates" in tables:
        counts["template evidence"] = sum(len(gone) for _, _, gone in _template_rows(db))
    txs = _fact_txs(db, tables)
    if txs:
        where, params = _fact_copies(txs)
        counts["fact datoms"] = int(db.one(f"SELECT COUNT(*) FROM fact_datoms WHERE {where}", params)[0])
        counts["fact transactions"] = len(txs)
    return counts


def plan(db: Database, sel: Selector) -> Report:
    """What `forget` would delete, counted per table; nothing is changed."""
    with db.transaction(), _selection(db, sel):
        return Report(sel, _count(db, sel))


def _undo_facts(db: Database, txs: list[int]) -> None:
    marks = ",".join("?" * len(txs))
    where, params = _fact_copies(txs)
    db.execute(f"DELETE FROM fact_datoms WHERE {where}", params)
    db.execute(f"UPDATE fact_datoms SET retracted_tx = NULL WHERE retracted_tx IN ({marks})", txs)
    db.execute(f"DELETE FROM episode_facts WHERE tx IN ({marks})", txs)
    db.execute(f"DELETE FROM fact_tx WHERE tx IN ({marks})", txs)


def _delete(db: Database, sel: Selector) -> tuple[dict[str, int], list[Path]]:
    """Delete inside the caller's transaction; returns the counts and the files the deleted rows named, to be
    removed once the deletion is committed."""
    tables = table_columns(db)
    counts = _count(db, sel)
    rules = _rules(db, sel, tables)
    files = _named_files(db, rules, tables)
    txs = _fact_txs(db, tables)
    if txs:
        _undo_facts(db, txs)
    touched: set[str] = set()
    if "feedback_events" in tables:
        touched = {
            r[0]
            for r in db.query(
                f"SELECT DISTINCT episode_id FROM feedback_events WHERE {_derived_where()}", DERIVED_SOURCES
            )
        }
        db.execute(f"DELETE FROM feedback_events WHERE {_derived_where()}", DERIVED_SOURCES)
    if "reasoning_templates" in tables:
        for row_id, kept, _ in _template_rows(db):
            if kept:
                db.execute("UPDATE reasoning_templates SET evidence = ? WHERE id = ?", (json.dumps(kept), row_id))
            else:
                db.execute("DELETE FROM reasoning_templates WHERE id = ?", (row_id,))
    if "transcript_cursors" in tables:  # created by the transcripts package on its first capture
        db.execute(f"UPDATE transcript_cursors SET episode_id = NULL WHERE episode_id IN {IDS}")
    for rule in rules:
        db.execute(f"DELETE FROM {rule.table} WHERE {rule.where}", rule.params)
    for episode_id in touched:
        recompute(db, episode_id)
    return counts, files


def forget(db: Database, sel: Selector) -> Report:
    """Delete what `plan` counts, in one transaction, then make it unrecoverable from the file (see `wipe`)."""
    previous = db.one("PRAGMA secure_delete")[0]
    db.execute("PRAGMA secure_delete = ON")
    try:
        with db.transaction(), _selection(db, sel):
            counts, files = _delete(db, sel)
        for target in files:
            target.unlink(missing_ok=True)
        return Report(sel, counts, executed=True, wiped=wipe(db))
    finally:
        db.execute(f"PRAGMA secure_delete = {int(previous)}")


def forget_within(db: Database, sel: Selector) -> dict[str, int]:
    """`forget`'s deletion inside the caller's transaction, for a caller that must commit it with other writes (the
    team sync applies a teammate's forget together with its cursor); it runs `wipe` once that is committed. The
    files the deleted rows named (dream pages) are removed at once, before that commit."""
    with _selection(db, sel):
        counts, files = _delete(db, sel)
    for target in files:
        target.unlink(missing_ok=True)
    return counts


def wipe(db: Database) -> bool:
    """Merge FTS5 segments, truncate the WAL, VACUUM, truncate again. False when a reader elsewhere (the daemon in
    the middle of a request) kept the WAL from being reset; running it again later finishes the job."""
    db.execute("INSERT INTO episodes_fts(episodes_fts) VALUES ('optimize')")
    first = db.one("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("VACUUM")
    second = db.one("PRAGMA wal_checkpoint(TRUNCATE)")
    return not first[0] and not second[0]
