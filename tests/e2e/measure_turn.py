"""Wall time of one whole Claude Code turn with and without Tempera installed: the cost a user feels.

    python tests/e2e/measure_turn.py [--runs 7]

A turn is one `claude -p` process from start to exit against the Messages API stub (so the model costs nothing and
the difference is Tempera's three hooks): a failing test run, an edit, a passing run, a closing answer. Both homes
run the same script in the same kind of repository, interleaved so that machine load hits both alike. With Tempera,
the memory already holds the episode of an earlier turn and the daemon is warm, as it is for a user after their
first session; the first (cold) turn, which starts the daemon, is reported on its own.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [p for p in (str(HERE), str(HERE.parents[1])) if p not in sys.path]

from claude_cli import ensure_claude  # noqa: E402
from messages_stub import MessagesStub  # noqa: E402
from projects import CALC, FIX_PROMPT, fix_add_session  # noqa: E402
from sandbox import Sandbox  # noqa: E402


@dataclass(frozen=True)
class Measurement:
    runs: int
    without: list[float]  # seconds per turn, plain Claude Code
    with_tempera: list[float]  # seconds per turn, Tempera installed and its daemon warm
    hooks_only: list[float]  # the same with the MCP server unregistered: what the three hooks alone cost
    cold: float  # the first turn with Tempera installed (it starts the daemon)

    @property
    def overhead(self) -> float:
        return statistics.median(self.with_tempera) - statistics.median(self.without)

    def report(self) -> str:
        def row(name: str, xs: list[float]) -> str:
            return f"{name:<28} median {statistics.median(xs):6.2f} s   min {min(xs):6.2f}   max {max(xs):6.2f}"

        return "\n".join(
            [
                f"whole Claude Code turn, {self.runs} run(s) each:",
                row("without Tempera", self.without),
                row("with Tempera (warm daemon)", self.with_tempera),
                row("Tempera hooks only, no MCP", self.hooks_only),
                f"{'first turn with Tempera':<28} {self.cold:6.2f} s (cold: starts the daemon)",
                f"Tempera adds {self.overhead:+.2f} s per turn (difference of medians)",
            ]
        )


def _turn(box: Sandbox, name: str) -> float:
    """One scripted turn in a fresh copy of the project, so every run does the same work."""
    repo = box.repo(name, CALC)
    return box.claude(FIX_PROMPT, cwd=repo, script=fix_add_session(repo)).seconds


def measure(runs: int, root: Path) -> Measurement:
    claude = ensure_claude()
    stub = MessagesStub(root / "requests.jsonl").start()
    plain, full, hooks = (Sandbox(root / name, claude, stub) for name in ("plain", "tempera", "hooks-only"))
    try:
        for box in (plain, full, hooks):
            box.home.mkdir(parents=True)
        for box in (full, hooks):
            box.install()
        r = hooks.claude_command("mcp", "remove", "tempera", "-s", "user", cwd=hooks.home)
        assert r.returncode == 0, r.stderr
        cold = _turn(full, "work/warmup/calc-app")
        for box in (plain, hooks):  # each Claude Code home writes its files once; the daemon warms up
            _turn(box, "work/warmup/calc-app")
        times: dict[str, list[float]] = {"plain": [], "full": [], "hooks": []}
        for n in range(runs):
            for key, box in (("plain", plain), ("full", full), ("hooks", hooks)):
                times[key].append(_turn(box, f"work/{n}/calc-app"))
        return Measurement(runs, times["plain"], times["full"], times["hooks"], cold)
    finally:
        full.stop_daemon()
        hooks.stop_daemon()
        stub.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tempera-measure-") as tmp:
        print(measure(a.runs, Path(tmp)).report())


if __name__ == "__main__":
    main()
