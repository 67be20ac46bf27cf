"""The turn-time measurement stays runnable, and a gross slowdown of a turn by Tempera fails the suite.

Why a ceiling this loose: CI machines vary, and the figure that matters is printed for people to read
(`python tests/e2e/measure_turn.py`). What the test must catch is a hook or server that waits for a timeout on every
turn (Claude Code allows a hook 10 s), which adds seconds, not fractions of one.
"""

from __future__ import annotations

from pathlib import Path

from measure_turn import measure

MAX_OVERHEAD_S = 4.0


def test_a_turn_with_tempera_costs_at_most_a_few_seconds_more(tmp_path: Path, claude_bin: Path) -> None:
    result = measure(runs=1, root=tmp_path)
    print(result.report())
    assert min(result.without + result.with_tempera + result.hooks_only) > 0
    assert result.overhead < MAX_OVERHEAD_S, result.report()
