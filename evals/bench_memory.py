"""Memory of `tempera import` and of the warm daemon, against a bare process that embeds one text, in one run.

    python evals/bench_memory.py import [--project entire-cli] [--sessions N] [--prompts 40] [--json]
    python evals/bench_memory.py capture [--sizes 10 25 50] [--source FILE] [--json]

`import` (issue #39's target: both <= 300 MB): in a fresh sandbox (`evals/real_sessions.py` `sandbox`: data dir,
Claude config dir, a one-commit git repository), `tempera init` runs first (the install's step that loads the
model once and prepares its cache: `core/offline_model.py` `folded`), then `tempera import FILES --project <repo>
--json` of the shared entire-cli sessions (all 123, or the first N by `first_ts` for a quick iteration) runs as a
subprocess; the peak RSS of each is the kernel's (`os.wait4`'s ru_maxrss of that one child). Then the warm daemon
starts over the imported memory and the installed UserPromptSubmit command (relay.py, the JSON Claude Code sends)
runs for real prompts of those sessions, one new session each; the daemon's VmRSS before and after them and its
VmHWM are read from /proc. The baseline, measured after `init` in the same sandbox: a bare `python` that loads the
embedder and embeds one text; every figure is printed as a ratio of it too. Printed also: import MB/s and the
prompts' median and p95 ms.
Here (2 shared cores, busy), 2760b4c -> 8c61422, two runs of each, alternating: import peak 502, 500 -> 266, 259
MB; daemon after 40 prompts 498, 497 -> 244, 244 MB (VmHWM 512, 511 -> 244, 244); the baseline 309 -> 165 MB;
import 3.3 MB/s and prompts 37 ms median, 66-68 ms p95 in both. `--project cipher-box` (33 sessions, 56 MB), one run
each: import peak 448 -> 255 MB, daemon 493 -> 242 MB.

`capture`: for each size, a synthetic transcript of about that many MB is built by repeating the records of a real
one (the largest fixture, `tests/data/transcripts/claude-code-viewer/fe5e1c67-...jsonl`, 0.77 MB; each copy with
its own ids, `tests/support/longsession.py`). A fresh data dir and daemon (`python -m tempera.cli daemon start`:
the model is loaded and warmed when it answers: "start") capture a small transcript first (5 copies, 10 episodes:
the embedder runs batches, a fixed cost), which gives the baseline, its VmRSS; then the Stop hook (a
real subprocess) queues the large capture and the daemon works it. Printed per size: start, baseline, peak (VmHWM)
and held (VmRSS after the job) in MB, their ratios to the baseline, and MB of peak growth over the baseline per MB
of transcript. Bounded memory means the peak ratio does not grow with the size.
Here (2 shared cores), 789bec6 -> 79a7a7d, peak/base at 10, 26, 52 MB: 1.05 1.20 1.44 -> 1.03 1.05 1.10;
MB of peak growth per transcript MB at 52 MB: 4.80 -> 1.03. 2760b4c -> 8c61422 at 26 MB: base 571 -> 248 MB,
peak 614 -> 290, held 598 -> 273 (one model session in the daemon instead of three); at 63 MB (8c61422): base 248,
peak 353, held 311: capture reads a transcript whole, 1.7 MB of peak per transcript MB.

For one commit instead of the work tree: `git archive REV tempera | tar -x -C DIR` and run with `PYTHONPATH=DIR`
from outside the work tree (the CLI and the daemon run as `python -m`, so they inherit it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tempera.core import paths

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))  # after PYTHONPATH: the tempera measured may be another commit's

from real_sessions import SHARED, Daemon, Sandbox, load_sessions, prompts, sandbox  # noqa: E402  (evals/ is not a package)
from tests.support.longsession import write_long_session  # noqa: E402

SOURCE = REPO / "tests" / "data" / "transcripts" / "claude-code-viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
CLI = [sys.executable, "-m", "tempera.cli"]
WARM_COPIES = 5  # 10 episodes: the embedder has run batches, its fixed cost paid


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


def child_peak_mb(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Run a child to its end: its peak RSS in MB (the kernel's ru_maxrss of that one process, from `os.wait4`),
    its wall seconds and its stdout."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        child = subprocess.Popen(args, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(child.pid, 0)  # reaped here, not by Popen, to read this child's own rusage
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        if child.returncode:
            raise SystemExit(f"{' '.join(args[1:4])} failed: {err.read().strip()}")
        return usage.ru_maxrss / 1024, wall, out.read()


BASELINE = (
    "from tempera.core.config import load_config\n"
    "from tempera.core.embed import get_embedder\n"
    "get_embedder(load_config()).embed_one('the baseline: a process that embeds one text')\n"
)


def measure_import(box: Sandbox, files: list[Path], n_prompts: int) -> dict[str, float]:
    """The baseline, the import's peak and speed, and the daemon's memory and latency over real prompts."""
    mb = sum(f.stat().st_size for f in files) / 1e6
    init, _, _ = child_peak_mb([sys.executable, "-m", "tempera.cli", "init", "--json"], box.env)
    base, _, _ = child_peak_mb([sys.executable, "-c", BASELINE], box.env)
    cmd = [sys.executable, "-m", "tempera.cli", "import", *map(str, files), "--project", str(box.repo), "--json"]
    peak, wall, out = child_peak_mb(cmd, box.env)
    report = json.loads(out)
    texts = [t for f in files for t in prompts(f)]
    step = max(1, len(texts) // n_prompts)
    asked = texts[::step][:n_prompts]
    with Daemon(box) as daemon:
        pid = int((box.data / paths.DAEMON_LOCK_NAME).read_text().strip())
        warm = status_mb(pid)
        ms = [daemon.prompt(t)[1] for t in asked]
        after = status_mb(pid)
    return {
        "sessions": len(files),
        "mb": mb,
        "episodes": report["episodes_added"],
        "init_mb": init,
        "baseline_mb": base,
        "import_peak_mb": peak,
        "import_s": wall,
        "import_mb_per_s": mb / wall,
        "daemon_warm_mb": warm["VmRSS"],
        "prompts": len(asked),
        "daemon_after_mb": after["VmRSS"],
        "daemon_peak_mb": after["VmHWM"],
        "prompt_median_ms": statistics.median(ms),
        "prompt_p95_ms": sorted(ms)[round(0.95 * (len(ms) - 1))],
    }


def run_import(a: argparse.Namespace) -> None:
    rows = load_sessions(SHARED / "data" / "transcripts" / a.project / "sessions.tsv")
    base = SHARED / "data" / "transcripts" / a.project / "sessions"
    files = [base / f"{r['session_id']}.jsonl" for r in rows[: a.sessions]]
    with sandbox("bench-memory") as box:
        r = measure_import(box, files, a.prompts)
    if a.json:
        print(json.dumps(r, indent=2))
        return
    b = r["baseline_mb"]
    print(f"{r['sessions']} {a.project} sessions, {r['mb']:.1f} MB, {r['episodes']} episodes")
    print(f"{'':<44}{'MB':>8}{'x base':>8}")
    for label, key in (
        ("baseline: a process that embeds one text", "baseline_mb"),
        ("tempera init (the first load), peak RSS", "init_mb"),
        ("tempera import, peak RSS", "import_peak_mb"),
        ("daemon, warm, before the prompts (VmRSS)", "daemon_warm_mb"),
        (f"daemon after {r['prompts']} prompts (VmRSS)", "daemon_after_mb"),
        ("daemon, peak (VmHWM)", "daemon_peak_mb"),
    ):
        print(f"{label:<44}{r[key]:>8.0f}{r[key] / b:>8.2f}")
    print(f"import: {r['import_s']:.0f} s, {r['import_mb_per_s']:.2f} MB/s")
    print(f"prompt (installed command, warm): median {r['prompt_median_ms']:.0f} ms, p95 {r['prompt_p95_ms']:.0f} ms")


def run_capture(a: argparse.Namespace) -> None:
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="bench", required=True)
    imp = sub.add_parser("import", help="tempera import of the entire-cli sessions, then the warm daemon")
    imp.add_argument("--project", default="entire-cli", help="the shared data set (entire-cli, cipher-box)")
    imp.add_argument("--sessions", type=int, default=None, help="the first N sessions by first_ts (default: all)")
    imp.add_argument("--prompts", type=int, default=40)
    imp.add_argument("--json", action="store_true")
    cap = sub.add_parser("capture", help="the daemon capturing one synthetic transcript of each size")
    cap.add_argument("--sizes", type=float, nargs="+", default=[10, 25, 50])
    cap.add_argument("--source", type=Path, default=SOURCE)
    cap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    (run_import if a.bench == "import" else run_capture)(a)


if __name__ == "__main__":
    main()
