"""Which project a transcript's session is stored under, decided once at its first capture and recorded with why
(`core/project_lineage.py` holds the rules for directories that are not on this machine)."""

from __future__ import annotations

import os
from collections import Counter
from typing import TYPE_CHECKING

from tempera.core import project_lineage as lineage
from tempera.core.models import Episode
from tempera.core.project import ProjectRef, is_absolute, project_for_name, project_for_path
from tempera.core.selfimprove.anchors import anchor_files
from tempera.transcripts.reader import Transcript
from tempera.transcripts.turns import Turn

if TYPE_CHECKING:
    from tempera.core.memory import Memory


def session_project(
    mem: "Memory",
    transcript: Transcript,
    turns: list[Turn],
    key: str,
    session_id: str,
    *,
    roots: list[str],
    project: str | None = None,
    dry_run: bool = False,
) -> lineage.Decision:
    """The `--project` given (a path, or a project in memory: an unknown name is refused), else the decision
    recorded at the session's first capture, else one made now from where it ran (and recorded, unless a dry run or
    the transcript names no directory yet)."""
    if not project and (known := lineage.recorded(mem.db, key, session_id)) is not None:
        return known
    if transcript.cwd and "\x00" in transcript.cwd:  # no path holds one: a broken or hostile transcript
        raise ValueError(f"the session's working directory is no path: {transcript.cwd!r}")
    root = roots[0] if roots else transcript.cwd or ""
    files = session_files(turns, root)
    if project:
        ref = mem.store.projects.resolve(project)
        decision = lineage.Decision(ref, "project", f"assigned with --project {project}", root)
    elif transcript.cwd and os.path.isdir(transcript.cwd):
        ref = project_for_path(transcript.cwd)
        decision = lineage.Decision(ref, "checkout", f"ran in {ref.path}", ref.path or root)
        if not dry_run and mem.db.one("SELECT 1 FROM projects WHERE id = ?", (ref.id,)) is None:
            lineage.adopt(mem.db, ref)
    elif transcript.cwd:
        branches = {r.git_branch for r in transcript.records if r.git_branch}
        decision = lineage.decide_missing(mem.db, root, set(files), branches, act=not dry_run)
    else:
        ref = project_for_name(transcript.path.parent.name or "transcripts")
        decision = lineage.Decision(ref, "unplaced", "no working directory recorded: named by its folder", "")
    if not dry_run and decision.kind != "unplaced":  # no directory read yet (a first Stop that early): decide later
        lineage.record(mem.db, key, session_id, decision, files, replace=bool(project))
    return decision


def session_files(turns: list[Turn], root: str) -> list[str]:
    """The files the session read and changed inside `root`, relative to it, most touched first."""
    touched = Counter(f for t in turns for f in (*t.files_modified, *t.files_read))
    ranked = [f for f, _ in touched.most_common()]
    return [f for f in anchor_files(ranked, root or None) if not is_absolute(f)]


def rekeyed(episodes: list[Episode], ref: ProjectRef) -> list[Episode]:
    """Drafts made for a project that has since joined `ref` (a merge while they waited to be stored)."""
    fields = {"project_id": ref.id, "project_name": ref.name, "project_path": ref.path}
    return [ep.model_copy(update=fields) for ep in episodes]
