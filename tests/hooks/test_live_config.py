"""A running daemon answers with config.toml as it is now: an edit of `inject.budget_chars` shapes the next prompt's
context at once, as the kill switch in the same file always did, without a restart. Real daemon, real relay.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tempera.core import paths
from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tempera.core.settings import BUDGET_CHARS

from hookrun import context_of, run_hook
from tests.support.datadir import daemon_pid

PROMPT = {"cwd": "/tmp", "prompt": "the checkout total rounding bug in the cart is back"}


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
    assert small < len(wide) <= BUDGET_CHARS.default, len(wide)  # the default budget held more than the small one

    (data_dir / paths.CONFIG_NAME).write_text(f"[inject]\nbudget_chars = {small}\n")
    narrow = context_of(run_hook("user-prompt-submit", {**PROMPT, "session_id": "b"}))
    assert narrow and len(narrow) <= small, len(narrow)
    assert daemon_pid(data_dir) == pid and not (data_dir / paths.HOOK_LOG_NAME).exists()  # the same daemon answered
