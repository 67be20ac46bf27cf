"""Memory of the daemon capturing one large transcript, against the same daemon before it read it, in one run.

    python evals/bench_memory.py [--sizes 10 25 50] [--source FILE] [--json]

For each size, a synthetic transcript of about that many MB is built by repeating the records of a real one (the
largest fixture, `tests/data/transcripts/claude-code-viewer/fe5e1c67-...jsonl`, 0.77 MB; each copy with its own
ids, `tests/support/longsession.py`). A fresh data dir and daemon (`python -m tempera.cli daemon start`: the model
is loaded and warmed when it answers: "start") capture a small transcript first (5 copies, 10 episodes: the
embedder loads its batch sessions, a fixed cost), which gives the baseline, its VmRSS; then the Stop hook (a real
subprocess) queues the large capture and the daemon works it. Printed per size: start, baseline, peak (VmHWM) and
held (VmRSS after the job) in MB, their ratios to the baseline, and MB of peak growth over the baseline per MB of
transcript. Bounded memory means the peak ratio does not grow with the size.

For one commit instead of the work tree: `git archive REV tempera | tar -x -C DIR` and run with `PYTHONPATH=DIR`
from outside the work tree (the daemon runs as `python -m`, so it inherits it).

Here (2 shared cores), 789bec6 -> this change, peak/base at 10, 26, 52 MB: 1.05 1.20 1.44 -> 1.03 1.05 1.10;
MB of peak growth per transcript MB at 52 MB: 4.80 -> 1.03.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tempera.core import paths

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))  # after PYTHONPATH: the tempera measured may be another commit's

from tests.support.longsession import write_long_session  # noqa: E402

SOURCE = REPO / "tests" / "data" / "transcripts" / "claude-code-viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
CLI = [sys.executable, "-m", "tempera.cli"]
WARM_COPIES = 5  # 10 episodes: enough for the embedder to load its batch sessions (core/embed.py PARALLEL_FROM)


def status_mb(pid: int) -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out


def capture(transcript: Path, session: str, repo: Path, env: dict[str, str], root: Path) -> float:
    """The Stop hook for one transcript, then wait for the daemon to finish its job; returns the seconds waited."""
    doc = {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(repo),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    subprocess.run(
        [sys.executable, "-m", "tempera.hooks.entry", "stop"],
        input=json.dumps(doc).encode(),
        env=env,
        cwd=root,
        check=True,
        capture_output=True,
        timeout=60,
    )
    started = time.monotonic()
    while True:
        with sqlite3.connect(root / "data" / paths.DB_NAME, timeout=30) as conn:
            if not conn.execute("SELECT COUNT(*) FROM jobs WHERE status IN ('pending', 'leased')").fetchone()[0]:
                return time.monotonic() - started
        time.sleep(0.2)


def measure(size_mb: float, source: Path, root: Path) -> dict[str, float]:
    data, repo = root / "data", root / "repo"
    repo.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEMPERA_")}
    env.update(
        {
            "TEMPERA_DATA_DIR": str(data),
            "CLAUDE_CONFIG_DIR": str(root / "claude"),
            "TEMPERA_DAEMON__WATCH_TRANSCRIPTS": "false",
            "TEMPERA_DREAM__SCHEDULE": "false",
            "TEMPERA_LLM__ENABLED": "false",
        }
    )
    copies = max(1, math.ceil(size_mb * 1e6 / source.stat().st_size))
    transcript = write_long_session(source, root / "t" / "big.jsonl", copies, session_id="big", cwd=repo)
    warm = write_long_session(source, root / "t" / "warm.jsonl", WARM_COPIES, session_id="warm", cwd=repo)
    subprocess.run([*CLI, "daemon", "start"], env=env, cwd=root, check=True, capture_output=True, timeout=120)
    pid = int((data / paths.DAEMON_LOCK_NAME).read_text().strip())
    try:
        start = status_mb(pid)
        capture(warm, "warm", repo, env, root)
        base = status_mb(pid)
        seconds = capture(transcript, "big", repo, env, root)
        after = status_mb(pid)
        with sqlite3.connect(data / paths.DB_NAME) as conn:
            episodes = conn.execute("SELECT COUNT(*) FROM episodes WHERE session_id = 'big'").fetchone()[0]
            status = conn.execute("SELECT status FROM jobs ORDER BY id DESC").fetchone()[0]
    finally:
        subprocess.run([*CLI, "daemon", "stop"], env=env, cwd=root, capture_output=True, timeout=60)
    file_mb = transcript.stat().st_size / 1e6
    return {
        "file_mb": file_mb,
        "episodes": episodes,
        "job": status,
        "seconds": seconds,
        "start_mb": start["VmRSS"],
        "base_mb": base["VmRSS"],
        "peak_mb": after["VmHWM"],
        "held_mb": after["VmRSS"],
        "peak_x": after["VmHWM"] / base["VmRSS"],
        "held_x": after["VmRSS"] / base["VmRSS"],
        "growth_per_file_mb": (after["VmHWM"] - base["VmRSS"]) / file_mb,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[10, 25, 50])
    ap.add_argument("--source", type=Path, default=SOURCE)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = []
    for size in a.sizes:
        with tempfile.TemporaryDirectory(prefix="tempera-mem-") as d:
            rows.append(measure(size, a.source, Path(d)))
            print(f"  {size:g} MB done", file=sys.stderr, flush=True)
    if a.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        f"{'file MB':>8}{'episodes':>9}{'job':>6}{'s':>6}{'start MB':>9}{'base MB':>9}{'peak MB':>9}{'held MB':>9}"
        f"{'peak/base':>10}{'held/base':>10}{'MB/file MB':>11}"
    )
    for r in rows:
        print(
            f"{r['file_mb']:>8.1f}{r['episodes']:>9}{r['job']:>6}{r['seconds']:>6.0f}{r['start_mb']:>9.0f}"
            f"{r['base_mb']:>9.0f}"
            f"{r['peak_mb']:>9.0f}{r['held_mb']:>9.0f}{r['peak_x']:>10.2f}{r['held_x']:>10.2f}"
            f"{r['growth_per_file_mb']:>11.2f}"
        )


if __name__ == "__main__":
    main()
