"""Learning eval: does memory get better with use? MRR of the right memory before and after the loop runs.

Replays multi-session work on one project through the same code paths the hooks and the daemon use:
- memory is filled from Claude Code transcripts (JSONL) by the transcript capture the daemon runs: the shared
  real transcripts as background, plus scenario sessions written here turn by turn;
- each prompt goes through the daemon's UserPromptSubmit answer (`tempera.inject.warm.answer`: hybrid
  retrieval, relevance floor, the session's injection log), and each SessionStart through its SessionStart answer;
- after each turn, the capture job's learning step (`learn_from_capture`: session links, temporal credit,
  implicit feedback) runs, and a correction in the user's next prompt (the transcript detector's
  `is_correction`) turns the previous turn's verdicts (`apply_correction`);
- then the periodic passes: propagation with temporal credit, verification, decay.
The hook *processes* (stdin JSON -> unix socket -> daemon) are not spawned: the eval calls the functions
behind them in-process, so it measures learning, not IPC.

Ranks are taken among the memories that existed before the replay (the replay's own new episodes are left out),
for held-out prompts that were never typed in a session. Run: `python evals/learning_eval.py [--json]`;
exit code 1 when an expected direction does not hold.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TEMPERA_SHARED_DIR", REPO.parent / "shared")) / "data" / "transcripts"
BACKGROUND = [
    "spotter/short.jsonl",
    "spotter/tool_heavy.jsonl",
    "claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
    "claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
]
STALE_DAYS = 180


class SessionLog:
    """A Claude Code transcript (JSONL) written record by record, in the format the transcript reader parses."""

    def __init__(self, path: Path, session_id: str, cwd: str, start: datetime):
        self.path, self.session_id, self.cwd, self.clock = path, session_id, cwd, start
        self.parent: str | None = None

    def _write(self, kind: str, message: dict[str, Any]) -> None:
        self.clock += timedelta(seconds=20)
        rec_id = str(uuid.uuid4())
        record = {
            "type": kind,
            "uuid": rec_id,
            "parentUuid": self.parent,
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "isSidechain": False,
            "userType": "external",
            "timestamp": self.clock.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "message": message,
        }
        self.parent = rec_id
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")

    def _assistant(self, content: dict[str, Any]) -> None:
        self._write(
            "assistant",
            {"id": "msg_" + uuid.uuid4().hex[:20], "role": "assistant", "type": "message", "content": [content]},
        )

    def prompt(self, text: str) -> None:
        self._write("user", {"role": "user", "content": text})

    def tool(self, name: str, tool_input: dict[str, Any], result: str) -> None:
        call_id = "toolu_" + uuid.uuid4().hex[:20]
        self._assistant({"type": "tool_use", "id": call_id, "name": name, "input": tool_input})
        self._write(
            "user",
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result, "is_error": False}],
            },
        )

    def say(self, text: str) -> None:
        self._assistant({"type": "text", "text": text})


@dataclass
class Turn:
    """One prompt and what the agent did: ("read", path) / ("edit", path, new_text) / ("bash", cmd, output)."""

    prompt: str
    actions: list[tuple[str, ...]]
    reply: str


def write_turn(log: SessionLog, turn: Turn) -> None:
    log.prompt(turn.prompt)
    for kind, *args in turn.actions:
        if kind == "read":
            log.tool("Read", {"file_path": f"{log.cwd}/{args[0]}"}, "     1\t# contents")
        elif kind == "edit":
            log.tool(
                "Edit",
                {"file_path": f"{log.cwd}/{args[0]}", "old_string": "#", "new_string": args[1]},
                f"The file {log.cwd}/{args[0]} has been updated.",
            )
        else:
            log.tool("Bash", {"command": args[0]}, args[1])
    log.say(turn.reply)


# -- the scenarios -------------------------------------------------------------------------------------------
FIX = Turn(
    "Sign-in sometimes ends in an endless redirect",
    [
        ("read", "auth/middleware.py"),
        ("edit", "auth/middleware.py", "return redirect(next_url if is_safe_redirect(next_url) else '/')"),
        ("bash", "pytest tests/test_auth.py", "6 passed in 0.41s"),
    ],
    "Fixed the redirect loop: the auth middleware validates next_url with is_safe_redirect() before "
    "redirecting, so an absolute next_url pointing at /login no longer bounces back.",
)
COOKIE = Turn(
    "Users get sent back to the login page after signing in",
    [
        ("edit", "shop/settings.py", "SESSION_COOKIE_SAMESITE = 'Lax'"),
        ("bash", "pytest tests/test_settings.py", "3 passed in 0.12s"),
    ],
    "Set SESSION_COOKIE_SAMESITE = 'Lax' so the session cookie is kept across the login redirect.",
)
ROUTE = Turn(
    "Move the login page under /auth/login and redirect the old URL",
    [("edit", "shop/urls.py", "path('auth/login/', LoginView.as_view())")],
    "The login page now lives at /auth/login; requests to /login redirect there.",
)
BUILDKIT_OFF = Turn(
    "docker build takes forever on the CI runner",
    [("bash", "DOCKER_BUILDKIT=0 docker build -t shop .", "Successfully built 3f2a9c1d")],
    "Disabled BuildKit with DOCKER_BUILDKIT=0; the build no longer stalls exporting the cache.",
)
PIP_CACHE = Turn(
    "Speed up the pip install step of the Docker image",
    [
        ("edit", "Dockerfile", "RUN --mount=type=cache,target=/root/.cache/pip pip install -r req.txt"),
        ("bash", "docker build -t shop .", "Successfully built 81be0c2f"),
    ],
    "Added a BuildKit cache mount for pip in the Dockerfile; rebuilds reuse downloaded wheels.",
)
ENV_URL = Turn(
    "Where is the staging database URL configured?",
    [("read", ".env.staging"), ("read", "shop/settings.py")],
    "The staging DATABASE_URL is set in .env.staging and read by shop/settings.py at startup.",
)
PG_URI = Turn(
    "What is the format of a PostgreSQL connection URL?",
    [],
    "PostgreSQL connection URLs have the form postgresql://user:password@host:5432/dbname; special "
    "characters in the password must be percent-encoded.",
)

SEEDS = [
    ("seed-fix", -30, [FIX]),
    ("seed-cookie", -29, [COOKIE]),
    ("seed-route", -28, [ROUTE]),
    ("seed-buildkit", -25, [BUILDKIT_OFF]),
    ("seed-pip", -24, [PIP_CACHE]),
    ("seed-env", -21, [ENV_URL]),
    ("seed-pg", -21, [PG_URI]),
]
FOREVER = {"seed-pg"}  # classified as Forever-scoped (what the capture LLM or the capture tool would say)


def reuse_fix(prompt: str) -> Turn:
    """A later session that follows the injected login fix, and succeeds."""
    return Turn(
        prompt,
        [
            ("read", "auth/middleware.py"),
            ("edit", "auth/middleware.py", "if not is_safe_redirect(next_url): next_url = '/'"),
            ("bash", "pytest tests/test_auth.py", "7 passed in 0.44s"),
        ],
        "Applied the is_safe_redirect() check on next_url in the auth middleware; the loop is gone.",
    )


def reuse_buildkit_off(prompt: str) -> Turn:
    """A later session that follows the injected BuildKit advice (the user corrects it in the next prompt)."""
    return Turn(
        prompt,
        [("bash", "DOCKER_BUILDKIT=0 docker build -t shop .", "Successfully built 0c11d2e4")],
        "Rebuilt with DOCKER_BUILDKIT=0 as before.",
    )


CORRECTION = Turn(
    "No, don't turn BuildKit off, that breaks our builds. Keep it on and find another way.",
    [
        ("edit", "Dockerfile", "RUN --mount=type=cache,target=/root/.cache/pip pip install -r req.txt"),
        ("bash", "docker build -t shop .", "Successfully built 5d0e7a9b"),
    ],
    "Kept BuildKit on and cached pip downloads with a cache mount in the Dockerfile instead.",
)
REPLAYS = [
    ("login-1", [reuse_fix("I log in and end up on the login page again, in a loop")]),
    ("login-2", [reuse_fix("The redirect after login keeps looping on staging")]),
    ("login-3", [reuse_fix("Logging in goes round in circles after submitting the form")]),
    ("docker-1", [reuse_buildkit_off("The docker build is really slow again"), CORRECTION]),
    ("docker-2", [reuse_buildkit_off("Image builds crawl on the runner today"), CORRECTION]),
]


@dataclass
class Target:
    name: str
    seed: str  # the seed session whose episode should be found
    queries: list[str]
    expect: str  # "rises" | "sinks" | "sinks_with_time" | "holds_with_time"
    figures: dict[str, Any] = field(default_factory=dict)


TARGETS = [
    Target(
        "helped (login fix)",
        "seed-fix",
        [
            "after logging in the browser bounces back to the login page",
            "login redirect loop",
            "signing in sends me back to sign in again",
        ],
        "rises",
    ),
    Target(
        "unhelpful (BuildKit off)",
        "seed-buildkit",
        ["how to make the docker image build faster", "docker build is slow", "speed up building the container"],
        "sinks",
    ),
    Target(
        "project-scoped (staging URL)",
        "seed-env",
        ["where is the database url set", "database url for the app", "which database does staging use"],
        "sinks_with_time",
    ),
    Target(
        "forever-scoped (URI format)",
        "seed-pg",
        ["database connection url", "configure the database connection", "postgres url"],
        "holds_with_time",
    ),
]


# -- running it ----------------------------------------------------------------------------------------------
class Replay:
    def __init__(self, mem: Any, root: Path, logs: Path):
        self.mem, self.root, self.logs = mem, root, logs
        self.episodes: dict[str, list[Any]] = {}

    def session(self, name: str, start: datetime, turns: list[Turn], *, hooks: bool) -> None:
        from tempera.core.learning.implicit import apply_correction
        from tempera.core.learning.loop import learn_from_capture
        from tempera.inject.payload import HookPayload
        from tempera.inject.warm import answer
        from tempera.transcripts import capture_transcript
        from tempera.transcripts.detect import is_correction

        sid = f"{name}-{uuid.uuid4().hex[:8]}"
        log = SessionLog(self.logs / f"{sid}.jsonl", sid, str(self.root), start)
        base = {"session_id": sid, "cwd": str(self.root)}
        if hooks:
            answer(self.mem, HookPayload(event="SessionStart", **base))
        for turn in turns:
            if hooks:
                answer(self.mem, HookPayload(event="UserPromptSubmit", prompt=turn.prompt, **base))
            write_turn(log, turn)
            result = capture_transcript(self.mem, log.path, project=str(self.root), session_id=sid, use_llm=False)
            previous = self.episodes.get(name, [])[-1:]
            for episode in result.added:
                learn_from_capture(self.mem, episode)
                self.episodes.setdefault(name, []).append(episode)
            if previous and is_correction(turn.prompt):
                apply_correction(self.mem, previous[0])


def ranks(mem: Any, project_id: str, target: Target, at: datetime) -> list[int | None]:
    """The target's 1-based rank (None: not returned) for each held-out query, by the production ranking."""
    from tempera.core.retrieve import retrieve

    out = []
    for q in target.queries:
        hits = [
            h.episode.id
            for h in retrieve(mem.store, q, project_id=project_id, cfg=mem.config.retrieval, limit=20, now=at)
        ]
        out.append(hits.index(target.figures["id"]) + 1 if target.figures["id"] in hits else None)
    return out


def mrr(rank_list: list[int | None]) -> float:
    return round(sum(1.0 / r for r in rank_list if r) / len(rank_list), 4)


def pool_copy(mem: Any, pool: set[str], path: Path) -> Any:
    """A copy of the database holding only the memories that existed before the replay (with everything the
    loop learned about them), so ranks before and after compare the same candidates, MMR included."""
    from tempera.core.db import sqlite3
    from tempera.core.memory import Memory

    target = sqlite3.connect(str(path))
    mem.db.conn.backup(target)
    target.close()
    copy = Memory(db_path=path)
    for episode_id in [r[0] for r in copy.db.query("SELECT id FROM episodes")]:
        if episode_id not in pool:
            copy.store.delete(episode_id)
    return copy


def seed(mem: Any, replay: Replay, now: datetime) -> int:
    """Background memories from the shared transcripts, then the scenario seeds; returns the background count."""
    from tempera.core.models import ValidityScope
    from tempera.transcripts import capture_transcript

    background = 0
    for rel in BACKGROUND:
        if (SHARED / rel).exists():
            result = capture_transcript(mem, SHARED / rel, project=str(replay.root), use_llm=False)
            background += len(result.added)
    for name, days, turns in SEEDS:
        replay.session(name, now + timedelta(days=days), turns, hooks=False)
    for name in FOREVER:
        ep = replay.episodes[name][0]
        ep.intent.scope = ValidityScope(kind="forever")
        mem.store.update(ep, reembed=False)
    return background


def run() -> dict[str, Any]:
    from tempera.core.learning.scope_decay import run_decay
    from tempera.core.learning.propagation import propagate
    from tempera.core.learning.verification import advance_all
    from tempera.core.memory import Memory

    now = datetime.now(timezone.utc)
    later = now + timedelta(days=STALE_DAYS)
    with tempfile.TemporaryDirectory(prefix="tempera-learning-eval-") as tmp:
        os.environ["TEMPERA_DATA_DIR"] = str(Path(tmp) / "data")
        root, logs = Path(tmp) / "shop", Path(tmp) / "logs"
        root.mkdir()
        logs.mkdir()
        with Memory() as mem:
            replay = Replay(mem, root, logs)
            background = seed(mem, replay, now)
            project_id = mem.store.projects.resolve(str(root)).id
            pool = {e.id for e in mem.store.iter_episodes()}
            for t in TARGETS:
                t.figures["id"] = replay.episodes[t.seed][0].id
                t.figures["before"] = ranks(mem, project_id, t, now)
                t.figures["utility_before"] = mem.store.get(t.figures["id"]).utility.value
            for i, (name, turns) in enumerate(REPLAYS):
                replay.session(name, now - timedelta(hours=len(REPLAYS) - i), turns, hooks=True)
            passes = {
                "propagation": propagate(mem, temporal=True).as_dict(),
                "verification_changes": len(advance_all(mem)),
                "decay_cut": len(run_decay(mem).cut),
            }
            judged = mem.db.one(
                "SELECT COUNT(*), COALESCE(SUM(used >= 1), 0) FROM injections WHERE evaluated_at IS NOT NULL"
            )
            with pool_copy(mem, pool, Path(tmp) / "pool.db") as copy:
                for t in TARGETS:
                    t.figures["after"] = ranks(copy, project_id, t, now)
                    t.figures[f"after_{STALE_DAYS}d"] = ranks(copy, project_id, t, later)
                    t.figures["utility_after"] = round(copy.store.get(t.figures["id"]).utility.value, 4)
    return {
        "background_episodes": background,
        "pool": len(pool),
        "replayed_turns": sum(len(replay.episodes.get(name, [])) for name, _ in REPLAYS),
        "injections_judged": judged[0],
        "injections_used": judged[1],
        "passes": passes,
        "targets": [report(t) for t in TARGETS],
    }


def report(t: Target) -> dict[str, Any]:
    f = t.figures
    before, after, stale = mrr(f["before"]), mrr(f["after"]), mrr(f[f"after_{STALE_DAYS}d"])
    ok = {
        "rises": after > before,
        "sinks": after < before,
        "sinks_with_time": stale < after,
        "holds_with_time": stale >= after,
    }[t.expect]
    return {
        "target": t.name,
        "expect": t.expect,
        "ok": ok,
        "mrr_before": before,
        "mrr_after": after,
        f"mrr_after_{STALE_DAYS}d": stale,
        "ranks_before": f["before"],
        "ranks_after": f["after"],
        f"ranks_after_{STALE_DAYS}d": f[f"after_{STALE_DAYS}d"],
        "utility_before": round(f["utility_before"], 4),
        "utility_after": f["utility_after"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    data = run()
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(
            f"pool: {data['pool']} memories ({data['background_episodes']} from shared transcripts); "
            f"{data['replayed_turns']} turns replayed; injections judged {data['injections_judged']}, "
            f"used {data['injections_used']}"
        )
        p = data["passes"]["propagation"]
        print(
            f"propagation: {p['sources']} sources, {p['evidence_rows']} rows, {p['stopped_by']}; "
            f"temporal rows {p['temporal_rows']}"
        )
        print(
            f"{'target':<30} {'expect':<16} {'MRR before':>10} {'after':>7} {f'+{STALE_DAYS}d':>7}  {'utility':>13}  ok"
        )
        for r in data["targets"]:
            print(
                f"{r['target']:<30} {r['expect']:<16} {r['mrr_before']:>10.3f} {r['mrr_after']:>7.3f} "
                f"{r[f'mrr_after_{STALE_DAYS}d']:>7.3f}  {r['utility_before']:.3f}->{r['utility_after']:.3f}  "
                f"{'yes' if r['ok'] else 'NO'}   ranks {r['ranks_before']} -> {r['ranks_after']} -> "
                f"{r[f'ranks_after_{STALE_DAYS}d']}"
            )
    return 0 if all(r["ok"] for r in data["targets"]) else 1


if __name__ == "__main__":
    sys.exit(main())
