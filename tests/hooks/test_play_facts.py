"""Per-turn facts through the real hooks: a constraint stated in one session is captured with no tool call and
comes back, as a currently valid fact, when a later prompt of the same project touches it, and not in another
project; a prompt that names no stored fact gets none, the browser's log shows the facts given, and config can turn
the channel off."""

from __future__ import annotations

import sqlite3
import sys
from datetime import datetime, timezone
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hookrun import context_of, run_hook
from tests.support.datadir import wait_for
from tempera.core import paths
from tempera.core.memory import Memory
from tempera.facts import FactStore
from tempera.ui import injection_log

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "transcripts"))
from transcript_writer import SessionWriter  # noqa: E402


def facts_count(data_dir: Path) -> int:
    try:
        with sqlite3.connect(data_dir / paths.DB_NAME) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM episode_facts").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_constraint_from_one_session_reaches_the_next(data_dir: Path, tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    path = tmp_path / "t" / "s1.jsonl"
    w = SessionWriter(path, session_id="facts-one", cwd=str(repo), start=datetime(2026, 11, 2, 9, tzinfo=timezone.utc))
    w.prompt("Never use MySQL in this service, we standardised on Postgres. Add the orders table.")
    w.tool(
        "Write",
        {"file_path": str(repo / "migrations" / "001_orders.sql"), "content": "create table orders();"},
        "File created",
    )
    w.say("Added the orders table migration for Postgres.")
    r = run_hook(
        "stop", {"session_id": "facts-one", "transcript_path": str(path), "cwd": str(repo), "stop_hook_active": False}
    )
    assert r.returncode == 0 and r.stdout == b""
    wait_for(lambda: facts_count(data_dir) > 0, timeout=90)

    ctx = context_of(
        run_hook(
            "user-prompt-submit",
            {"session_id": "facts-two", "cwd": str(repo), "prompt": "could we move the reporting tables to mysql?"},
        )
    )
    assert "Tempera facts" in ctx and "Never use MySQL" in ctx
    again = context_of(
        run_hook(
            "user-prompt-submit",
            {"session_id": "facts-two", "cwd": str(repo), "prompt": "mysql for reporting, yes or no?"},
        )
    )
    assert "Never use MySQL" not in again  # not repeated within the session
    elsewhere = tmp_path / "elsewhere" / "shop"  # the same name at another path: another project
    (elsewhere / ".git").mkdir(parents=True)
    other = context_of(
        run_hook(
            "user-prompt-submit",
            {
                "session_id": "facts-three",
                "cwd": str(elsewhere),
                "prompt": "could we move the reporting tables to mysql?",
            },
        )
    )
    assert "Never use MySQL" not in other


# Stances main stored from real sessions (entire-cli and a TypeScript project), as global stances any project sees
STORED = {
    ":decision/go-git-s-in-memory-tree-operations": "The places where we use go-git's in-memory tree operations",
    ":decision/kind-of-green-color": "I think we should use a kind of green color",
    ":decision/existing": "keep existing)",
    ":decision/keep-remediation-batch-size": "Keep REMEDIATION_BATCH_SIZE (used by copy-paste endpoint)",
}


@pytest.fixture
def ask(data_dir: Path, tmp_path: Path, start_daemon: Any) -> Callable[[str, str], str]:
    """A project whose memory holds STORED, its daemon started: (session, prompt) -> what the real hook injects."""
    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    with Memory() as mem:
        facts = " ".join(f'[{e} :description "{d}"]' for e, d in STORED.items())
        FactStore(mem.db).transact(f"[{facts}]", reason="stored by capture", valid_from="2026-01-30")
    start_daemon()

    def ask(session: str, prompt: str) -> str:
        return context_of(run_hook("user-prompt-submit", {"session_id": session, "cwd": str(repo), "prompt": prompt}))

    return ask


NAMING = "why is REMEDIATION_BATCH_SIZE 50 and not 200?"
KEEP = "Decision (since 2026-01-30): Keep REMEDIATION_BATCH_SIZE (used by copy-paste endpoint)."


def test_a_prompt_naming_nothing_stored_gets_nothing(ask: Callable[[str, str], str]) -> None:
    assert ask("geo", "what's the capital of Australia?") == ""  # main gave it the go-git stance ("s" of "what's")


def test_a_prompt_naming_an_identifier_gets_its_stance_and_the_log_shows_it(ask: Callable[[str, str], str]) -> None:
    named = ask("batch", NAMING)
    assert "Tempera facts" in named and KEEP in named and "go-git" not in named and "green" not in named
    with Memory() as mem:
        [shown] = [p for p in injection_log.prompts(mem.db) if p["facts"]]
    assert (shown["session_id"], shown["prompt"], shown["facts"]) == ("batch", NAMING, [KEEP])


def test_facts_false_in_config_silences_the_facts(ask: Callable[[str, str], str], data_dir: Path) -> None:
    (data_dir / paths.CONFIG_NAME).write_text("[inject]\nfacts = false\n")
    assert ask("off", NAMING) == ""
    (data_dir / paths.CONFIG_NAME).write_text("[inject]\nfacts = true\n")
    assert KEEP in ask("on", NAMING)
