"""Evidence rows written by the learning passes, and the totals they read.

Derived evidence (propagation, temporal credit, link shares) is a function of the direct evidence and the graph,
so each pass *replaces* its own rows instead of adding to them: running a pass twice leaves the same rows and
the same utilities, and a stale row never outlives the facts it was computed from. Direct evidence (explicit
feedback, implicit use) is only ever appended, through `utility.record_feedback`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tempera.core.db import Database
from tempera.core.models import iso_utc
from tempera.core.utility import recompute

DIRECT_SOURCES = ("explicit", "implicit")
DERIVED_SOURCES = ("propagation", "temporal", "chain")


@dataclass(frozen=True)
class Evidence:
    episode_id: str
    signal: str  # helpful | unhelpful
    weight: float
    evidence: dict[str, Any] = field(default_factory=dict)
    at: str | None = None  # when what it follows from happened (ISO, UTC), e.g. the success it credits; None: now


def _delete_scope(origin: str | None, project_id: str | None) -> tuple[str, list[Any]]:
    if origin is not None:
        return " AND json_extract(evidence, '$.origin') = ?", [origin]
    if project_id is not None:
        return " AND episode_id IN (SELECT id FROM episodes WHERE project_id = ?)", [project_id]
    return "", []


def replace_evidence(
    db: Database, source: str, rows: Iterable[Evidence], *, origin: str | None = None, project_id: str | None = None
) -> set[str]:
    """Swap `source`'s rows for `rows` in one transaction and recompute every episode touched.

    What is replaced: the rows derived from `origin` when given, else the rows on episodes of `project_id`, else
    all of `source`'s rows. Returns the ids whose utility was recomputed.
    """
    if source not in DERIVED_SOURCES:
        raise ValueError(f"{source!r} is not a derived evidence source")
    now = iso_utc()
    where, params = _delete_scope(origin, project_id)
    with db.transaction():
        touched = {
            r[0]
            for r in db.query(
                f"SELECT DISTINCT episode_id FROM feedback_events WHERE source = ?{where}", [source, *params]
            )
        }
        db.execute(f"DELETE FROM feedback_events WHERE source = ?{where}", [source, *params])
        for row in rows:
            if row.weight <= 0:
                continue
            db.execute(
                "INSERT INTO feedback_events(episode_id, signal, weight, source, evidence, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (row.episode_id, row.signal, row.weight, source, json.dumps(row.evidence), row.at or now),
            )
            touched.add(row.episode_id)
        for episode_id in touched:
            recompute(db, episode_id)
    return touched


def totals(
    db: Database,
    *,
    sources: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    project_id: str | None = None,
    episode_id: str | None = None,
) -> dict[str, tuple[float, float]]:
    """(helpful, unhelpful) weight per episode, over the named sources (all when None) minus `exclude`."""
    sql = (
        "SELECT f.episode_id, COALESCE(SUM(CASE WHEN f.signal = 'helpful' THEN f.weight END), 0), "
        "COALESCE(SUM(CASE WHEN f.signal = 'unhelpful' THEN f.weight END), 0) "
        "FROM feedback_events f JOIN episodes e ON e.id = f.episode_id WHERE 1 = 1"
    )
    params: list[Any] = []
    if sources is not None:
        sql += f" AND f.source IN ({','.join('?' * len(sources))})"
        params += list(sources)
    if exclude:
        sql += f" AND f.source NOT IN ({','.join('?' * len(exclude))})"
        params += list(exclude)
    if project_id is not None:
        sql += " AND e.project_id = ?"
        params.append(project_id)
    if episode_id is not None:
        sql += " AND f.episode_id = ?"
        params.append(episode_id)
    return {r[0]: (float(r[1]), float(r[2])) for r in db.query(sql + " GROUP BY f.episode_id", params)}
