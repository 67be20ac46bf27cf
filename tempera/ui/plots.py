"""The series behind the plots page: helpfulness and injection hit rate per week, episodes per week per project,
the utility distribution, and the hooks' retrieval latency where the injection log records it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tempera.core.memory import Memory

WEEK = "%Y-W%W"
UTILITY_BINS = 10
LATENCY_KEY = "latency_ms"  # what the hooks would add to each injection's `scores`


def learning_curve(mem: "Memory") -> dict[str, Any]:
    from tempera.core.learning.trends import trends

    periods = trends(mem, bucket="weekly")["periods"]
    return {
        "labels": [p["period"] for p in periods],
        "helpfulness": [p["helpfulness"] for p in periods],
        "hit_rate": [p["use_rate"] for p in periods],
    }


def episodes_per_week(mem: "Memory") -> dict[str, Any]:
    rows = mem.db.query(
        f"SELECT strftime('{WEEK}', e.created_at), COALESCE(p.name, e.project_id), COUNT(*) "
        "FROM episodes e LEFT JOIN projects p ON p.id = e.project_id GROUP BY 1, 2 ORDER BY 1, 2"
    )
    weeks = sorted({r[0] for r in rows})
    series: dict[str, list[int]] = {}
    for week, project, n in rows:
        series.setdefault(project, [0] * len(weeks))[weeks.index(week)] = n
    return {"labels": weeks, "series": [{"label": k, "data": v} for k, v in series.items()]}


def utility_histogram(mem: "Memory") -> dict[str, Any]:
    counts = [0] * UTILITY_BINS
    for (u,) in mem.db.query("SELECT utility FROM episodes"):
        counts[min(UTILITY_BINS - 1, int(float(u) * UTILITY_BINS))] += 1
    width = 1 / UTILITY_BINS
    return {"labels": [f"{i * width:.1f}-{(i + 1) * width:.1f}" for i in range(UTILITY_BINS)], "counts": counts}


def hook_latency(mem: "Memory") -> dict[str, Any]:
    """Per hook event (one per prompt), the latency it recorded, in time order; `recorded` False when the log
    holds none yet (the hooks do not write `latency_ms` into `scores`)."""
    rows = mem.db.query(
        f"SELECT created_at, event, MAX(json_extract(scores, '$.{LATENCY_KEY}')) FROM injections "
        f"WHERE json_extract(scores, '$.{LATENCY_KEY}') IS NOT NULL "
        "GROUP BY session_id, event, created_at ORDER BY created_at LIMIT 5000"
    )
    return {
        "recorded": bool(rows),
        "labels": [r[0][:19] for r in rows],
        "events": [r[1] for r in rows],
        "latency_ms": [r[2] for r in rows],
    }


def all_plots(mem: "Memory") -> dict[str, Any]:
    return {
        "learning": learning_curve(mem),
        "weekly": episodes_per_week(mem),
        "utility": utility_histogram(mem),
        "latency": hook_latency(mem),
    }


def as_json(data: Any) -> str:
    """JSON for a <script type="application/json"> block: '<' escaped so no text can close the element."""
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")
