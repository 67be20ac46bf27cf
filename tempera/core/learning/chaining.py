"""Session chaining: the turns of one Claude session are linked in order (`continuation`), and an episode is
linked to the latest episode of another session of the same project captured within `session_window_hours`
(`same_project_window`, the original Tempera's 2-hour rule). Linked episodes share part of their direct credit.

The share is derived evidence (source `chain`, evidence.origin = the episode whose credit is shared), computed
from that episode's explicit + implicit evidence only, so shares never feed on shares, and it is replaced,
not added to, each time it is recomputed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from tempera.core.config import BellmanConfig
from tempera.core.db import Database
from tempera.core.learning.evidence import DIRECT_SOURCES, Evidence, replace_evidence, totals
from tempera.core.learning.retire import RETIRED_SQL
from tempera.core.models import Episode, iso_utc

if TYPE_CHECKING:
    from tempera.core.memory import Memory

LINK_WEIGHTS = {"continuation": 1.0, "same_project_window": 0.5}


@dataclass(frozen=True)
class LinkMade:
    src_id: str
    dst_id: str
    relationship: str


def _latest_before(db: Database, episode: Episode, rowid: int, where: str, params: tuple[object, ...]) -> str | None:
    row = db.one(
        "SELECT id FROM episodes WHERE project_id = ? AND id != ? "
        "AND (created_at < ? OR (created_at = ? AND rowid < ?)) "
        f"AND id NOT IN ({RETIRED_SQL}) AND {where} ORDER BY created_at DESC, rowid DESC LIMIT 1",
        (episode.project_id, episode.id, iso_utc(episode.created_at), iso_utc(episode.created_at), rowid, *params),
    )
    return row[0] if row else None


def link_episode(mem: "Memory", episode: Episode) -> list[LinkMade]:
    """Link a just-captured episode to its predecessor in the session and to the latest episode of another
    session of the project inside the window; then share credit along the new links. Idempotent."""
    db, cfg = mem.db, mem.config.bellman
    row = db.one("SELECT rowid FROM episodes WHERE id = ?", (episode.id,))
    if row is None:
        return []
    made: list[LinkMade] = []
    if episode.session_id:
        prev = _latest_before(db, episode, row[0], "session_id = ?", (episode.session_id,))
        if prev:
            made.append(LinkMade(prev, episode.id, "continuation"))
    since = iso_utc(episode.created_at - timedelta(hours=cfg.session_window_hours))
    other = _latest_before(
        db,
        episode,
        row[0],
        "created_at >= ? AND (? IS NULL OR session_id IS NULL OR session_id != ?)",
        (since, episode.session_id, episode.session_id),
    )
    if other:
        made.append(LinkMade(other, episode.id, "same_project_window"))
    at = iso_utc(episode.created_at)  # when the linked work happened: an imported session keeps its own date
    with db.transaction():
        for link in made:
            db.execute(
                "INSERT OR IGNORE INTO episode_links(src_id, dst_id, relationship, weight, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (link.src_id, link.dst_id, link.relationship, LINK_WEIGHTS[link.relationship], at),
            )
        for episode_id in {episode.id, *(link.src_id for link in made)}:
            share_link_credit(db, cfg, episode_id)
    return made


def share_link_credit(db: Database, cfg: BellmanConfig, episode_id: str) -> set[str]:
    """Recompute what `episode_id` passes to its linked episodes: share x link weight x its direct evidence."""
    helpful, unhelpful = totals(db, sources=DIRECT_SOURCES, episode_id=episode_id).get(episode_id, (0.0, 0.0))
    marks = ",".join("?" * len(LINK_WEIGHTS))
    links = db.query(
        f"SELECT dst_id, relationship, weight FROM episode_links WHERE src_id = ? AND relationship IN "
        f"({marks}) UNION ALL SELECT src_id, relationship, weight FROM episode_links WHERE dst_id = ? "
        f"AND relationship IN ({marks})",
        (episode_id, *LINK_WEIGHTS, episode_id, *LINK_WEIGHTS),
    )
    (at,) = db.one(  # a share is as old as the evidence it passes on
        f"SELECT MAX(created_at) FROM feedback_events WHERE episode_id = ? AND source IN "
        f"({','.join('?' * len(DIRECT_SOURCES))})",
        (episode_id, *DIRECT_SOURCES),
    )
    rows = []
    for other, relationship, weight in links:
        share = cfg.link_credit_share * float(weight)
        info = {"origin": episode_id, "relationship": relationship, "share": round(share, 4)}
        rows += [
            Evidence(other, "helpful", share * helpful, info, at),
            Evidence(other, "unhelpful", share * unhelpful, info, at),
        ]
    return replace_evidence(db, "chain", rows, origin=episode_id)


def share_all(mem: "Memory", project_id: str | None = None) -> int:
    """Recompute every link share (of one project, or all): the periodic catch-up for explicit feedback."""
    sql = (
        "SELECT DISTINCT e.id FROM episodes e JOIN episode_links l ON e.id IN (l.src_id, l.dst_id) "
        f"WHERE l.relationship IN ({','.join('?' * len(LINK_WEIGHTS))})"
    )
    params: list[object] = list(LINK_WEIGHTS)
    if project_id:
        sql += " AND e.project_id = ?"
        params.append(project_id)
    ids = [r[0] for r in mem.db.query(sql, params)]
    for episode_id in ids:
        share_link_credit(mem.db, mem.config.bellman, episode_id)
    return len(ids)
