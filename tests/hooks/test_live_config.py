"""A running daemon answers and works with config.toml as it is now: an edit of `inject.budget_chars` shapes the
next prompt's context at once, as the kill switch in the same file always did, and an edit of a learning weight
reaches the next capture job, without a restart; the validated config is kept while the file stays as it was.
Real daemon, real relay.py, real transcript."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from tempera.core import paths
from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tempera.core.config import InjectConfig

from hookrun import context_of, run_hook
from tests.conftest import TRANSCRIPTS
from tests.support.datadir import daemon_pid, wait_for
from transcript_copy import copy_transcript

PROMPT = {"cwd": "/tmp", "prompt": "the checkout total rounding bug in the cart is back"}
CHECKOUT = (
    "Fixed the checkout total rounding bug in the cart: amounts were floats, so sums of line items drifted by a "
    "cent; they are Decimal cents now, rounded half-even once at the end."
)


def test_an_edited_budget_applies_at_the_next_prompt(data_dir: Path, start_daemon: Any) -> None:
    with Memory() as mem:
        for n in range(4):
            mem.capture(
                CaptureInput(
                    summary=f"Fixed the checkout total rounding bug in the cart, case {n}: amounts were floats, so "
                    "sums of line items drifted by a cent; they are Decimal cents now, rounded half-even once at "
                    "the end, and the cart tests cover baskets of 1 to 40 items with mixed tax rates.",
                    project="/tmp",
                )
            )
    pid = start_daemon()
    wide = context_of(run_hook("user-prompt-submit", {**PROMPT, "session_id": "a"}))
    small = 400
    assert small < len(wide) <= InjectConfig().budget_chars, len(wide)  # the default budget held more than 400

    (data_dir / paths.CONFIG_NAME).write_text(f"[inject]\nbudget_chars = {small}\n")
    narrow = context_of(run_hook("user-prompt-submit", {**PROMPT, "session_id": "b"}))
    assert narrow and len(narrow) <= small, len(narrow)
    assert daemon_pid(data_dir) == pid and not (data_dir / paths.HOOK_LOG_NAME).exists()  # the same daemon answered


def test_an_edited_learning_weight_reaches_the_next_capture_job(
    data_dir: Path, tmp_path: Path, start_daemon: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    with Memory() as mem:
        (ep,) = mem.capture_many(
            [CaptureInput(summary=CHECKOUT, files_modified=["src/cart/total.py"], project=str(repo))]
        )
    monkeypatch.setenv("TEMPERA_INJECT__DAEMON_TIMEOUT_SECONDS", "30")  # the warm answer, not the keyword fallback
    pid = start_daemon()
    (data_dir / paths.CONFIG_NAME).write_text("[bellman]\nimplicit_ignored_weight = 0.2\n")  # after the start

    sid = "phoenix"
    payload = {**PROMPT, "session_id": sid, "cwd": str(repo)}
    assert f"id {ep.id[:8]}" in context_of(run_hook("user-prompt-submit", payload))
    # the session then does something else entirely: the injected episode is judged ignored
    transcript = copy_transcript(
        TRANSCRIPTS / "spotter" / "short.jsonl", tmp_path / f"{sid}.jsonl", cwd=repo, session_id=sid
    )
    stop = {"session_id": sid, "transcript_path": str(transcript), "cwd": str(repo), "stop_hook_active": False}
    assert run_hook("stop", {**stop, "hook_event_name": "Stop"}).returncode == 0

    def weight() -> float | None:
        with sqlite3.connect(data_dir / paths.DB_NAME) as conn:
            row = conn.execute(
                "SELECT weight FROM feedback_events WHERE episode_id = ? AND source = 'implicit'", (ep.id,)
            ).fetchone()
        return row[0] if row else None

    assert wait_for(weight, timeout=120) == 0.2  # not the 0.05 the daemon's start read
    assert daemon_pid(data_dir) == pid


def test_the_validated_config_is_kept_while_the_file_and_environment_stay(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = data_dir / paths.CONFIG_NAME
    data_dir.mkdir(parents=True, exist_ok=True)

    def write(text: str, age: float) -> None:
        path.write_text(text)
        os.utime(path, (time.time() - age, time.time() - age))

    write("[inject]\nbudget_chars = 1500\n", age=60)
    with Memory(use_model=False) as mem:
        first = mem.current_config()
        assert first.inject.budget_chars == 1500 and mem.current_config() is first
        write("[inject]\nbudget_chars = 1200\n", age=30)  # the same size: the modification time tells
        assert mem.current_config().inject.budget_chars == 1200
        monkeypatch.setenv("TEMPERA_INJECT__BUDGET_CHARS", "900")
        kept = mem.current_config()
        assert kept.inject.budget_chars == 900 and mem.current_config() is kept
        write("[inject]\nmax_episodes = 2\n", age=0)  # too fresh for its stamp to prove anything: read per call
        assert mem.current_config() is not mem.current_config()
        assert mem.current_config().inject.max_episodes == 2
