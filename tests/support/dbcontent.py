"""What a data dir's database has learned, by content rather than by ids, so that two runs of the same sessions
(one with crashes, one without) can be compared: episode ids are random, so each episode is named by its session
and its first source record, and every episode id inside another row is replaced by that name."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from pathlib import Path

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

# table -> SELECT whose rows are compared; episode ids in any column are renamed
QUERIES = {
    "episodes": "SELECT id, summary, outcome, verification, task_type, round(utility, 6), round(helpful, 6), "
    "round(unhelpful, 6) FROM episodes",
    "links": "SELECT src_id, dst_id, relationship, weight FROM episode_links",
    "evidence": "SELECT episode_id, signal, round(weight, 6), source, evidence FROM feedback_events",
    "calibration": "SELECT episode_id, task_type, declared, verified, corrected FROM calibration_events",
    "corrections": "SELECT episode_id, category, description, correction, source, dedupe_key FROM mistakes",
    "should_have_asked": "SELECT episode_id, trigger, question, answer, source, dedupe_key FROM should_have_asked",
    "ask_backs": "SELECT episode_id, question, status FROM ask_backs",
    "facts": "SELECT d.e, d.a, d.v, d.valid_from, d.valid_to, d.retracted_tx IS NOT NULL, t.reason "
    "FROM fact_datoms d JOIN fact_tx t ON t.tx = d.tx",
    "episode_facts": "SELECT f.episode_id, t.reason FROM episode_facts f JOIN fact_tx t ON t.tx = f.tx",
}


def _names(conn: sqlite3.Connection) -> dict[str, str]:
    names = {}
    for eid, session, uuids in conn.execute(
        "SELECT id, session_id, json_extract(data, '$.source.record_uuids') FROM episodes"
    ):
        first = (json.loads(uuids) or ["?"])[0] if uuids else "?"
        names[eid] = f"{session}:{first}"
    return names


def learned(db_path: Path) -> dict[str, Counter[str]]:
    """Each table's rows (as JSON text, episode ids renamed) with their multiplicity."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        names = _names(conn)

        def rename(value: object) -> object:
            return _UUID.sub(lambda m: names.get(m.group(0), m.group(0)), value) if isinstance(value, str) else value

        out: dict[str, Counter[str]] = {}
        for table, sql in QUERIES.items():
            try:
                rows = conn.execute(sql).fetchall()
            except sqlite3.OperationalError:  # a table not created yet (the fact store makes its own)
                rows = []
            out[table] = Counter(json.dumps([rename(v) for v in row]) for row in rows)
        return out
    finally:
        conn.close()


def compare(expected: dict[str, Counter[str]], got: dict[str, Counter[str]]) -> dict[str, dict[str, int]]:
    """Per table: rows in each run, rows only in the expected run (missing) and only in the other (extra)."""
    return {
        t: {
            "expected": sum(expected[t].values()),
            "got": sum(got[t].values()),
            "missing": sum((expected[t] - got[t]).values()),
            "extra": sum((got[t] - expected[t]).values()),
        }
        for t in QUERIES
    }


def differences(
    expected: dict[str, Counter[str]], got: dict[str, Counter[str]], limit: int = 3
) -> dict[str, list[str]]:
    """A few of the rows that differ, per table, for a failure message."""
    out = {}
    for t in QUERIES:
        rows = [f"- {r}" for r in list(expected[t] - got[t])[:limit]] + [
            f"+ {r}" for r in list(got[t] - expected[t])[:limit]
        ]
        if rows:
            out[t] = rows
    return out
