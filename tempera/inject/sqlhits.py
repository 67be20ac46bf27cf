"""Candidates read with plain SQL, with any sqlite3 driver: keyword hits (FTS5 BM25) for the cold path's prompts.

The stdlib driver may be unable to load sqlite-vec, so this module never touches the vector table; FTS5 is built
into the SQLite of every mainstream Python. Anything missing (no database yet, no FTS5) means "inject nothing".
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tempera.core import defaults, ranking, textsearch
from tempera.core.project import ProjectRef
from tempera.core.ranking import SalienceWeights
from tempera.inject.hits import InjectHit, make_hit

VERIFICATION_WEIGHTS = defaults.VERIFICATION_WEIGHTS
DECAY_RATES = defaults.DECAY_RATES


def open_db(path: Path) -> sqlite3.Connection | None:
    """An autocommit stdlib connection, or None before the database exists."""
    if not path.exists():
        return None
    conn = sqlite3.connect(str(path), timeout=5.0, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def _row_to_hit(row: tuple[Any, ...], project: ProjectRef, **scores: Any) -> InjectHit:
    """A row of COLUMNS as a hit; an episode whose JSON document is unreadable still shows its summary."""
    eid, created, outcome, verification, summary, utility, data, project_id, project_name = row[:9]
    try:
        doc = json.loads(data)
        files, root = list(doc.get("context", {}).get("files_modified", [])), doc.get("project_path")
        origin, prompt = doc["source"]["origin"], str(doc["intent"]["raw_prompt"])
        author, transcript = doc["source"].get("author"), doc["source"].get("transcript_path")
    except (ValueError, AttributeError, TypeError, KeyError):
        files, root, origin, prompt, author, transcript = [], None, "", "", None, None
    return make_hit(
        episode_id=eid,
        created_at=created,
        outcome=outcome,
        verification=verification,
        summary=summary,
        origin=origin,
        raw_prompt=prompt,
        files_modified=files,
        project_path=root,
        project_id=project_id,
        project_name=project_name,
        author=author,
        transcript_path=transcript,
        current=project,
        utility=utility,
        **scores,
    )


COLUMNS = (
    "e.id, e.created_at, e.outcome, e.verification, e.summary, e.utility, e.data, e.project_id, "
    "(SELECT name FROM projects p WHERE p.id = e.project_id)"
)


def keyword_hits(
    conn: sqlite3.Connection,
    prompt: str,
    project: ProjectRef,
    *,
    exclude: set[str],
    limit: int,
    min_hits: int,
    weights: SalienceWeights,
) -> list[InjectHit]:
    """Episodes of this project (or transferable ones) sharing at least `min_hits` distinct terms with the prompt,
    ranked as keyword mode ranks them: BM25 over the best one's, times salience. A prompt without content gets none."""
    terms = textsearch.query_terms(prompt)
    match = textsearch.fts_query(terms, project.id, transferable=True)
    if match is None or limit <= 0 or not textsearch.content_terms(prompt):
        return []
    try:
        rows = conn.execute(
            f"SELECT {COLUMNS}, -bm25(episodes_fts), f.body, e.scope_kind, e.last_useful_at FROM episodes_fts f "
            "CROSS JOIN episodes e ON e.rowid = f.rowid WHERE episodes_fts MATCH ? ORDER BY bm25(episodes_fts) "
            "LIMIT 30",
            (match,),
        ).fetchall()
    except sqlite3.OperationalError:  # no FTS5 in this SQLite, or no schema yet
        return []
    need = min(min_hits, len(terms))
    top = max((row[9] for row in rows), default=1.0) or 1.0
    now = datetime.now(timezone.utc)
    hits = []
    for row in rows:
        if row[0] in exclude:
            continue
        matched = textsearch.matched(terms, row[10])
        if matched < need:
            continue
        relevance, salience = row[9] / top, _salience(row, weights, now)
        hits.append(
            _row_to_hit(
                row,
                project,
                bm25=row[9],
                matched_terms=matched,
                relevance=relevance,
                salience=salience,
                score=relevance * salience,
            )
        )
    hits.sort(key=lambda h: -h.score)
    return hits[:limit]


def _salience(row: tuple[Any, ...], weights: SalienceWeights, now: datetime) -> float:
    """The factor the warm path multiplies relevance by (core/ranking.py), from a row of COLUMNS and then
    (bm25, body, scope_kind, last_useful_at)."""
    created, verification, utility, data, scope_kind, last_useful = row[1], row[3], row[5], row[6], row[11], row[12]
    expires = None
    if scope_kind == "workaround":  # the only scope with an expiry
        try:
            raw = json.loads(data).get("intent", {}).get("scope", {}).get("expires")
            expires = datetime.fromisoformat(raw) if raw else None
        except (ValueError, AttributeError, TypeError):
            pass
    salience, _, _ = ranking.salience_parts(
        weights,
        now,
        utility=utility,
        verification_weight=VERIFICATION_WEIGHTS.get(verification, VERIFICATION_WEIGHTS["untested"]),
        decay_rate=DECAY_RATES.get(scope_kind, DECAY_RATES["legacy"]),
        created=datetime.fromisoformat(created),
        last_useful=datetime.fromisoformat(last_useful) if last_useful else None,
        expires=expires,
    )
    return salience
