"""Wall time of the real hook processes, against the floor of starting Python at all, in one run.

    python evals/bench_hooks.py [--episodes 10000] [--runs 50]

Rows: `python -c pass` (the floor); the hook command `tempera install` writes (relay.py: `python -I -S relay.py
user-prompt-submit`) with a warm daemon over N episodes; the `tempera-hook` console entry (earlier installs) the
same way; the installed command with no daemon (relay.py falls back to the keyword-only path in-process; the
start-the-daemon guard is held so every call is cold); the installed command for Stop (durable enqueue + wake); and
a real plan mode prompt of 5,198 characters (`tests/data/transcripts/entire-cli/plan-prompt.md`) warm, its calls
alternating with short ones, printed as a ratio of theirs.
Targets: warm median <= 3x the floor and p95 < 150 ms; Stop < 100 ms; cold < 400 ms; the plan <= 1.2x a short prompt.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import populate, queries  # noqa: E402

from tempera.core import paths
from tempera.core.config import load_config  # noqa: E402
from tempera.core.memory import Memory  # noqa: E402
from tempera.core.project import project_for_path  # noqa: E402

PLAN = Path(__file__).resolve().parents[1] / "tests" / "data" / "transcripts" / "entire-cli" / "plan-prompt.md"


def hook_exe() -> list[str]:
    exe = Path(sys.executable).with_name("tempera-hook")
    return [str(exe)] if exe.exists() else [shutil.which("tempera-hook") or "tempera-hook"]


def installed_command() -> list[str]:
    from tempera.installer.locations import relay_program

    return relay_program()


ANSWERED: dict[int, list[bool]] = {}  # id(times) -> whether each call printed context (an empty answer proves nothing)


def time_runs(cmd: list[str], inputs: list[bytes], env: dict[str, str], before=None) -> list[float]:  # type: ignore[no-untyped-def]
    out: list[float] = []
    answered = []
    for data in inputs:
        if before:
            before()
        t = time.perf_counter()
        r = subprocess.run(cmd, input=data, capture_output=True, env=env, check=True)
        out.append((time.perf_counter() - t) * 1000)
        answered.append(b"additionalContext" in r.stdout)
    ANSWERED[id(out)] = answered
    return out


def every_other(times: list[float], start: int) -> list[float]:
    """The calls of one prompt kind from a phase that alternated two, with whether each printed context."""
    out = times[start::2]
    ANSWERED[id(out)] = ANSWERED[id(times)][start::2]
    return out


def stats(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    return statistics.median(xs), xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        data, repo = Path(d) / "data", Path(d) / "repo"
        (repo / ".git").mkdir(parents=True)
        env = {**os.environ, "TEMPERA_DATA_DIR": str(data)}
        os.environ["TEMPERA_DATA_DIR"] = str(data)
        with Memory(load_config()) as mem:
            populate(mem, a.episodes, refs=[project_for_path(repo), project_for_path(Path(d))])
        transcript = Path(d) / "t.jsonl"
        transcript.write_text(
            json.dumps(
                {
                    "type": "user",
                    "sessionId": "bench",
                    "cwd": str(repo),
                    "uuid": "u1",
                    "message": {"role": "user", "content": "hello"},
                }
            )
            + "\n"
        )

        def prompts_of(session: str, texts: list[str] | None = None) -> list[bytes]:
            """One payload per run, each its own session, so no phase's answers are cut by what another showed."""
            return [
                json.dumps({"session_id": f"{session}{i}", "cwd": str(repo), "prompt": q}).encode()
                for i, q in enumerate(texts or queries(a.runs))
            ]

        prompts = prompts_of("s")
        stops = [
            json.dumps(
                {"session_id": f"s{i}", "cwd": str(repo), "transcript_path": str(transcript), "stop_hook_active": False}
            ).encode()
            for i in range(a.runs)
        ]
        cli = [sys.executable, "-m", "tempera.cli"]
        floor = time_runs([sys.executable, "-c", "pass"], [b""] * a.runs, env)
        guard = data / paths.DAEMON_SPAWN_NAME
        hook = installed_command()
        cold = time_runs([*hook, "user-prompt-submit"], prompts, env, before=lambda: guard.write_text("hold"))
        subprocess.run([*cli, "daemon", "start"], env=env, check=True, capture_output=True)
        try:
            time_runs([*hook, "user-prompt-submit"], prompts[:5], env)  # first requests fill caches
            warm = time_runs([*hook, "user-prompt-submit"], prompts_of("w"), env)
            entry = time_runs([*hook_exe(), "user-prompt-submit"], prompts_of("e"), env)
            stop = time_runs([*hook, "stop"], stops, env)
            plan = PLAN.read_text().strip()
            pairs = [p for pair in zip(prompts_of("ps"), prompts_of("pp", [plan] * a.runs)) for p in pair]
            paired = time_runs([*hook, "user-prompt-submit"], pairs, env)  # short, plan, short, plan, ...
        finally:
            subprocess.run([*cli, "daemon", "stop"], env=env, capture_output=True)
        n = a.episodes
        rows = {
            "python -c pass (floor)": floor,
            f"user-prompt-submit, installed command, warm, {n} episodes": warm,
            f"user-prompt-submit, tempera-hook entry, warm, {n} episodes": entry,
            f"user-prompt-submit, no daemon (keyword-only), {n} episodes": cold,
            "stop, installed command": stop,
            "user-prompt-submit, warm, short prompts between the plan's": (short := every_other(paired, 0)),
            f"user-prompt-submit, warm, a {len(plan):,}-character plan prompt": (long := every_other(paired, 1)),
        }
        fmed = statistics.median(floor)
        x_short = round(statistics.median(long) / statistics.median(short), 2)
        report = {
            k: {
                "median_ms": round(stats(v)[0], 1),
                "p95_ms": round(stats(v)[1], 1),
                "x_floor": round(stats(v)[0] / fmed, 2),
                "injected": sum(ANSWERED[id(v)]),
            }
            for k, v in rows.items()
        }
        if a.json:
            print(json.dumps({**report, "plan_x_short": x_short}, indent=2))
            return
        print(f"{'':<62}{'median ms':>10}{'p95 ms':>9}{'x floor':>9}{'injected':>10}")
        for k, r in report.items():
            print(f"{k:<62}{r['median_ms']:>10.1f}{r['p95_ms']:>9.1f}{r['x_floor']:>9.2f}{r['injected']:>6}/{a.runs}")
        print(f"the plan prompt, warm, x the short prompts between its calls: {x_short:.2f} (target <= 1.2)")


if __name__ == "__main__":
    main()
