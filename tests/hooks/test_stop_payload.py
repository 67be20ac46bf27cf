"""The Stop hook queues only what the capture job needs: Claude Code's `last_assistant_message` (free text that can
hold anything the agent printed) is never written, on the keyword path or through the daemon (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hookrun import ENTRY, run_hook, wait_for
from support.datafiles import stored_bytes

from tempera.core.memory import Memory

MESSAGE = "Deployed; the admin login is root / Tr0ub4dor&3-horse-battery"


def _payloads() -> list[dict[str, Any]]:
    with Memory(use_model=False) as mem:
        return [json.loads(p) for (p,) in mem.db.query("SELECT payload FROM jobs ORDER BY id")]


def test_stop_job_payload_holds_only_what_capture_needs(data_dir: Path, tmp_path: Path, start_daemon: Any) -> None:
    """Relayed to the daemon, which queues the job itself; and through `tempera-hook`, which queues it with the
    stdlib driver."""
    stop = {"cwd": str(tmp_path), "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": MESSAGE}
    start_daemon()
    run_hook("stop", {**stop, "session_id": "warm", "transcript_path": str(tmp_path / "warm.jsonl")})
    run_hook("stop", {**stop, "session_id": "cold", "transcript_path": str(tmp_path / "cold.jsonl")},
             command=ENTRY)
    payloads = wait_for(lambda: len(found := _payloads()) == 2 and found)
    assert [sorted(p) for p in payloads] == [["session_id", "transcript_path"]] * 2
    assert b"Tr0ub4dor" not in stored_bytes(data_dir)


def test_jobs_queued_by_older_hooks_lose_the_message(tmp_path: Path) -> None:
    """A database whose capture jobs still hold `last_assistant_message` keeps only the needed fields once opened."""
    from tempera.core import jobs
    from tempera.core.db import apply_migrations, connect
    from tempera.core.migrations import MIGRATIONS

    names = [name for name, _ in MIGRATIONS]
    path = tmp_path / "old.db"
    db = connect(path, migrate=False)
    apply_migrations(db, MIGRATIONS[:names.index("core.067_capture_jobs_needed_fields")])
    jobs.enqueue(db.conn, "capture", {"session_id": "s", "transcript_path": "/t.jsonl", "cwd": "/w",
                                      "last_assistant_message": MESSAGE}, dedupe_key="capture:/t.jsonl")
    db.close()
    with Memory(use_model=False, db_path=path) as mem:
        [(payload,)] = mem.db.query("SELECT payload FROM jobs")
    assert json.loads(payload) == {"session_id": "s", "transcript_path": "/t.jsonl"}
