"""Taking an episode out of retrieval without deleting it: its FTS text and vector go, its row, evidence and
links stay, and an `episode_retirements` row says why (consolidated into another, or an expired workaround)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from tempera.core.db import Database
from tempera.core.episodes import EpisodeStore
from tempera.core.errors import InvalidInput, NotFound

RETIRED_SQL = "SELECT episode_id FROM episode_retirements"


def retired_ids(db: Database) -> set[str]:
    return {r[0] for r in db.query(RETIRED_SQL)}


def live_id(db: Database, episode_id: str) -> str:
    """The episode that now holds `episode_id`'s history (itself unless consolidation absorbed it)."""
    seen = {episode_id}
    while True:
        row = db.one(
            "SELECT into_id FROM episode_retirements WHERE episode_id = ? AND reason = 'consolidated'", (episode_id,)
        )
        if row is None or row[0] is None or row[0] in seen:
            return episode_id
        episode_id = row[0]
        seen.add(episode_id)


def retire(
    store: EpisodeStore,
    episode_id: str,
    reason: str,
    *,
    into_id: str | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    db = store.db
    with db.transaction():
        row = db.one("SELECT rowid FROM episodes WHERE id = ?", (episode_id,))
        if row is None:
            raise NotFound(f"no episode {episode_id}")
        db.execute("DELETE FROM episodes_fts WHERE rowid = ?", (row[0],))
        store.vectors.delete(row[0])
        db.execute(
            "INSERT OR REPLACE INTO episode_retirements(episode_id, reason, into_id, detail, retired_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (episode_id, reason, into_id, json.dumps(detail or {}), datetime.now(timezone.utc).isoformat()),
        )


def restore(store: EpisodeStore, episode_id: str) -> None:
    """Put a retired episode back into retrieval (re-indexed as it is now)."""
    if store.db.one("SELECT 1 FROM episode_retirements WHERE episode_id = ?", (episode_id,)) is None:
        raise InvalidInput(f"episode {episode_id} is not retired")
    with store.db.transaction():
        store.update(store.get(episode_id))
        store.db.execute("DELETE FROM episode_retirements WHERE episode_id = ?", (episode_id,))
