"""The figures behind `tempera memory stats` and the MCP tempera_stats tool, for one project or all of them."""

from __future__ import annotations

from typing import Any

from tempera.core.db import Database


def memory_stats(db: Database, project_id: str | None = None) -> dict[str, Any]:
    """Counts by outcome, task type and verification; utility spread; feedback totals; how often episodes were
    retrieved or injected (retrieval_count covers both the CLI/MCP searches and the hooks' injections)."""
    where, args = ("WHERE project_id = ?", (project_id,)) if project_id else ("", ())

    def grouped(column: str) -> dict[str, int]:
        return dict(db.query(f"SELECT {column}, COUNT(*) FROM episodes {where} GROUP BY 1", args))

    utility = db.one(f"SELECT AVG(utility), MIN(utility), MAX(utility) FROM episodes {where}", args)
    feedback = db.query(
        "SELECT f.signal, COUNT(*) FROM feedback_events f JOIN episodes e ON e.id = f.episode_id "
        f"{where.replace('project_id', 'e.project_id')} GROUP BY 1",
        args,
    )
    retrievals = db.one(f"SELECT COALESCE(SUM(retrieval_count), 0) FROM episodes {where}", args)[0]
    by_outcome = grouped("outcome")
    return {
        "episodes": sum(by_outcome.values()),
        "by_outcome": by_outcome,
        "by_task_type": grouped("task_type"),
        "by_verification": grouped("verification"),
        "utility": dict(zip(("mean", "min", "max"), utility)),
        "feedback": dict(feedback),
        "retrievals": retrievals,
    }
