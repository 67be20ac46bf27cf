"""Calibration per (task_type, project): how many of the agent's declared successes were verified.

One row per episode in `calibration_events`, synced from the episodes table: declared = outcome success;
verified = verification beyond untested, or tests after the change that all passed; corrected = the user
corrected that turn afterwards (set by detection), which cancels its verification. The rows outlive pruned
episodes, so pruning never resets a track record.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

from tempera.core.config import SelfImproveConfig
from tempera.core.db import Database

Z95 = 1.959964

_VERIFIED = (
    "(e.verification != 'untested' OR (json_array_length(e.data, '$.outcome.tests_after') > 0 "
    "AND NOT EXISTS (SELECT 1 FROM json_each(e.data, '$.outcome.tests_after') "
    "WHERE json_extract(value, '$.passed') = 0)))"
)


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion; (0, 1) with no trials, so no evidence claims nothing."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - margin), min(1.0, centre + margin)


def _where(equal: dict[str, str | None]) -> tuple[str, list[str]]:
    """A WHERE clause requiring each column to equal its value, leaving out the None ones."""
    given = {col: value for col, value in equal.items() if value}
    return "WHERE " + " AND ".join(["1", *(f"{col} = ?" for col in given)]), list(given.values())


def sync(db: Database, *, project_id: str | None = None, episode_id: str | None = None) -> None:
    """Bring the rows up to date with their episodes; only episodes changed since (verification advances go
    through `EpisodeStore.update`, which moves `updated_at`) are recomputed."""
    where, params = _where({"e.project_id": project_id, "e.id": episode_id})
    now = datetime.now(timezone.utc).isoformat()
    db.execute(
        "INSERT INTO calibration_events(episode_id, project_id, task_type, declared, verified, episode_updated_at, "
        f"created_at, updated_at) SELECT e.id, e.project_id, e.task_type, e.outcome = 'success', {_VERIFIED}, "
        "e.updated_at, e.created_at, ? FROM episodes e LEFT JOIN calibration_events c ON c.episode_id = e.id "
        f"{where} AND (c.episode_id IS NULL OR c.episode_updated_at != e.updated_at) "
        "ON CONFLICT(episode_id) DO UPDATE SET task_type = excluded.task_type, declared = excluded.declared, "
        "verified = excluded.verified, episode_updated_at = excluded.episode_updated_at, "
        "updated_at = excluded.updated_at",
        (now, *params),
    )


def mark_corrected(db: Database, episode_id: str) -> None:
    """The user corrected this episode's turn: a declared success there is not a verified one."""
    with db.transaction():
        sync(db, episode_id=episode_id)
        db.execute(
            "UPDATE calibration_events SET corrected = 1, updated_at = ? WHERE episode_id = ?",
            (datetime.now(timezone.utc).isoformat(), episode_id),
        )


@dataclass(frozen=True)
class Bucket:
    project_id: str
    project: str
    task_type: str
    declared: int
    verified: int
    corrected: int

    @property
    def ratio(self) -> float | None:
        return self.verified / self.declared if self.declared else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.verified, self.declared)

    def as_dict(self) -> dict[str, Any]:
        low, high = self.interval
        ratio = self.ratio
        return {
            **asdict(self),
            "ratio": None if ratio is None else round(ratio, 4),
            "wilson_low": round(low, 4),
            "wilson_high": round(high, 4),
        }

    def statement(self) -> str:
        low, high = self.interval
        return (
            f"{self.verified} of {self.declared} declared {self.task_type} successes in {self.project} were "
            f"verified ({self.ratio or 0:.0%}; 95% interval {low:.0%}-{high:.0%}"
            + (f"; {self.corrected} later corrected by the user)" if self.corrected else ")")
        )


def buckets(db: Database, *, project_id: str | None = None, task_type: str | None = None) -> list[Bucket]:
    """Declared vs verified successes per (task_type, project), after syncing from the episodes."""
    with db.transaction():
        sync(db, project_id=project_id)
    where, params = _where({"c.project_id": project_id, "c.task_type": task_type})
    rows = db.query(
        "SELECT c.project_id, COALESCE(p.name, c.project_id), c.task_type, SUM(c.declared), "
        "SUM(c.declared AND c.verified AND NOT c.corrected), SUM(c.declared AND c.corrected) "
        f"FROM calibration_events c LEFT JOIN projects p ON p.id = c.project_id {where} "
        "GROUP BY c.project_id, c.task_type ORDER BY SUM(c.declared) DESC, c.task_type",
        params,
    )
    return [Bucket(r[0], r[1], r[2], int(r[3] or 0), int(r[4] or 0), int(r[5] or 0)) for r in rows]


# Work with no change to test: an answered question or a docs edit is never "verified", so its ratio says nothing
# about the agent overclaiming (on the shared entire-cli sessions: "5 of 69 declared research successes verified"
# at every session start).
UNTESTABLE = frozenset({"research", "docs"})


def warning(db: Database, cfg: SelfImproveConfig, project_id: str, task_type: str | None = None) -> Bucket | None:
    """The worst bucket of testable work with enough declared successes and a verified ratio below the threshold,
    if any."""
    weak = [
        b
        for b in buckets(db, project_id=project_id, task_type=task_type)
        if b.task_type not in UNTESTABLE
        and b.declared >= cfg.calibration_min_declared
        and (b.ratio or 0.0) < cfg.calibration_warn_ratio
    ]
    return min(weak, key=lambda b: (b.ratio or 0.0, -b.declared)) if weak else None
