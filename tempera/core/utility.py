"""Learned utility: the posterior mean of Beta(1 + H, 1 + U) over stored, weighted evidence rows.

Being retrieved is not evidence. Every row is kept (who produced it, why, when) so a value can be recomputed and
explained; the episodes row caches H, U and the value, which is the one number ranking reads.
"""

from __future__ import annotations

import json
from typing import Any

from tempera.core.db import Database
from tempera.core.errors import InvalidInput
from tempera.core.models import iso_utc

SIGNALS = ("helpful", "unhelpful")
EXPLICIT_WEIGHT = 1.0


def posterior_mean(helpful: float, unhelpful: float) -> float:
    return (1.0 + helpful) / (2.0 + helpful + unhelpful)


def record_feedback(
    db: Database,
    episode_id: str,
    signal: str,
    *,
    weight: float = EXPLICIT_WEIGHT,
    source: str = "explicit",
    evidence: dict[str, Any] | None = None,
    at: str | None = None,
) -> float:
    """Store one evidence row and refresh the cached utility; returns the new value. `at` is when the evidence
    happened (ISO, UTC: the turn that used a memory, so an imported session keeps its own date); default now. The
    last-useful time only moves forward: an older session imported later leaves a newer one standing."""
    if signal not in SIGNALS:
        raise InvalidInput(f"feedback must be one of {', '.join(SIGNALS)}, not {signal!r}")
    if weight < 0:
        raise InvalidInput("feedback weight must not be negative")
    now = at or iso_utc()
    with db.transaction():
        db.execute(
            "INSERT INTO feedback_events(episode_id, signal, weight, source, evidence, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (episode_id, signal, weight, source, json.dumps(evidence or {}), now),
        )
        value = recompute(db, episode_id)
        if signal == "helpful":
            db.execute(
                "UPDATE episodes SET last_useful_at = max(COALESCE(last_useful_at, ''), ?) WHERE id = ?",
                (now, episode_id),
            )
    return value


def recompute(db: Database, episode_id: str) -> float:
    row = db.one(
        "SELECT COALESCE(SUM(CASE WHEN signal = 'helpful' THEN weight END), 0), "
        "COALESCE(SUM(CASE WHEN signal = 'unhelpful' THEN weight END), 0) "
        "FROM feedback_events WHERE episode_id = ?",
        (episode_id,),
    )
    helpful, unhelpful = float(row[0]), float(row[1])
    value = posterior_mean(helpful, unhelpful)
    db.execute(
        "UPDATE episodes SET helpful = ?, unhelpful = ?, utility = ? WHERE id = ?",
        (helpful, unhelpful, value, episode_id),
    )
    return value


def feedback_history(db: Database, episode_id: str) -> list[dict[str, Any]]:
    rows = db.query(
        "SELECT signal, weight, source, evidence, created_at FROM feedback_events WHERE episode_id = ? ORDER BY id",
        (episode_id,),
    )
    return [
        {"signal": r[0], "weight": r[1], "source": r[2], "evidence": json.loads(r[3] or "{}"), "created_at": r[4]}
        for r in rows
    ]


def explicit_leaning(db: Database, episode_ids: list[str]) -> dict[str, int]:
    """episode id -> +1 or -1: which way its explicit votes (`tempera feedback`, the MCP tool) lean, for the episodes
    of `episode_ids` that have any and do not cancel out. Ranking lets a person's vote decide between texts a few
    hundredths of cosine apart (`retrieve._coverage_by_votes`); implicit verdicts, a third of whose moves were wrong
    in the learning replay, do not get that reach."""
    if not episode_ids:
        return {}
    rows = db.query(
        "SELECT episode_id, SUM(CASE WHEN signal = 'helpful' THEN weight ELSE -weight END) FROM feedback_events "
        f"WHERE source = 'explicit' AND episode_id IN ({','.join('?' * len(episode_ids))}) GROUP BY episode_id",
        episode_ids,
    )
    return {r[0]: 1 if r[1] > 0 else -1 for r in rows if r[1]}
