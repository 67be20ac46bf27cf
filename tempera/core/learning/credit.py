"""Temporal credit: a successful episode credits the episodes that led up to it.

Beneficiaries are the earlier episodes of the same session (any gap) and of the same project within
`temporal_credit_window_hours`, newest first, at most `temporal_credit_max_steps`. The n-th one back receives
`temporal_credit_weight x temporal_credit_decay^(n-1)` helpful pseudo-evidence (source `temporal`,
evidence.origin = the success). Rows are replaced per success, so re-crediting never inflates them.
"""

from __future__ import annotations

from datetime import timedelta, timezone
from typing import TYPE_CHECKING

from tempera.core.config import BellmanConfig
from tempera.core.db import Database
from tempera.core.learning.evidence import Evidence, replace_evidence
from tempera.core.learning.retire import RETIRED_SQL, retired_ids
from tempera.core.models import Episode

if TYPE_CHECKING:
    from tempera.core.memory import Memory


def temporal_rows(db: Database, cfg: BellmanConfig, success: Episode) -> list[Evidence]:
    """The credit one episode hands back (none unless its outcome is success)."""
    if success.outcome.status != "success":
        return []
    at = success.created_at.astimezone(timezone.utc)
    since = (at - timedelta(hours=cfg.temporal_credit_window_hours)).isoformat()
    rows = db.query(
        "SELECT id, session_id FROM episodes WHERE project_id = ? AND id != ? AND created_at < ? "
        f"AND (created_at >= ? OR (session_id IS NOT NULL AND session_id = ?)) AND id NOT IN ({RETIRED_SQL}) "
        "ORDER BY created_at DESC, rowid DESC LIMIT ?",
        (success.project_id, success.id, at.isoformat(), since, success.session_id, cfg.temporal_credit_max_steps),
    )
    return [
        Evidence(
            episode_id,
            "helpful",
            cfg.temporal_credit_weight * cfg.temporal_credit_decay**n,
            {
                "origin": success.id,
                "steps_back": n + 1,
                "same_session": bool(session_id and session_id == success.session_id),
            },
            at.isoformat(),
        )
        for n, (episode_id, session_id) in enumerate(rows)
    ]


def credit_success(mem: "Memory", episode: Episode) -> list[Evidence]:
    """(Re)write the temporal credit of one captured episode; clears it if the episode is not a success."""
    rows = temporal_rows(mem.db, mem.config.bellman, episode)
    replace_evidence(mem.db, "temporal", rows, origin=episode.id)
    return rows


def credit_all(mem: "Memory", project_id: str | None = None) -> int:
    """Recompute all temporal credit (of one project, or everywhere) from the successes stored now."""
    rows: list[Evidence] = []
    retired = retired_ids(mem.db)
    for episode in mem.store.iter_episodes(project_id, newest_first=False):
        if episode.id not in retired:
            rows += temporal_rows(mem.db, mem.config.bellman, episode)
    replace_evidence(mem.db, "temporal", rows, project_id=project_id)
    return len(rows)
