"""Put a kept learning-replay store's injections back on their sessions' own clock, for `tempera learn refit-fusion`.

    python evals/replay_clock.py STORE.db [--data DIR]

`evals/learning_replay.py --keep DIR` keeps DIR/<arm>.db, whose episodes carry their transcripts' times (January
2026 for entire-cli) but whose injections were logged at the replay's wall-clock time, after every one of them.
Live, a prompt is logged as it is asked: `tempera learn refit-fusion` ranks each prompt at its time, among the episodes
stored by then. So each injection's time becomes its session's `first_ts` (sessions.tsv) plus its offset from the
session's first injection, less a minute (a session's injections took well under a minute): the replay asks all
of a session's prompts before it captures the session, so none of the session's own episodes, the first of which
starts at `first_ts`, existed when they were asked. Rewrites STORE in place.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_sessions import SHARED, load_sessions  # noqa: E402

BEFORE = timedelta(minutes=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("--data", type=Path, default=SHARED / "data" / "transcripts")
    a = ap.parse_args()
    start = {
        r["session_id"]: datetime.fromisoformat(r["first_ts"])
        for r in load_sessions(a.data / "entire-cli" / "sessions.tsv")
    }
    with sqlite3.connect(a.store) as conn:
        first = dict(conn.execute("SELECT session_id, MIN(created_at) FROM injections GROUP BY session_id"))
        rows = conn.execute("SELECT id, session_id, created_at FROM injections").fetchall()
        slow = [
            s
            for s, last in conn.execute("SELECT session_id, MAX(created_at) FROM injections GROUP BY session_id")
            if datetime.fromisoformat(last) - datetime.fromisoformat(first[s]) >= BEFORE
        ]
        if slow:
            raise SystemExit(f"{len(slow)} session(s) took {BEFORE} or more to replay, e.g. {slow[0]}: raise BEFORE")
        moved = [
            ((start[s] - BEFORE + (datetime.fromisoformat(at) - datetime.fromisoformat(first[s]))).isoformat(), i)
            for i, s, at in rows
            if s in start
        ]
        conn.executemany("UPDATE injections SET created_at = ? WHERE id = ?", moved)
    print(f"{len(moved)} of {len(rows)} injections moved to their sessions' times")


if __name__ == "__main__":
    main()
