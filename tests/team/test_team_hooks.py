"""Two developers, two clones of one repository, two data dirs, one team database; everything as a user runs it.

Alice's session ends (real Stop hook); her daemon captures it and pushes it by itself. Bob connects with the
`tempera team` CLI; his daemon pulls it; his real UserPromptSubmit hook injects it for a related prompt, naming
Alice; his helpful feedback reaches Alice's utility. Secrets planted in the transcript reach no PostgreSQL table.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from teamdb import Team

from tempera.core import paths
from tempera.team.pgschema import FACT_TABLES, SHARED_TABLES

from tests.hooks.hookrun import context_of, run_hook
from tests.support.datadir import kill_daemon
from tests.support.datadir import wait_for
from tests.support.gitrepos import git, repo
from tests.transcripts.transcript_writer import SessionWriter

# (shape, text as a transcript carries it, the secret): a few shapes; tests/transcripts holds the full corpus
PLANTED = [
    (shape, text.format(secret), secret)
    for shape, text, secret in (
        ("anthropic key", "export ANTHROPIC_API_KEY={}", "sk-ant-api03-" + "Qx7vR2mK9pL4" * 7),
        ("github token", "git clone https://github.com/acme/x (token {})", "ghp_" + "T8kWq2Zr" * 5),
        ("aws access key", "aws_access_key_id = {}", "AKIA" + "J7Q2M9X4R6T1V3W8"),
        ("url password", "DATABASE_URL=postgres://shop:{}@db.internal/shop", "Vn4-pW9q-Lr2x"),
        ("stripe key", "Stripe.api_key = {}", "sk_live_" + "h3Jd9Kq2Lm5N8p1R4s7T"),
        ("password assignment", "DB_PASSWORD={} ./migrate", "Orchid-Cobalt-4417"),
        ("slack token", "SLACK {}", "xoxb-" + "1234567890123-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7"),
    )
]
PRIVATE = "the staging root password is hunter2-orchid"


def tempera(data_dir: Path, *args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(
        [sys.executable, "-m", "tempera.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **dev_env(data_dir)},
    )
    assert r.returncode == 0 or not check, r.stderr
    return r


def dev_env(data_dir: Path) -> dict[str, str]:
    return {"TEMPERA_DATA_DIR": str(data_dir), "TEMPERA_TEAM__SYNC_SECONDS": "1"}


def local(data_dir: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    try:
        with sqlite3.connect(data_dir / paths.DB_NAME) as conn:
            return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []


def alice_session(path: Path, cwd: Path) -> SessionWriter:
    s = SessionWriter(path, session_id="7d3f0c1e-2b4a-4c5d-8e9f-0a1b2c3d4e5f", cwd=str(cwd))
    s.prompt(
        "the checkout page crashes with KeyError 'currency' when the cart is empty; "
        f"<private>{PRIVATE}</private> " + PLANTED[0][1] + ". We decided to use DEFAULT_CURRENCY for "
        "empty carts because " + PLANTED[5][1] + " broke the migration"
    )
    s.bash("pytest tests/test_checkout.py", "E   KeyError: 'currency'\n1 failed", ok=False)
    for n, (_, text, _) in enumerate(PLANTED[1:], 1):
        if n % 2:
            s.bash(f"grep -rn currency config/{n}.env", text)
        else:
            s.tool("Read", {"file_path": str(cwd / f"config/{n}.yml")}, text)
    s.tool(
        "Edit",
        {
            "file_path": str(cwd / "shop/checkout.py"),
            "old_string": "cart['currency']",
            "new_string": "cart.get('currency', DEFAULT_CURRENCY)",
        },
        "The file has been updated.",
    )
    s.bash("pytest tests/test_checkout.py", "1 passed")
    s.say("Fixed: an empty cart has no currency, so checkout now falls back to DEFAULT_CURRENCY; the test passes.")
    return s


def test_alices_fix_reaches_bobs_prompt_and_bobs_feedback_reaches_alice(team: Team, tmp_path: Path) -> None:
    origin = repo(tmp_path / "origin" / "webshop")
    a_repo, b_repo = tmp_path / "alice" / "webshop", tmp_path / "bob" / "webshop"
    for clone in (a_repo, b_repo):
        git(tmp_path, "clone", "-q", str(origin), str(clone))
    a_dir, b_dir = tmp_path / "alice-data", tmp_path / "bob-data"
    alice, bob = f"alice_{team.dbname[-6:]}", f"bob_{team.dbname[-6:]}"
    try:
        tempera(a_dir, "init", cwd=a_repo)
        team.add_member(alice, [])
        team.add_member(bob, [])
        out = json.loads(
            tempera(a_dir, "team", "connect", team.dsn(alice), "--project", ".", "--json", cwd=a_repo).stdout
        )
        assert out["member"] == alice and len(out["shared"]) == 1  # a project new to the team: Alice adds it
        project_id = out["shared"][0]
        team.admin.execute("INSERT INTO tempera.access(project_id, member) VALUES (%s, %s)", (project_id, bob))

        transcript = alice_session(tmp_path / "claude" / "s1.jsonl", a_repo)
        stop = run_hook(
            "Stop",
            {
                "session_id": transcript.session_id,
                "transcript_path": str(transcript.path),
                "cwd": str(a_repo),
                "hook_event_name": "Stop",
                "stop_hook_active": False,
            },
            env=dev_env(a_dir),
        )
        assert stop.returncode == 0 and stop.stdout == b""
        wait_for(lambda: team.rows("episodes", project_id) >= 1, timeout=180)  # Alice's daemon pushed it
        wait_for(lambda: team.rows("facts", project_id) >= 1, timeout=60)  # and the decision her turn stated
        (episode_id,) = [r[0] for r in local(a_dir, "SELECT id FROM episodes")]

        tempera(b_dir, "team", "connect", team.dsn(bob), "--project", ".", cwd=b_repo)
        tempera(b_dir, "daemon", "start", cwd=b_repo)
        wait_for(lambda: local(b_dir, "SELECT 1 FROM episodes WHERE id = ?", (episode_id,)), timeout=180)
        related = context_of(
            run_hook(
                "UserPromptSubmit",
                {
                    "session_id": "bob-1",
                    "transcript_path": str(tmp_path / "claude" / "b1.jsonl"),
                    "cwd": str(b_repo),
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": "checkout raises KeyError currency for an empty cart again",
                },
                env=dev_env(b_dir),
            )
        )
        assert episode_id[:8] in related and f"by teammate {alice}" in related
        assert PRIVATE not in related

        tempera(b_dir, "feedback", "helpful", "-e", episode_id, cwd=b_repo)
        wait_for(lambda: team.rows("evidence", project_id) >= 1, timeout=120)  # Bob's daemon pushed it
        kill_daemon(a_dir)  # Alice pulls by hand this time
        tempera(a_dir, "team", "pull", cwd=a_repo)
        ((utility,),) = local(a_dir, "SELECT utility FROM episodes WHERE id = ?", (episode_id,))
        assert float(utility) > 0.5

        status = json.loads(tempera(a_dir, "team", "status", "--json", cwd=a_repo).stdout)
        assert status["runs"]["pull"]["error"] is None and status["projects"][0]["own"] == 1
        assert status["team"][project_id]["episodes"] == 1
        doctor = tempera(a_dir, "doctor", "--json", cwd=a_repo, check=False)  # Claude Code is not installed here
        (check,) = [c for c in json.loads(doctor.stdout) if c["check"] == "team"]
        assert check["ok"] and "pgvector" in check["detail"]

        dump = " ".join(
            str(row)
            for table in ("projects", "access", *SHARED_TABLES, *FACT_TABLES)
            for row in team.admin.execute(f"SELECT t::text FROM tempera.{table} t").fetchall()
        )
        assert "KeyError" in dump and "DEFAULT_CURRENCY" in dump  # the scan reads the shared rows and facts
        leaked = [name for name, _, secret in PLANTED if secret in dump or secret[len(secret) // 2 - 5 :][:10] in dump]
        assert leaked == [] and "hunter2" not in dump and str(tmp_path) not in dump
    finally:
        kill_daemon(a_dir)
        kill_daemon(b_dir)
