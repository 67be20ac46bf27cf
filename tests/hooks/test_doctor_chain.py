"""`tempera doctor` checks the whole chain: Claude Code registration, the daemon, and hook failures."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest
from tests.support.datadir import endpoint_file, wait_for

from tests.conftest import TRANSCRIPTS
from tests.support.cli import tempera
from tempera.core import paths

SMALL = TRANSCRIPTS / "spotter" / "short.jsonl"


def doctor(env: dict[str, str]) -> tuple[int, dict[str, dict[str, object]]]:
    r = tempera("doctor", "--json", env=env, timeout=120, cwd=env["HOME"])
    return r.returncode, {c["check"]: c for c in json.loads(r.stdout)}


@pytest.fixture
def home_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"}
    env["HOME"] = str(home)
    return env


def test_doctor_sees_install_daemon_and_hook_errors(home_env: dict[str, str], data_dir: Path) -> None:
    code, checks = doctor(home_env)
    assert code == 1 and checks["claude code"]["ok"] is False and "tempera install" in checks["claude code"]["detail"]

    r = tempera("install", "--scope", "user", env=home_env, timeout=120)
    assert r.returncode == 0, r.stderr
    code, checks = doctor(home_env)
    assert checks["claude code (user)"]["ok"] is True, checks["claude code (user)"]
    assert "not running" in str(checks["daemon"]["detail"])
    assert checks["hook errors"]["ok"] is True
    assert code == 0, checks

    (data_dir / paths.HOOK_LOG_NAME).write_text("2026-11-30T00:00:00 pid=1 hook failed:\nTraceback ...\n")
    code, checks = doctor(home_env)
    assert code == 1 and checks["hook errors"]["ok"] is False

    settings = Path(home_env["HOME"]) / ".claude" / "settings.json"
    doc = json.loads(settings.read_text())
    cmd = doc["hooks"]["Stop"][0]["hooks"][0]["command"]
    doc["hooks"]["Stop"][0]["hooks"][0]["command"] = cmd.replace(str(Path(sys.executable).parent), "/nonexistent")
    settings.write_text(json.dumps(doc, indent=2))
    code, checks = doctor(home_env)
    assert checks["claude code (user)"]["ok"] is False and "missing executable" in str(
        checks["claude code (user)"]["detail"]
    )


def remediate(env: dict[str, str]) -> tuple[int, list[str], dict[str, dict[str, object]]]:
    r = tempera("doctor", "--remediate", "--json", env=env, timeout=300, cwd=env["HOME"])
    assert "Traceback" not in r.stderr, r.stderr
    report = json.loads(r.stdout)
    return r.returncode, report["actions"], {c["check"]: c for c in report["checks"]}


def test_remediate_removes_a_killed_daemons_files_and_installs(home_env: dict[str, str], data_dir: Path) -> None:
    r = tempera("daemon", "start", env=home_env, timeout=120)
    assert r.returncode == 0, r.stderr
    pid = int((data_dir / paths.DAEMON_LOCK_NAME).read_text())
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not Path(f"/proc/{pid}").exists())
    _, checks = doctor(home_env)
    endpoint = endpoint_file(data_dir)
    assert checks["daemon files"]["ok"] is False and endpoint.name in str(checks["daemon files"]["detail"])

    code, actions, checks = remediate(home_env)
    assert f"removed {endpoint}, left by a daemon that died" in actions
    assert f"removed {data_dir / paths.DAEMON_LOCK_NAME}, left by a daemon that died" in actions
    assert any(a.startswith("installed Tempera's hooks and MCP server (user scope)") for a in actions), actions
    assert not endpoint.exists() and not (data_dir / paths.DAEMON_LOCK_NAME).exists()
    assert checks["daemon files"]["ok"] and checks["claude code (user)"]["ok"], checks
    assert code == 0, checks
    assert remediate(home_env)[1] == []  # nothing left to do


def test_remediate_requeues_or_clears_dead_jobs(home_env: dict[str, str], data_dir: Path, tmp_path: Path) -> None:
    from tempera.core import jobs
    from tempera.core.migrations import connect

    transcript = tmp_path / "session.jsonl"
    transcript.write_text(SMALL.read_text())
    db = connect()
    for path in (transcript, tmp_path / "deleted.jsonl"):
        jobs.enqueue(db.conn, "capture", {"transcript_path": str(path)}, dedupe_key=f"capture:{path}")
        jobs.fail(db.conn, jobs.lease(db.conn, 60), "RecursionError: maximum recursion depth exceeded", max_attempts=1)
    assert jobs.counts(db.conn) == {"dead": 2}
    _, checks = doctor(home_env)
    assert checks["dead jobs"]["ok"] is False and "2 dead-lettered" in str(checks["dead jobs"]["detail"])

    _, actions, checks = remediate(home_env)
    assert (
        f"requeued dead job 1 (capture of {transcript}); the daemon runs it again (it failed with: "
        "RecursionError: maximum recursion depth exceeded)"
    ) in actions
    assert f"cleared dead job 2 (capture of {tmp_path / 'deleted.jsonl'}): the transcript is gone" in actions
    assert db.query("SELECT id, status, attempts FROM jobs") == [(1, "pending", 0)]
    assert checks["dead jobs"]["ok"] is True
    db.close()


def test_remediate_reembeds_vectors_of_another_model(home_env: dict[str, str], data_dir: Path, tmp_path: Path) -> None:
    import sqlite3

    for summary in ("Fixed the login redirect loop", "Cached the product list for the shop page"):
        r = tempera("capture", "-s", summary, "-p", str(tmp_path), env=home_env, timeout=120)
        assert r.returncode == 0, r.stderr
    with sqlite3.connect(data_dir / paths.DB_NAME) as conn:  # as a database whose vectors another model made
        conn.execute("UPDATE meta SET value = 'BAAI/bge-small-en-v1.5' WHERE key = 'embedding_model'")
    _, checks = doctor(home_env)
    assert checks["vectors"]["ok"] is False and "BAAI/bge-small-en-v1.5" in str(checks["vectors"]["detail"])

    _, actions, checks = remediate(home_env)
    assert any(
        a.startswith("re-embedded 2 episode(s) with ") and a.endswith("(they had vectors of BAAI/bge-small-en-v1.5)")
        for a in actions
    ), actions
    assert checks["vectors"]["ok"] is True, checks["vectors"]
