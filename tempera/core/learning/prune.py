"""Pruning old, low-value episodes: dry run by default, and only episodes that had their chance.

An episode qualifies when it is older than D days, its utility is below U, and it was retrieved at least
`storage.min_retrievals` times (never-retrieved episodes sit at the neutral prior and were never judged).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from tempera.core.errors import InvalidInput

if TYPE_CHECKING:
    from tempera.core.memory import Memory


@dataclass
class PruneCandidate:
    id: str
    created_at: str
    utility: float
    retrievals: int
    summary: str


@dataclass
class PruneReport:
    older_than_days: float
    min_utility: float
    min_retrievals: int
    executed: bool
    candidates: list[PruneCandidate] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def prune(
    mem: "Memory",
    *,
    older_than_days: float,
    min_utility: float,
    execute: bool = False,
    project_id: str | None = None,
    now: datetime | None = None,
) -> PruneReport:
    if older_than_days < 0:
        raise InvalidInput("--older-than must be a number of days >= 0")
    if not 0 <= min_utility <= 1:
        raise InvalidInput("--min-utility must be between 0 and 1")
    min_retrievals = mem.config.storage.min_retrievals
    cutoff = ((now or datetime.now(timezone.utc)) - timedelta(days=older_than_days)).isoformat()
    sql = (
        "SELECT id, created_at, utility, retrieval_count, summary FROM episodes "
        "WHERE created_at < ? AND utility < ? AND retrieval_count >= ?"
    )
    params: list[Any] = [cutoff, min_utility, min_retrievals]
    if project_id:
        sql += " AND project_id = ?"
        params.append(project_id)
    rows = mem.db.query(sql + " ORDER BY utility, created_at", params)
    report = PruneReport(
        older_than_days,
        min_utility,
        min_retrievals,
        execute,
        [PruneCandidate(r[0], r[1], round(float(r[2]), 4), int(r[3]), r[4][:160]) for r in rows],
    )
    if execute:
        for c in report.candidates:
            mem.store.delete(c.id)
    return report
