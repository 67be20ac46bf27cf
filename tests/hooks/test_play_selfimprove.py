"""Self-improvement through the real hooks: a session whose user corrects the agent, and one that ends in a
vague failure, are captured with no tool call; the next session's hooks carry the ask-back and the correction."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hookrun import context_of, run_hook
from tests.support.datadir import wait_for
from transcript_copy import copy_transcript, session_of
from tempera.core import paths

DATA = Path(__file__).resolve().parents[1] / "selfimprove" / "data"


def count(data_dir: Path, sql: str) -> int:
    db = data_dir / paths.DB_NAME
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        try:
            return int(conn.execute(sql).fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def stop(transcript: Path, repo: Path) -> None:
    r = run_hook(
        "stop",
        {
            "session_id": session_of(transcript),
            "transcript_path": str(transcript),
            "cwd": str(repo),
            "hook_event_name": "Stop",
            "stop_hook_active": False,
        },
    )
    assert r.returncode == 0 and r.stdout == b""


def test_corrections_and_ask_back_reach_the_next_session(
    one_row_suffices: None, data_dir: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "webshop"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "webshop").mkdir(parents=True)
    for name in ("cli.py", "export.py", "report.py"):
        (repo / "src" / "webshop" / name).write_text("# code\n")
    corrections = copy_transcript(DATA / "corrections.jsonl", tmp_path / "t" / "c.jsonl", cwd=repo)
    failure = copy_transcript(DATA / "vague_failure.jsonl", tmp_path / "t" / "f.jsonl", cwd=repo)

    stop(corrections, repo)
    wait_for(lambda: count(data_dir, "SELECT COUNT(*) FROM mistakes") >= 3, timeout=90)
    stop(failure, repo)
    wait_for(lambda: count(data_dir, "SELECT COUNT(*) FROM ask_backs WHERE status = 'pending'") == 1, timeout=90)

    start = context_of(run_hook("session-start", {"session_id": "next", "cwd": str(repo), "source": "startup"}))
    assert "Pending clarifying question" in start and "?" in start  # the drafted clarifying question
    assert "wrong_convention" not in start and "wrong convention" not in start  # no task yet: no category line
    assert count(data_dir, "SELECT COUNT(*) FROM ask_backs WHERE status = 'pending'") == 0

    again = context_of(run_hook("session-start", {"session_id": "next", "cwd": str(repo), "source": "resume"}))
    assert "Pending clarifying question" not in again  # nothing repeated within the session

    prompt = context_of(
        run_hook(
            "user-prompt-submit",
            {"session_id": "other", "cwd": str(repo), "prompt": "add a --verbose flag to src/webshop/cli.py"},
        )
    )
    assert "src/webshop/cli.py" in prompt and ("wrong_convention" in prompt or "wrong convention" in prompt)
