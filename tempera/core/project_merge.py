"""Moving everything of one project id to another: `merge_projects`, behind `tempera projects merge` and `reconcile`.

`reconcile` re-keys the projects whose stored id is no longer what their path resolves to (project.py): ids made
before worktrees and clones of one repository were one project, and ids that change later, when a repository
without commits gets its first or a shallow clone is deepened. It runs lazily, whenever memory is opened
(`Memory`: CLI, daemon, MCP server, browser; never the hooks), and not as a migration, because the new id of a
path needs git, which a migration would run for every project inside its write transaction, and because an id
can change again after every migration has run. Without a change it costs a few stat calls per project.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

from tempera.core import pause
from tempera.core.db import Database
from tempera.core.episodes import EpisodeStore
from tempera.core.errors import InvalidInput, NotFound, StorageError
from tempera.core.forget import table_columns
from tempera.core.project import project_for_path
from tempera.core.project_movers import movers
from tempera.core.projects import ProjectRegistry
from tempera.core.textsearch import PROJECT_TOKEN
from tempera.core.vecindex import VEC_TABLE

log = logging.getLogger("tempera")


@dataclass
class MergeReport:
    source: str
    target: str
    counts: dict[str, int] = field(default_factory=dict)  # rows moved (or, in a dry run, that would move)
    dropped: dict[str, int] = field(default_factory=dict)  # rows whose slot the target had filled (same day, ...)
    executed: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "executed": self.executed,
            "counts": {k: v for k, v in self.counts.items() if v},
            "dropped": {k: v for k, v in self.dropped.items() if v},
        }


def merge_projects(db: Database, source_id: str, target_id: str, *, dry_run: bool = False) -> MergeReport:
    """Re-key every row of `source_id` to `target_id` in one transaction, then drop the source project: episodes
    (their stored JSON too), FTS rows (the project token), vectors (moved to the target's partition), every table
    with a `project_id` (self-improvement logs, injections, calibration, dream records, and tables added later),
    what the packages above core registered (project_movers.py: the fact graph's stances), and a paused state. A
    row whose unique slot the target already fills (a triage verdict or reflection of the same day, a template of
    the same task) keeps the target's. Idempotent: a second run finds nothing left to move."""
    if source_id == target_id:
        raise InvalidInput(f"source and target are the same project ({source_id[:8]}): nothing to merge")
    target = db.one("SELECT name, path FROM projects WHERE id = ?", (target_id,))
    if target is None and not dry_run:  # a dry run counts what would move into a project not recorded yet
        raise NotFound(f"no project with id {target_id}")
    tables = table_columns(db)
    if VEC_TABLE in tables and not db.has_vec:
        raise StorageError(f"cannot move the vectors without sqlite-vec: {db.vec_error}")
    report = MergeReport(source_id, target_id)
    owned = [t for t, cols in sorted(tables.items()) if "project_id" in cols and t != "episodes"]
    with db.transaction():
        report.counts = _count(db, source_id, tables, owned)
        if not dry_run:
            report.dropped = _move(db, source_id, target_id, target[0], tables, owned)
            db.execute("DELETE FROM projects WHERE id = ?", (source_id,))
            report.executed = True
    paused = pause.paused_projects(db.path.parent).get(source_id)
    report.counts["paused"] = int(paused is not None)
    if paused is not None and not dry_run:
        pause.pause(target_id, target[0], target[1], db.path.parent)
        pause.resume(source_id, db.path.parent)
    return report


def _count(db: Database, source_id: str, tables: dict[str, set[str]], owned: list[str]) -> dict[str, int]:
    one = (source_id,)
    counts = {"episodes": int(db.one("SELECT COUNT(*) FROM episodes WHERE project_id = ?", one)[0])}
    if VEC_TABLE in tables:
        counts["vectors"] = int(db.one(f"SELECT COUNT(*) FROM {VEC_TABLE} WHERE project_id = ?", one)[0])
    counts |= {t: int(db.one(f"SELECT COUNT(*) FROM {t} WHERE project_id = ?", one)[0]) for t in owned}
    counts |= {name: mover.count(db, source_id) for name, mover in movers().items()}
    return counts


def _move(
    db: Database, source_id: str, target_id: str, target_name: str, tables: dict[str, set[str]], owned: list[str]
) -> dict[str, int]:
    """The writes of `merge_projects`; returns the rows dropped per table."""
    mine = "rowid IN (SELECT rowid FROM episodes WHERE project_id = ?)"
    db.execute(
        "UPDATE episodes_fts SET body = replace(body, ?, ?) WHERE " + mine,
        (f"\n{PROJECT_TOKEN}{source_id}", f"\n{PROJECT_TOKEN}{target_id}", source_id),
    )
    if VEC_TABLE in tables:
        store = EpisodeStore(db)
        for rowid, blob, transferable in db.query(
            f"SELECT rowid, embedding, transferable FROM {VEC_TABLE} WHERE project_id = ?", (source_id,)
        ):
            store.vectors.put(rowid, blob, target_id, bool(transferable))
    db.execute(
        "UPDATE episodes SET project_id = ?, data = json_set(data, '$.project_id', ?, '$.project_name', ?) "
        "WHERE project_id = ?",
        (target_id, target_id, target_name, source_id),
    )
    dropped = {}
    for table in owned:
        db.execute(f"UPDATE OR IGNORE {table} SET project_id = ? WHERE project_id = ?", (target_id, source_id))
        dropped[table] = db.execute(f"DELETE FROM {table} WHERE project_id = ?", (source_id,)).rowcount
    for mover in movers().values():
        mover.move(db, source_id, target_id)
    return dropped


def reconcile(db: Database) -> list[MergeReport]:
    """Merge each project whose stored path exists here but now resolves to another id into that id (see the
    module doc). Nothing moves while sqlite-vec cannot be loaded: the vectors would be left behind."""
    moves = [
        (project_id, path, ref)
        for project_id, path in db.query("SELECT id, path FROM projects WHERE path IS NOT NULL ORDER BY created_at")
        if os.path.isdir(path) and (ref := project_for_path(path)).id != project_id
    ]
    if not moves or not db.has_vec and VEC_TABLE in table_columns(db):
        return []
    projects = ProjectRegistry(db)
    reports = []
    for project_id, path, ref in moves:
        projects.ensure(ref)
        reports.append(merge_projects(db, project_id, ref.id))
        log.info("project %s at %s is now %s (%s): its memory moved there", project_id, path, ref.id, ref.name)
    return reports
