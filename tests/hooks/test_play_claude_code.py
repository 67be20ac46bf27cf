"""Plays Claude Code: real hook subprocesses with the JSON Claude Code sends, over real transcripts.

Session 1 runs SessionStart, UserPromptSubmit and Stop; the daemon the hooks start captures the episode with
no tool call. Session 2 in the same repository gets it injected for a related prompt, and nothing for an
unrelated one; a repository with the same folder name at another path gets nothing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hookrun import context_of, run_hook

from tests.support.datadir import daemon_pid
from tests.support.datadir import wait_for
from transcript_copy import copy_transcript, session_of

from tests.conftest import TRANSCRIPTS
from tempera.core import paths


def episode_ids(data_dir: Path) -> list[str]:
    db = data_dir / paths.DB_NAME
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        try:
            return [r[0] for r in conn.execute("SELECT id FROM episodes ORDER BY created_at")]
        except sqlite3.OperationalError:  # the schema is being created right now
            return []


def test_memory_across_sessions(data_dir: Path, tmp_path: Path) -> None:
    repo = tmp_path / "work" / "spotter"
    (repo / ".git").mkdir(parents=True)
    transcript = copy_transcript(TRANSCRIPTS / "spotter" / "short.jsonl", tmp_path / "t" / "s1.jsonl", cwd=repo)
    sid = session_of(transcript)
    base = {"session_id": sid, "transcript_path": str(transcript), "cwd": str(repo)}

    assert context_of(run_hook("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"})) == ""
    assert (
        context_of(
            run_hook(
                "UserPromptSubmit",
                {**base, "hook_event_name": "UserPromptSubmit", "prompt": "mix phx.server doesnt seem to start"},
            )
        )
        == ""
    )
    r = run_hook(
        "Stop",
        {
            **base,
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "last_assistant_message": "The server starts now.",
        },
    )
    assert r.returncode == 0 and r.stdout == b""
    ids = wait_for(lambda: episode_ids(data_dir), timeout=90)
    assert len(ids) == 1
    assert daemon_pid(data_dir)  # the hooks started the daemon by themselves

    s2 = {"session_id": "session-two", "transcript_path": str(tmp_path / "t" / "s2.jsonl"), "cwd": str(repo)}
    related = context_of(
        run_hook("user-prompt-submit", {**s2, "prompt": "the phoenix server won't start with mix phx.server again"})
    )
    assert ids[0][:8] in related and "phx.server" in related
    assert related.startswith("<tempera-memory>")
    unrelated = context_of(
        run_hook(
            "user-prompt-submit", {**s2, "session_id": "session-three", "prompt": "write a haiku about autumn leaves"}
        )
    )
    assert unrelated == ""

    twin = tmp_path / "elsewhere" / "spotter"
    (twin / ".git").mkdir(parents=True)
    other = context_of(
        run_hook(
            "user-prompt-submit",
            {"session_id": "s4", "cwd": str(twin), "prompt": "mix phx.server doesnt seem to start"},
        )
    )
    assert other == ""
    start = context_of(run_hook("session-start", {"session_id": "s5", "cwd": str(twin), "source": "startup"}))
    assert start == ""

    again = context_of(run_hook("user-prompt-submit", {**s2, "prompt": "phoenix mix phx.server will not start"}))
    assert ids[0][:8] not in again  # never the same episode twice in one session
    assert (
        not (data_dir / paths.HOOK_LOG_NAME).exists() or "Traceback" not in (data_dir / paths.HOOK_LOG_NAME).read_text()
    )


def test_stop_hook_active_does_nothing(data_dir: Path, tmp_path: Path) -> None:
    transcript = copy_transcript(TRANSCRIPTS / "spotter" / "short.jsonl", tmp_path / "s.jsonl", cwd=tmp_path)
    r = run_hook(
        "stop", {"session_id": "x", "transcript_path": str(transcript), "cwd": str(tmp_path), "stop_hook_active": True}
    )
    assert r.returncode == 0 and r.stdout == b""
    assert not (data_dir / paths.DB_NAME).exists()
    assert daemon_pid(data_dir) is None
