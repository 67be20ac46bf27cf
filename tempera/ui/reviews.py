"""The logs a person reviews: self-improvement (mistakes, should-have-asked, ask-backs, templates, calibration)
and the dream cycle's output (reflections, patterns, contradictions), each as it stands in the database."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tempera.core.db import Database

if TYPE_CHECKING:
    from tempera.core.memory import Memory

LIMIT = 200


def selfimprove(mem: "Memory", project_id: str | None) -> dict[str, Any]:
    from tempera.core.selfimprove.askbacks import ask_backs
    from tempera.core.selfimprove.asks import asks
    from tempera.core.selfimprove.calibration import buckets
    from tempera.core.selfimprove.mistakes import mistakes
    from tempera.core.selfimprove.templates import list_templates

    return {
        "mistakes": [m.as_dict() for m in mistakes(mem.db, project_id=project_id, limit=LIMIT)],
        "asks": [a.as_dict() for a in asks(mem.db, project_id=project_id, limit=LIMIT)],
        "ask_backs": ask_backs(mem.db, project_id=project_id, limit=LIMIT),
        "templates": list_templates(mem.db, project_id=project_id),
        "calibration": [b.as_dict() for b in buckets(mem.db, project_id=project_id)],
    }


def _table_exists(db: Database, name: str) -> bool:
    return db.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)) is not None


def _rows(db: Database, table: str, columns: str, project_id: str | None, order: str) -> list[dict[str, Any]] | None:
    """Rows as dicts, or None when the dream cycle's tables do not exist in this database yet."""
    if not _table_exists(db, table):
        return None
    where, params = ("WHERE project_id = ?", (project_id,)) if project_id else ("", ())
    cur = db.execute(f"SELECT {columns} FROM {table} {where} ORDER BY {order} LIMIT {LIMIT}", params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _evidence_count(rows: list[dict[str, Any]] | None) -> None:
    for r in rows or []:
        try:
            r["evidence_n"] = len(json.loads(r.get("evidence") or "[]"))
        except ValueError:
            r["evidence_n"] = 0


def dream(mem: "Memory", project_id: str | None) -> dict[str, Any]:
    db = mem.db
    reflections = _rows(
        db, "reflections", "project_id, day, title, body, written_by, evidence, created_at", project_id, "day DESC"
    )
    patterns = _rows(
        db,
        "patterns",
        "project_id, label, summary, terms, evidence, days, active, updated_at",
        project_id,
        "active DESC, updated_at DESC",
    )
    _evidence_count(reflections)
    _evidence_count(patterns)
    contradictions = None
    if _table_exists(db, "contradiction_checks"):
        contradictions = [
            dict(
                zip(
                    (
                        "a_id",
                        "b_id",
                        "similarity",
                        "confidence",
                        "claim",
                        "judged_by",
                        "created_at",
                        "a_summary",
                        "b_summary",
                    ),
                    r,
                )
            )
            for r in db.query(
                "SELECT c.a_id, c.b_id, c.similarity, c.confidence, c.claim, c.judged_by, c.created_at, a.summary, "
                "b.summary FROM contradiction_checks c LEFT JOIN episodes a ON a.id = c.a_id "
                "LEFT JOIN episodes b ON b.id = c.b_id WHERE c.contradicts = 1 "
                + ("AND (a.project_id = ? OR b.project_id = ?) " if project_id else "")
                + f"ORDER BY c.confidence DESC LIMIT {LIMIT}",
                (project_id, project_id) if project_id else (),
            )
        ]
    return {"reflections": reflections, "patterns": patterns, "contradictions": contradictions}
