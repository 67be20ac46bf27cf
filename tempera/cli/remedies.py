"""What `tempera doctor --remediate` does about each failed check. Every action is said in one line; a check with
no safe fix is left as it is, and says so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tempera.cli.common import open_memory
from tempera.core.errors import TemperaError


def remedy(check: dict[str, Any]) -> list[str]:
    """Fix one failed check; the lines say what was done (or why nothing was)."""
    name = check["check"]
    fix = REMEDIES.get(name.split(" (")[0])
    if fix is None:
        return [f"left as is: {name}: {check['detail']}"]
    try:
        return fix(name)
    except TemperaError as exc:
        return [f"could not fix {name}: {exc}"]


def _daemon_files(_: str) -> list[str]:
    from tempera.cli.daemon import remove_stale_daemon_files

    return [f"removed {path}, left by a daemon that died" for path in remove_stale_daemon_files()]


def _claude_code(name: str) -> list[str]:
    """Install again: into the scope whose entries are broken, else (not installed anywhere) for the user."""
    from tempera.installer import apply_all, plan_install

    scope = "project" if name.endswith("(project)") else "user"
    written = apply_all(plan_install(scope))  # type: ignore[arg-type]
    files = ", ".join(str(w.path) for w in written) or "nothing needed writing"
    return [
        f"installed Tempera's hooks and MCP server ({scope} scope): {files}; restart running Claude Code "
        "sessions to pick them up"
    ]


def _dead_jobs(_: str) -> list[str]:
    """Requeue each dead job once more, with a clean slate; clear one whose transcript is gone, or that a live
    job for the same transcript already covers."""
    from tempera.core import jobs

    lines = []
    with open_memory(use_model=False) as mem:
        for job in jobs.dead_jobs(mem.db.conn, limit=1_000_000):
            transcript = job["payload"].get("transcript_path")
            what = f"dead job {job['id']} ({job['kind']}{' of ' + transcript if transcript else ''})"
            if job["kind"] == "capture" and transcript and not Path(transcript).exists():
                jobs.delete(mem.db.conn, job["id"])
                lines.append(f"cleared {what}: the transcript is gone")
            elif jobs.requeue(mem.db.conn, job["id"]):
                error = (job["error"] or "").strip().splitlines()
                lines.append(
                    f"requeued {what}; the daemon runs it again (it failed with: "
                    f"{error[-1][:160] if error else 'no error recorded'})"
                )
            else:
                lines.append(f"cleared {what}: a job for the same transcript is queued already")
    return lines


def _vectors(_: str) -> list[str]:
    """Vectors of another model (or none stored for it): re-embed everything with the model now in use."""
    with open_memory() as mem:
        status = mem.store.vectors.status()
        if mem.embedder is None or status.state != "mismatch":
            return [
                f"left as is: vectors: {status.detail or status.state} (run `tempera memory index --reindex` once "
                "a model and sqlite-vec are available)"
            ]
        n = mem.store.vectors.reindex(full=True)
        return [
            f"re-embedded {n} episode(s) with {mem.embedder.spec.name} (they had vectors of "
            f"{status.stored_model or 'another model'})"
        ]


REMEDIES: dict[str, Callable[[str], list[str]]] = {
    "daemon files": _daemon_files,
    "claude code": _claude_code,
    "dead jobs": _dead_jobs,
    "vectors": _vectors,
}
