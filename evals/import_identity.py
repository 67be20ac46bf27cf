"""Which projects an import of real sessions from other machines makes, and whether a clone here sees them.

    python evals/import_identity.py [--data DIR] [--sets entire-cli,cipher-box,...] [--clone PATH] [--json PATH]

Each session of the named sets (default: all five shared transcript sets) is laid out as Claude Code lays it out,
one folder per working directory it recorded (`projects/-Users-soph-Work-entire-devenv-cli/<id>.jsonl`), none of
which exists here. `tempera import` of that folder runs in a subprocess with a fresh data dir (the real CLI), and
the projects it made are printed: per project its sessions, episodes, the folders they ran in, and why each
session went where it did (`session_projects`). Right is one project per repository: entire-cli's 123 sessions
ran in 18 folders of one repository on five machines; the other sets are other repositories.

With `--clone PATH` (a checkout of one of them here, e.g. a fresh clone of entireio/cli), a SessionStart and a
UserPromptSubmit hook run in it through `tempera-hook` with the daemon down, then with it up, as Claude Code sends
them; printed: the project the clone is, its episodes, and the characters each hook injected.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TEMPERA_SHARED_DIR", REPO.parent / "shared"))
SETS = ("entire-cli", "cipher-box", "spotter", "claude-code-log", "claude-code-viewer")


def first_cwd(path: Path) -> str | None:
    with path.open("rb") as fh:
        for line in fh:
            if b'"cwd"' in line:
                try:
                    cwd = json.loads(line).get("cwd")
                except ValueError:
                    continue
                if isinstance(cwd, str):
                    return cwd
    return None


def lay_out(sets: list[str], data: Path, into: Path) -> dict[str, str]:
    """Copy each session into `into/<cwd with / and . as ->/`; returns session file name -> its set."""
    origin = {}
    for name in sets:
        for f in sorted((data / name).rglob("*.jsonl")):
            if f.name.startswith("agent-") or f.parent.name == "subagents":
                continue
            cwd = first_cwd(f) or "/unknown"
            folder = into / cwd.replace("/", "-").replace(".", "-")
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, folder / f.name)
            subagents = f.with_suffix("") / "subagents"
            if subagents.is_dir():
                shutil.copytree(subagents, folder / f.stem / "subagents")
            origin[f.stem] = name
    return origin


def cli() -> list[str]:
    exe = Path(sys.executable).with_name("tempera")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tempera.cli"]


def hook(event: str, cwd: Path, env: dict[str, str], prompt: str = "") -> int:
    """Characters of additionalContext one hook injected."""
    payload = {
        "session_id": "identity-eval",
        "transcript_path": str(cwd / "none.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": event,
    }
    if event == "SessionStart":
        payload["source"] = "startup"
    else:
        payload["prompt"] = prompt
    exe = Path(sys.executable).with_name("tempera-hook")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "tempera.hooks.entry"]
    arg = "session-start" if event == "SessionStart" else "user-prompt-submit"
    done = subprocess.run([*cmd, arg], input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=cwd)
    try:
        out = json.loads(done.stdout or "{}")
    except ValueError:
        return 0
    return len(out.get("hookSpecificOutput", {}).get("additionalContext", ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=SHARED / "data" / "transcripts")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--clone", type=Path, help="a checkout here of one of the repositories, for the hooks")
    ap.add_argument("--prompt", default="how does the strategy decide when to create a checkpoint?")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", type=Path, help="work in this new folder and keep it (data dir, laid-out sessions)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tempera-identity-") as tmp:
        root = args.keep or Path(tmp)
        origin = lay_out(args.sets.split(","), args.data, root / "claude" / "projects")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TEMPERA_")}
        env |= {"TEMPERA_DATA_DIR": str(root / "data"), "CLAUDE_CONFIG_DIR": str(root / "claude"), "HOME": str(root)}
        done = subprocess.run(
            [*cli(), "import", str(root / "claude" / "projects"), "--json"], env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            sys.exit(f"import failed: {done.stderr[-2000:]}")
        db = sqlite3.connect(root / "data" / "tempera.db")
        rows = db.execute(
            "SELECT s.project_id, p.name, s.session_id, s.root, s.kind, s.reason FROM session_projects s "
            "JOIN projects p ON p.id = s.project_id"
        ).fetchall()
        episodes = dict(db.execute("SELECT project_id, COUNT(*) FROM episodes GROUP BY project_id").fetchall())
        projects: dict[str, dict[str, Any]] = defaultdict(
            lambda: {"sessions": 0, "sets": Counter(), "folders": Counter(), "kinds": Counter()}
        )
        for pid, name, sid, folder, kind, _ in rows:
            p = projects[pid]
            p |= {"id": pid, "name": name, "episodes": episodes.get(pid, 0)}
            p["sessions"] += 1
            p["sets"][origin.get(sid, "?")] += 1
            p["folders"][folder] += 1
            p["kinds"][kind] += 1
        out: dict[str, Any] = {"projects": sorted(projects.values(), key=lambda p: -p["sessions"])}
        by_set = Counter(s for p in projects.values() for s in p["sets"])
        out["projects_per_set"] = dict(by_set)
        for p in out["projects"]:
            print(
                f"{p['name']} ({p['id'][:8]}): {p['sessions']} sessions, {p['episodes']} episodes, "
                f"sets {dict(p['sets'])}, {len(p['folders'])} folders, why {dict(p['kinds'])}"
            )
        print("projects per set:", dict(by_set))
        if args.clone:
            out["clone"] = {}
            for daemon in ("down", "up"):
                if daemon == "up":
                    subprocess.run([*cli(), "daemon", "start"], env=env, capture_output=True, check=True)
                start = hook("SessionStart", args.clone, env)
                prompt = hook("UserPromptSubmit", args.clone, env, args.prompt)
                out["clone"][daemon] = {"session_start_chars": start, "prompt_chars": prompt}
            subprocess.run([*cli(), "daemon", "stop"], env=env, capture_output=True)
            listing = json.loads(
                subprocess.run(
                    [*cli(), "projects", "--json"], env=env, capture_output=True, text=True, cwd=args.clone
                ).stdout
                or "[]"
            )
            here = [p for p in listing if p.get("path") and Path(p["path"]).resolve() == args.clone.resolve()]
            out["clone"]["project"] = here[0] if here else None
            print("clone:", json.dumps(out["clone"]))
        if args.json:
            args.json.write_text(json.dumps(out, indent=1, default=list))


if __name__ == "__main__":
    main()
