"""Scope-aware decay, reported and enforced.

Freshness itself is computed at ranking time (`retrieve.freshness`: (1 - rate_scope)^days since the episode
was last confirmed useful or created), so decay never rewrites evidence. This pass reports what has faded
and cuts workarounds whose `expires` has passed: they are retired (out of FTS and vectors, row and evidence
kept, listed here and restorable), never deleted. The daemon runs `run_decay` daily.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from tempera.core.learning.retire import retire, retired_ids
from tempera.core.retrieve import freshness

if TYPE_CHECKING:
    from tempera.core.memory import Memory

FADED_BELOW = 0.5  # past its half-life
LISTED = 50


@dataclass
class FadedEpisode:
    id: str
    summary: str
    scope: str
    freshness: float
    anchor: str  # last confirmed useful, else created


@dataclass
class DecayReport:
    checked: int = 0
    by_scope: dict[str, dict[str, float]] = field(default_factory=dict)
    faded: list[FadedEpisode] = field(default_factory=list)
    faded_total: int = 0
    cut: list[FadedEpisode] = field(default_factory=list)
    dry_run: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_decay(
    mem: "Memory", *, now: datetime | None = None, project_id: str | None = None, dry_run: bool = False
) -> DecayReport:
    """Measure every live episode's freshness; retire expired workarounds unless `dry_run`."""
    now = now or datetime.now(timezone.utc)
    report = DecayReport(dry_run=dry_run)
    retired = retired_ids(mem.db)
    faded: list[FadedEpisode] = []
    sums: dict[str, list[float]] = {}
    for ep in mem.store.iter_episodes(project_id):
        if ep.id in retired:
            continue
        report.checked += 1
        fresh = freshness(ep, now)
        anchor = (ep.utility.last_useful_at or ep.created_at).isoformat()
        item = FadedEpisode(ep.id, ep.summary[:160], str(ep.scope), round(fresh, 4), anchor)
        bucket = sums.setdefault(ep.scope.kind, [0, 0.0, 0])
        bucket[0] += 1
        bucket[1] += fresh
        bucket[2] += fresh < FADED_BELOW
        if ep.scope.kind == "workaround" and ep.scope.expires and ep.scope.expires <= now:
            report.cut.append(item)
            if not dry_run:
                retire(
                    mem.store, ep.id, "expired", detail={"expires": ep.scope.expires.isoformat(), "ref": ep.scope.name}
                )
        elif fresh < FADED_BELOW:
            faded.append(item)
    report.by_scope = {
        kind: {"episodes": n, "mean_freshness": round(total / n, 4), "faded": f}
        for kind, (n, total, f) in sorted(sums.items())
    }
    report.faded_total = len(faded)
    report.faded = sorted(faded, key=lambda f: f.freshness)[:LISTED]
    return report
