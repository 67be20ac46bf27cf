"""Soak (issues #17, #40): real sessions through Stop jobs while the daemon is killed (SIGKILL) at random moments,
or through `tempera import` / `tempera capture --session` while the CLI is; the database afterwards must hold what
a run without kills holds.

    python evals/soak_kill.py [--target daemon|import|capture] [--sessions 30] [--kills 15] [--seed 17] [--data DIR]

Not a test: it reads the shared data set (`$TEMPERA_SHARED_DIR/data/transcripts/entire-cli`, default
`../shared/...`, or `--data`), the earliest sessions by `first_ts`, in place, and writes only to temporary
directories. Each run has its own data dir.
- daemon: the Stop hook (the `tempera-hook` entry, a real subprocess fed Claude Code's JSON) is run once per
  session, in the same order in both runs; the daemon works the queue. Reference: the queue drains with no kill.
  Kills: `--kills` times the daemon is started and killed with SIGKILL once the database holds a random number
  of episodes (increasing, below the reference's count) plus a random 0-0.5 s, so that the kills fall at every
  phase of the jobs (mid-chunk, between chunks, in the steps after capture); then it is started once more and the
  queue drains.
- import: one `tempera import` of all the sessions; capture: one `tempera capture --session` per session, in
  order. Kills: each command is run, and killed with SIGKILL at the next random episode count (as for the daemon)
  plus 0-0.5 s, then run again, until it ends by itself; then the next command.
The two databases are compared by content, not ids (`tests/support/dbcontent.py`): episodes, links, evidence,
calibration, corrections, should-have-asked, ask-backs, facts. Exit 1 on any difference or dead job. ~3-5 minutes
here for 30 sessions. For one commit instead of the work tree: `git archive REV tempera | tar -x -C DIR` and run
with `PYTHONPATH=DIR` from outside the work tree (the hook and the daemon run as `python -m`, so they inherit it).

Here (seed 17, 30 sessions, 177 episodes, 15 kills all while a job was leased), rows missing after kills on
789bec6: episodes 19 (of 177 differ), links 28 (244 -> 220), evidence 67, calibration 7, should-have-asked 1,
facts 5, episode facts 1; on this change: 0 in every table, 0 dead jobs.
Killing the CLI (issue #40, seed 17 unless said): `--target import`, entire-cli 20 sessions (seed 40), 128
episodes, 17 kills (the import ended before the last 3 targets); cipher-box 12 sessions, 102 episodes, 12 kills.
`--target capture`, entire-cli 12 sessions, 76 episodes, 12 kills; cipher-box 12 sessions, 102 episodes, 12 kills.
0 rows missing or extra in every table, 0 dead jobs, in each (20-90 s a run).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from tempera.core import paths, spool

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.dbcontent import compare, differences, learned  # noqa: E402

SHARED = Path(os.environ.get("TEMPERA_SHARED_DIR", REPO.parent / "shared"))
CLI = [sys.executable, "-m", "tempera.cli"]
HOOK = [sys.executable, "-m", "tempera.hooks.entry", "stop"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def earliest_sessions(data: Path, n: int) -> list[Path]:
    csv.field_size_limit(1 << 30)
    with (data / "sessions.tsv").open(newline="") as fh:
        rows = sorted(csv.DictReader(fh, delimiter="\t"), key=lambda r: r["first_ts"])
    return [data / "sessions" / f"{r['session_id']}.jsonl" for r in rows[:n]]


class Run:
    """One data dir, its environment, and the daemon that works it."""

    def __init__(self, root: Path, label: str):
        self.data = root / label / "data"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TEMPERA_")}
        self.env.update(
            {
                "TEMPERA_DATA_DIR": str(self.data),
                "CLAUDE_CONFIG_DIR": str(root / label / "claude"),
                "TEMPERA_DAEMON__WATCH_TRANSCRIPTS": "false",
                "TEMPERA_DREAM__SCHEDULE": "false",
                "TEMPERA_LLM__ENABLED": "false",
            }
        )

    def query(self, sql: str) -> list[tuple]:
        with sqlite3.connect(self.data / paths.DB_NAME, timeout=30) as conn:
            return conn.execute(sql).fetchall()

    def open_jobs(self) -> int:
        """Jobs waiting or worked, and captures still in the spool (the daemon queues them)."""
        queued = self.query("SELECT COUNT(*) FROM jobs WHERE status IN ('pending', 'leased')")[0][0]
        return int(queued) + len(spool.pending(self.data))

    def stop_hooks(self, sessions: list[Path]) -> None:
        """One Stop hook per session, in order; the hook's own start of a daemon is held off (its spawn guard,
        touched before each call), so each capture waits in the spool (half a second of waiting for a daemon per
        hook) for the daemon this run starts, which queues them."""
        self.data.mkdir(mode=0o700, parents=True, exist_ok=True)
        for path in sessions:
            (self.data / paths.DAEMON_SPAWN_NAME).write_text("held by the soak")
            doc = {
                "session_id": path.stem,
                "transcript_path": str(path),
                "cwd": str(path.parent),
                "hook_event_name": "Stop",
                "stop_hook_active": False,
            }
            env = {**self.env, "TEMPERA_INJECT__DAEMON_START_SECONDS": "0.5"}
            r = subprocess.run(HOOK, input=json.dumps(doc).encode(), env=env, capture_output=True, timeout=60)
            assert r.returncode == 0 and r.stdout == b"", r.stderr

    def start(self) -> None:
        subprocess.run([*CLI, "daemon", "start"], env=self.env, check=True, capture_output=True, timeout=120)

    def pid(self) -> int | None:
        try:
            return int((self.data / paths.DAEMON_LOCK_NAME).read_text().strip() or 0) or None
        except (OSError, ValueError):
            return None

    def kill(self) -> None:
        pid = self.pid()
        if pid is None:
            return
        try:
            os.kill(pid, signal.SIGKILL)
            while True:
                os.kill(pid, 0)
                time.sleep(0.02)
        except ProcessLookupError:
            pass

    def episodes(self) -> int:
        try:
            return self.query("SELECT COUNT(*) FROM episodes")[0][0]
        except sqlite3.OperationalError:  # no database or no schema yet
            return 0

    def cli(self, command: list[str]) -> subprocess.Popen[bytes]:
        self.data.mkdir(mode=0o700, parents=True, exist_ok=True)
        return subprocess.Popen(
            command, env=self.env, cwd=self.data.parent.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )

    def drain(self, timeout: float = 900) -> None:
        deadline = time.monotonic() + timeout
        while self.open_jobs():
            if time.monotonic() > deadline:
                raise SystemExit(f"queue of {self.data} not drained within {timeout:.0f} s")
            time.sleep(0.2)

    def shutdown(self) -> None:
        subprocess.run([*CLI, "daemon", "stop"], env=self.env, capture_output=True, timeout=60)


def reference(run: Run, sessions: list[Path]) -> float:
    """The run without kills; returns its work time in seconds (daemon start to a drained queue)."""
    run.stop_hooks(sessions)
    started = time.monotonic()
    run.start()
    run.drain()
    run.shutdown()
    return time.monotonic() - started


def with_kills(run: Run, sessions: list[Path], kills: int, episodes: int, rng: random.Random) -> list[dict]:
    """Every Stop queued, then `kills` times: daemon up, SIGKILL once the database holds a random number of
    episodes (of the reference run's `episodes`, increasing) and a random fraction of a second has passed, so the
    kills fall at every phase of the jobs; then up once more to drain."""
    run.stop_hooks(sessions)
    moments = []
    for target in sorted(rng.sample(range(1, episodes), kills)):
        run.start()
        deadline = time.monotonic() + 120
        while run.query("SELECT COUNT(*) FROM episodes")[0][0] < target and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.5))
        leased = run.query("SELECT COUNT(*) FROM jobs WHERE status = 'leased'")[0][0]
        stored = run.query("SELECT COUNT(*) FROM episodes")[0][0]
        run.kill()
        moments.append({"leased": leased, "episodes": stored})
    run.start()
    run.drain()
    run.shutdown()
    return moments


def cli_commands(target: str, sessions: list[Path]) -> list[list[str]]:
    if target == "import":
        return [[*CLI, "import", "-q", *map(str, sessions)]]
    return [[*CLI, "capture", "--session", str(p)] for p in sessions]


def finished(p: subprocess.Popen[bytes]) -> None:
    """Wait for a CLI run that was not killed; it must succeed."""
    _, err = p.communicate(timeout=1800)
    if p.returncode != 0:
        raise SystemExit(f"{p.args[3:5]} failed ({p.returncode}): {err.decode(errors='replace')[-2000:]}")


def cli_reference(run: Run, commands: list[list[str]]) -> float:
    """The commands run one after the other with no kill; returns the wall time."""
    started = time.monotonic()
    for command in commands:
        finished(run.cli(command))
    return time.monotonic() - started


def cli_with_kills(run: Run, commands: list[list[str]], kills: int, episodes: int, rng: random.Random) -> list[dict]:
    """Each command run until it ends by itself: while kill targets (random episode counts below the reference
    run's `episodes`, increasing) remain, a run that reaches the next one is killed a random fraction of a second
    later and started again."""
    targets = sorted(rng.sample(range(1, episodes), kills))
    moments = []
    for command in commands:
        while True:
            p = run.cli(command)
            while targets and p.poll() is None and run.episodes() < targets[0]:
                time.sleep(0.01)
            if targets and p.poll() is None:
                time.sleep(rng.uniform(0, 0.5))
            if p.poll() is not None or not targets:
                finished(p)
                break
            stored = run.episodes()
            p.kill()  # SIGKILL
            p.communicate()
            targets.pop(0)
            moments.append({"episodes": stored})
    return moments


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", choices=["daemon", "import", "capture"], default="daemon", help="what is killed")
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--kills", type=int, default=15)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--data", type=Path, default=SHARED / "data" / "transcripts" / "entire-cli")
    a = ap.parse_args()
    sessions = earliest_sessions(a.data, a.sessions)
    rng = random.Random(a.seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tempera-soak-") as d:
        ref, killed = Run(Path(d), "reference"), Run(Path(d), "kills")
        try:
            log(f"reference run: {len(sessions)} sessions, {sum(p.stat().st_size for p in sessions) / 1e6:.1f} MB")
            commands = cli_commands(a.target, sessions)
            work = reference(ref, sessions) if a.target == "daemon" else cli_reference(ref, commands)
            total = ref.episodes()
            log(f"  {total} episodes, done in {work:.1f} s; kill run: {a.kills} kills of the {a.target}")
            if a.target == "daemon":
                moments = with_kills(killed, sessions, a.kills, total, rng)
            else:
                moments = cli_with_kills(killed, commands, a.kills, total, rng)
        finally:
            ref.kill()
            killed.kill()
        expected, got = learned(ref.data / paths.DB_NAME), learned(killed.data / paths.DB_NAME)
        table = compare(expected, got)
        dead = {
            r.data.parent.name: r.query("SELECT COUNT(*) FROM jobs WHERE status = 'dead'")[0][0] for r in (ref, killed)
        }
        uncalibrated = killed.query(
            "SELECT COUNT(*) FROM episodes WHERE id NOT IN (SELECT episode_id FROM calibration_events)"
        )[0][0]
    leased = f" ({sum(1 for m in moments if m['leased'])} while a job was leased)" if a.target == "daemon" else ""
    print(f"{'table':<18}{'no kills':>10}{'kills':>10}{'missing':>10}{'extra':>10}")
    for name, row in table.items():
        print(f"{name:<18}{row['expected']:>10}{row['got']:>10}{row['missing']:>10}{row['extra']:>10}")
    stored = [m["episodes"] for m in moments]
    print(f"kills of the {a.target}: {len(moments)}{leased}; episodes stored at each kill: {stored}")
    print(f"episodes without a calibration event after kills: {uncalibrated}; dead jobs: {dead}")
    print(f"wall time {time.monotonic() - started:.0f} s")
    same = all(r["missing"] == r["extra"] == 0 for r in table.values())
    if not same:
        print(json.dumps(differences(expected, got), indent=1))
    print("SAME DATABASE" if same and not any(dead.values()) else "DIFFERENT")
    return 0 if same and not any(dead.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
