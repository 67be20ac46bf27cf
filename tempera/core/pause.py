"""Paused capture, per project: a small JSON file in the data dir. Standard library only.

The hooks read this on every turn, before anything else, so it is a file and not a table: when no project is
paused the file does not exist and the check is one failed `open`. A paused project gets no injected context and
nothing captured, by the hooks and by every capture of a transcript (the daemon's jobs, `tempera import`, `tempera
capture --session`: `transcripts/capture.py` decides it once the transcript's project is known), until it is
resumed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempera.core import paths

if TYPE_CHECKING:
    from tempera.core.episodes import EpisodeStore
    from tempera.core.project import ProjectRef


def pause_path(data_dir: Path | None = None) -> Path:
    return (data_dir or paths.data_dir()) / paths.PAUSE_NAME


def paused_projects(data_dir: Path | None = None) -> dict[str, dict[str, Any]]:
    """Paused project id -> {name, path, since}; {} when none is paused or the file is unreadable."""
    try:
        with open(pause_path(data_dir), encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return {}
    projects = doc.get("projects") if isinstance(doc, dict) else None
    return {k: v for k, v in projects.items() if isinstance(v, dict)} if isinstance(projects, dict) else {}


def paused_for_cwd(cwd: str, data_dir: Path | None = None) -> bool:
    """Whether the project of a working directory is paused; the project is only resolved when some project is."""
    paused = paused_projects(data_dir)
    if not paused:
        return False
    from tempera.core.project import project_for_path

    return project_for_path(cwd or os.getcwd()).id in paused


def _write(projects: dict[str, dict[str, Any]], data_dir: Path | None) -> None:
    """Replace the file atomically (owner-only); remove it when nothing is paused, so the hooks' check stays cheap."""
    target = pause_path(data_dir)
    if not projects:
        target.unlink(missing_ok=True)
        return
    from tempera.core.atomic import write_atomic  # not at the top either: only writers need it

    paths.ensure_data_dir(target.parent)
    write_atomic(target, json.dumps({"projects": projects}, indent=2, sort_keys=True).encode("utf-8"), 0o600)


def pause(project_id: str, name: str, path: str | None, data_dir: Path | None = None) -> dict[str, Any]:
    """Pause a project (idempotent: an earlier pause keeps its `since`); returns its record."""
    from datetime import datetime, timezone  # not at the top: the hooks import this module and only read

    projects = paused_projects(data_dir)
    record = projects.get(project_id) or {"name": name, "path": path, "since": datetime.now(timezone.utc).isoformat()}
    projects[project_id] = record
    _write(projects, data_dir)
    return record


def pause_project(store: "EpisodeStore", spec: str | None) -> tuple["ProjectRef", dict[str, Any]]:
    """Pause the project a person named (an existing directory, or the name or id of a project in memory; None: the
    current directory's); what the CLI and the browser call. A name no project has is refused (NotFound), not
    recorded: a privacy control that "succeeds" on a typo leaves the real project captured. Resuming also moves
    capture cursors, so it lives with them (`transcripts/resume.py`)."""
    ref = store.projects.resolve(spec)
    return ref, pause(ref.id, ref.name, ref.path, store.db.path.parent)


def paused_by_spec(spec: str, data_dir: Path | None = None) -> "ProjectRef | None":
    """The paused project a name or id prefix names, from the pause file alone (a directory paused before anything
    of it was captured is no project in memory)."""
    from tempera.core.project import ProjectRef

    found = [
        ProjectRef(pid, r.get("name") or pid, r.get("path"))
        for pid, r in paused_projects(data_dir).items()
        if spec in (r.get("name"), r.get("path")) or len(spec) >= 6 and pid.startswith(spec.lower())
    ]
    return found[0] if len(found) == 1 else None


def resume(project_id: str, data_dir: Path | None = None) -> dict[str, Any] | None:
    """Un-pause a project; returns the record it had (with `since`), or None when it was not paused."""
    projects = paused_projects(data_dir)
    record = projects.pop(project_id, None)
    if record is not None:
        _write(projects, data_dir)
    return record
