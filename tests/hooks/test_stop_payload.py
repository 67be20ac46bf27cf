"""The Stop hook queues only what the capture job needs: Claude Code's `last_assistant_message` (free text that can
hold anything the agent printed) is never written, on the keyword path or through the daemon (issue 17)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hookrun import ENTRY, run_hook
from tests.support.datadir import wait_for
from support.datafiles import stored_bytes
from support.secrets import SECRETS, found_in, plant_in_session

from tempera.core.memory import Memory

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "transcripts"))
from transcript_writer import SessionWriter  # noqa: E402

MESSAGE = "Deployed; the admin login is root / Tr0ub4dor&3-horse-battery"


def _payloads() -> list[dict[str, Any]]:
    with Memory(use_model=False) as mem:
        return [json.loads(p) for (p,) in mem.db.query("SELECT payload FROM jobs ORDER BY id")]


def test_stop_job_payload_holds_only_what_capture_needs(data_dir: Path, tmp_path: Path, start_daemon: Any) -> None:
    """Relayed to the daemon, which queues the job itself; and through `tempera-hook`, which queues it with the
    stdlib driver."""
    stop = {
        "cwd": str(tmp_path),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": MESSAGE,
    }
    start_daemon()
    run_hook("stop", {**stop, "session_id": "warm", "transcript_path": str(tmp_path / "warm.jsonl")})
    run_hook("stop", {**stop, "session_id": "cold", "transcript_path": str(tmp_path / "cold.jsonl")}, command=ENTRY)
    payloads = wait_for(lambda: len(found := _payloads()) == 2 and found)
    assert [sorted(p) for p in payloads] == [["session_id", "transcript_path"]] * 2
    assert b"Tr0ub4dor" not in stored_bytes(data_dir)


def test_stop_capture_through_the_daemon_stores_no_secret(data_dir: Path, tmp_path: Path, start_daemon: Any) -> None:
    """The secrets suite's shapes in a session's prompts, commands, tool output and replies, and in the Stop
    payload: the daemon captures the session and no file of the data dir holds any of them."""
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    s = SessionWriter(tmp_path / "5ec0e700-0000-4000-8000-0000000000f1.jsonl", cwd=str(project))
    plant_in_session(s)
    start_daemon()
    run_hook(
        "stop",
        {
            "cwd": str(project),
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "session_id": s.session_id,
            "transcript_path": str(s.path),
            "last_assistant_message": " ".join(t for _, t, _ in SECRETS),
        },
    )

    def captured() -> bool:
        with Memory(use_model=False) as mem:
            done = mem.db.query("SELECT status FROM jobs WHERE kind = 'capture'") == [("done",)]
            return done and mem.db.one("SELECT count(*) FROM episodes")[0] == len(SECRETS)

    wait_for(captured, timeout=120)
    raw = stored_bytes(data_dir)
    assert b"REDACTED" in raw
    assert found_in(raw) == []


def test_jobs_queued_by_older_hooks_lose_the_message(tmp_path: Path) -> None:
    """A database whose capture jobs still hold `last_assistant_message` keeps only the needed fields once opened."""
    from tempera.core import jobs
    from tempera.core.db import apply_migrations
    from tempera.core.migrations import connect
    from tempera.core.migrations import MIGRATIONS

    names = [name for name, _ in MIGRATIONS]
    path = tmp_path / "old.db"
    db = connect(path, migrate=False)
    apply_migrations(db, MIGRATIONS[: names.index("core.067_capture_jobs_needed_fields")])
    jobs.enqueue(
        db.conn,
        "capture",
        {"session_id": "s", "transcript_path": "/t.jsonl", "cwd": "/w", "last_assistant_message": MESSAGE},
        dedupe_key="capture:/t.jsonl",
    )
    db.close()
    with Memory(use_model=False, db_path=path) as mem:
        [(payload,)] = mem.db.query("SELECT payload FROM jobs")
    assert json.loads(payload) == {"session_id": "s", "transcript_path": "/t.jsonl"}
