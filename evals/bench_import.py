"""Throughput of `tempera import` with embeddings, against a yardstick measured in the same run.

    python evals/bench_import.py [--data DIR] [--code DIR ...] [--rounds 3] [--json PATH]

The files are the sessions `evals/real_sessions.py` imports: the chronologically earlier 70% of
`entire-cli/sessions.tsv` (86 sessions, 57 MB). Each round, for each code tree named by `--code` (default: the
tempera this script imports), a fresh data dir, Claude config dir and git repository are made and
`tempera import FILES --project <repo> --json` runs in a subprocess (the real CLI, its model load included), as
real_sessions.py runs it. Right before each import the yardstick runs: this process parses every JSON line of the
same files, so a ratio of import time to yardstick time moves less with the load of a shared machine than either
figure alone. Printed per code tree, medians over the rounds: MB/s over the wall time and over the import's own
seconds, CPU seconds of the import process (user + system), and import seconds per yardstick second; with two
trees, the second's speed-up over the first (first / second, per round, then the median).

To compare commits, extract each (`git archive REV | tar -x -C DIR`) and name the folders with `--code`; the runs
alternate between them, so both see the same moments of a busy machine. Run from outside the work tree.

    python evals/bench_import.py --stops SESSION.jsonl [--rounds 3]

What one more Stop costs as a session grows: the session is cut at 10%, 20% … 100% of its bytes (at the next
place a hook captures, `stop_replay.stop_cuts`); at each point a fresh memory captures the file up to the Stop
before (not timed), then the file up to that point (timed: the Stop after one more turn), then once more with
nothing new (timed). Printed per point: seconds and bytes read of both, and each as a ratio to the first point
(flat: a Stop costs what is new; growing: it costs the session so far). In this process with the tempera it
imports (PYTHONPATH picks the tree) and keyword-only memory, so the model's cost, the same both ways, is left out.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TEMPERA_SHARED_DIR", REPO.parent / "shared"))
PAST_SHARE = 0.7  # as evals/real_sessions.py imports


def past_sessions(data: Path) -> list[Path]:
    """The earlier 70% of the entire-cli sessions, by first timestamp."""
    base = data / "entire-cli"
    csv.field_size_limit(1 << 30)
    with (base / "sessions.tsv").open(newline="") as fh:
        rows = sorted(csv.DictReader(fh, delimiter="\t"), key=lambda r: r["first_ts"])
    return [base / "sessions" / f"{r['session_id']}.jsonl" for r in rows[: round(len(rows) * PAST_SHARE)]]


def yardstick(files: list[Path]) -> float:
    """Seconds to parse every JSON line of the files here: the machine's speed at this moment."""
    started = time.perf_counter()
    for f in files:
        with f.open("rb") as fh:
            for line in fh:
                try:
                    json.loads(line)
                except ValueError:
                    continue
    return time.perf_counter() - started


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_import(code: Path | None, files: list[Path]) -> dict[str, float]:
    """`tempera import FILES --project <repo> --json` in a fresh sandbox; seconds (wall, inside, CPU)."""
    with tempfile.TemporaryDirectory(prefix="tempera-bench-import-") as tmp:
        root = Path(tmp)
        repo = root / "repo"
        repo.mkdir()
        (repo / "README.md").write_text("the project of the imported sessions\n")
        git = ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
        for args in (["init", "-q"], ["add", "README.md"], ["commit", "-q", "-m", "init"]):
            subprocess.run([*git, *args], check=True, capture_output=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TEMPERA_") and k != "FASTEMBED_CACHE_DIR"}
        env.update(
            {
                "TEMPERA_DATA_DIR": str(root / "data"),
                "CLAUDE_CONFIG_DIR": str(root / "claude"),
                "TEMPERA_DAEMON__WATCH_TRANSCRIPTS": "false",
                "TEMPERA_DREAM__SCHEDULE": "false",
                "TEMPERA_LLM__ENABLED": "false",
            }
        )
        if code is not None:
            env["PYTHONPATH"] = str(code)
        cpu, started = children_cpu(), time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "tempera.cli", "import", *map(str, files), "--project", str(repo), "--json"],
            env=env,
            cwd=root,
            capture_output=True,
            text=True,
            timeout=3600,
        )
        wall, cpu = time.perf_counter() - started, children_cpu() - cpu
        if done.returncode:
            raise SystemExit(f"tempera import failed ({code or 'this tree'}): {done.stderr.strip()}")
        report = json.loads(done.stdout)
    return {"wall": wall, "inside": report["seconds"], "cpu": cpu, "episodes": report["episodes_added"]}


def stop_costs(session: Path, rounds: int) -> list[dict[str, float]]:
    """Per tenth of the session: the median seconds and the bytes read of a Stop after one more turn, and of a
    Stop with nothing new (see the module's docstring)."""
    from stop_replay import stop_cuts

    from tempera.core.memory import Memory
    from tempera.transcripts.pipeline import capture_and_learn

    data = session.read_bytes()
    cuts = stop_cuts(data)
    points = sorted({next(n for n, c in enumerate(cuts) if c >= len(data) * tenth / 10) for tenth in range(1, 11)})
    out = []
    for n in points:
        runs = []
        for _ in range(rounds):
            with tempfile.TemporaryDirectory(prefix="tempera-bench-stop-") as tmp:
                path = Path(tmp) / "projects" / "-bench" / session.name
                path.parent.mkdir(parents=True)
                os.environ["TEMPERA_DATA_DIR"] = str(Path(tmp) / "data")
                with Memory(use_model=False) as mem:
                    path.write_bytes(data[: cuts[n - 1]] if n else b"")
                    capture_and_learn(mem, path)
                    path.write_bytes(data[: cuts[n]])
                    started = time.perf_counter()
                    turn = capture_and_learn(mem, path)
                    middle = time.perf_counter()
                    idle = capture_and_learn(mem, path)
                    ended = time.perf_counter()
            runs.append((middle - started, turn.bytes_read, ended - middle, idle.bytes_read))
        out.append(
            {
                "at": cuts[n],
                "share": round(cuts[n] / len(data), 2),
                "turn_s": statistics.median(r[0] for r in runs),
                "turn_bytes": runs[0][1],
                "idle_s": statistics.median(r[2] for r in runs),
                "idle_bytes": runs[0][3],
            }
        )
    return out


def print_stop_costs(session: Path, points: list[dict[str, float]]) -> None:
    first = points[0]
    print(f"{session.name}: {session.stat().st_size:,} bytes; ratios to the first point")
    print("share  one more turn: s (ratio), bytes read (ratio)    nothing new: s (ratio), bytes read (ratio)")
    for p in points:
        print(
            f"{p['share']:>5.0%}  {p['turn_s']:6.3f} ({p['turn_s'] / first['turn_s']:5.1f}x) "
            f"{p['turn_bytes']:>10,} ({p['turn_bytes'] / max(first['turn_bytes'], 1):5.1f}x)    "
            f"{p['idle_s']:6.3f} ({p['idle_s'] / first['idle_s']:5.1f}x) "
            f"{p['idle_bytes']:>10,} ({p['idle_bytes'] / max(first['idle_bytes'], 1):5.1f}x)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=SHARED / "data" / "transcripts", help="folder holding entire-cli/")
    ap.add_argument("--code", type=Path, nargs="*", default=[], help="source trees to alternate (default: this one)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--stops", type=Path, default=None, help="instead: what one more Stop of this session costs")
    a = ap.parse_args()
    if a.stops:
        points = stop_costs(a.stops, a.rounds)
        print_stop_costs(a.stops, points)
        if a.json:
            a.json.write_text(json.dumps(points, indent=2) + "\n")
        return
    files = past_sessions(a.data)
    mb = sum(f.stat().st_size for f in files) / 1e6
    codes: list[Path | None] = list(a.code) or [None]
    runs: dict[str, list[dict[str, float]]] = {str(c or "this tree"): [] for c in codes}
    print(f"{len(files)} sessions, {mb:.2f} MB; {a.rounds} rounds over {len(codes)} code tree(s)", file=sys.stderr)
    for n in range(a.rounds):
        for code in codes:
            stick = yardstick(files)
            run = one_import(code, files) | {"yardstick": stick}
            runs[str(code or "this tree")].append(run)
            print(f"round {n + 1} {code or 'this tree'}: {run}", file=sys.stderr)
    out: dict[str, Any] = {"sessions": len(files), "mb": round(mb, 2), "codes": {}}
    for name, rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs) for k in ("wall", "inside", "cpu", "yardstick")}
        out["codes"][name] = {
            "mb_per_s_wall": round(mb / med["wall"], 2),
            "mb_per_s_import": round(mb / med["inside"], 2),
            "cpu_s": round(med["cpu"], 1),
            "import_per_yardstick": round(statistics.median(r["wall"] / r["yardstick"] for r in rs), 2),
            "episodes": rs[0]["episodes"],
        }
        c = out["codes"][name]
        print(
            f"{name}: {c['mb_per_s_wall']} MB/s wall ({c['mb_per_s_import']} MB/s inside the import), "
            f"{c['cpu_s']} s CPU, {c['import_per_yardstick']} import seconds per yardstick second, "
            f"{c['episodes']} episodes"
        )
    if len(codes) == 2:
        first, second = runs.values()
        speedup = {
            k: round(statistics.median(x[k] / y[k] for x, y in zip(first, second)), 2)
            for k in ("wall", "inside", "cpu")
        }
        out["speedup"] = speedup
        print(
            f"second over first, median per round: wall {speedup['wall']}x, inside {speedup['inside']}x, "
            f"CPU {speedup['cpu']}x"
        )
    if a.json:
        a.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
