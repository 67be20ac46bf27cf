"""Helpfulness over time, domains, and the learning curve, from the stored evidence and injection log.

Per period: episodes captured and their success rate; direct evidence (explicit + implicit) and its helpful
share; injections judged and the share that was used. A memory that learns shows the used share and the
helpful share rising.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tempera.core.errors import InvalidInput
from tempera.core.learning.evidence import DIRECT_SOURCES

if TYPE_CHECKING:
    from tempera.core.memory import Memory

BUCKETS = {"weekly": "%Y-W%W", "monthly": "%Y-%m"}


def _ratio(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


def trends(mem: "Memory", *, bucket: str = "weekly", project_id: str | None = None) -> dict[str, Any]:
    if bucket not in BUCKETS:
        raise InvalidInput(f"bucket must be one of {', '.join(BUCKETS)}")
    fmt, db = BUCKETS[bucket], mem.db
    scope, params = ("AND e.project_id = ?", [project_id]) if project_id else ("", [])
    periods: dict[str, dict[str, Any]] = {}

    def period(key: str) -> dict[str, Any]:
        return periods.setdefault(
            key,
            {
                "period": key,
                "episodes": 0,
                "successes": 0,
                "helpful": 0.0,
                "unhelpful": 0.0,
                "injections_judged": 0,
                "injections_used": 0,
            },
        )

    for key, n, ok in db.query(
        f"SELECT strftime(?, e.created_at), COUNT(*), SUM(e.outcome = 'success') "
        f"FROM episodes e WHERE 1 = 1 {scope} GROUP BY 1",
        [fmt, *params],
    ):
        period(key).update(episodes=n, successes=ok)
    marks = ",".join("?" * len(DIRECT_SOURCES))
    for key, h, u in db.query(
        f"SELECT strftime(?, f.created_at), SUM(CASE WHEN f.signal = 'helpful' THEN f.weight ELSE 0 END), "
        f"SUM(CASE WHEN f.signal = 'unhelpful' THEN f.weight ELSE 0 END) FROM feedback_events f "
        f"JOIN episodes e ON e.id = f.episode_id WHERE f.source IN ({marks}) {scope} GROUP BY 1",
        [fmt, *DIRECT_SOURCES, *params],
    ):
        period(key).update(helpful=round(h, 4), unhelpful=round(u, 4))
    for key, judged, used in db.query(
        f"SELECT strftime(?, i.evaluated_at), COUNT(*), SUM(i.used >= 1) FROM injections i "
        f"JOIN episodes e ON e.id = i.episode_id WHERE i.evaluated_at IS NOT NULL {scope} GROUP BY 1",
        [fmt, *params],
    ):
        period(key).update(injections_judged=judged, injections_used=used)
    rows = [periods[k] for k in sorted(periods)]
    for p in rows:
        p["success_rate"] = _ratio(p["successes"], p["episodes"])
        p["helpfulness"] = _ratio(p["helpful"], p["helpful"] + p["unhelpful"])
        p["use_rate"] = _ratio(p["injections_used"], p["injections_judged"])
    domains = db.query(
        "SELECT d.value, COUNT(*) FROM episodes e, json_each(json_extract(e.data, "
        f"'$.intent.domains')) d WHERE 1 = 1 {scope} GROUP BY d.value ORDER BY 2 DESC, 1 LIMIT 10",
        params,
    )
    task_types = db.query(
        f"SELECT e.task_type, COUNT(*) FROM episodes e WHERE 1 = 1 {scope} GROUP BY 1 ORDER BY 2 DESC, 1", params
    )
    return {
        "bucket": bucket,
        "periods": rows,
        "domains": [{"domain": d, "episodes": n} for d, n in domains],
        "task_types": [{"task_type": t, "episodes": n} for t, n in task_types],
    }
