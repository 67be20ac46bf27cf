"""Which project a session belongs to when the directory it ran in is not on this machine, and how a checkout that
is here takes in the memory of sessions that ran in copies of it elsewhere.

`project.py` identifies a checkout it can look at (its root commit). A transcript imported from another machine, or
from a worktree or checkout deleted since, names a directory that is not here, and used to become a project of its
own per directory: one repository worked on from 18 folders was 18 projects, none seen by a hook in a clone. What
such a transcript still carries decides instead, strongest first:
- a worktree layout (`<main>/.claude/worktrees/<name>`, `<main>/.worktrees/<name>`): the main checkout's;
- a `git worktree` named after the branch it was on (`<base>/<branch>`): the one known checkout in `<base>`;
- a folder whose sessions were decided before: theirs;
- the files it touched: a known project holding enough of them (`MATCH`), by the same name or by many files.
Else it is a project of its own, named by its folder. A folder decided that way is looked at again as its sessions
add files, and merged into the project its files show (`join_orphan`). The decision is made once per session, at
its first capture, and recorded with why (table `session_projects`, re-keyed by every merge like any table with a
`project_id`); import prints it.

A checkout seen here for the first time (`adopt`) takes in the projects whose directory is not on this machine and
whose files it holds (the same name and most of their files, or many files under any name): a fresh clone shows,
from its first prompt, what was imported from the copies it was cloned from.
"""

from __future__ import annotations

import json
import logging
import ntpath
import os
import posixpath
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from tempera.core.db import Connection, Database, run_script
from tempera.core.models import iso_utc
from tempera.core.project import (
    ProjectRef,
    caseless,
    directory_project,
    folder_name,
    is_absolute,
    spellings,
    windows_shaped,
)
from tempera.core.projects import ProjectRegistry

log = logging.getLogger("tempera")

_WORKTREE = re.compile(r"^(?P<main>.+?)[/\\](?:\.claude[/\\]worktrees|\.worktrees)[/\\][^/\\].*$")  # or Windows
FILES_KEPT = 200  # a session's files recorded as evidence: the most a match ever needs
FILES_ASKED = 64  # a project's most touched files a match compares


@dataclass(frozen=True)
class Rule:
    """How much of a session's (or project's) files a candidate must hold: `least` files and `share` of them."""

    least: int
    share: float


# Fitted on the shared entire-cli sessions (18 folders of one repository, 123 sessions: 121 join), checked against
# cipher-box, spotter, claude-code-log and claude-code-viewer imported into the same store (none joins another).
SAME_NAME = Rule(3, 0.5)
ANY_NAME = Rule(8, 0.8)


GENERIC_STEMS = frozenset(
    "index main app __init__ __main__ mod lib setup config settings utils util types test tests readme".split()
)


def telling(files: Iterable[str]) -> list[str]:
    """The files that can tell one repository from another: inside a folder, and not named as every project of a
    kind names one (`README.md`, `package.json` and `src/index.ts` are in most; `cmd/tool/settings/settings.go`,
    two folders down, is not)."""
    return [f for f in files if not is_absolute(f) and _tells(f.split("/"))]


def _tells(parts: list[str]) -> bool:
    return len(parts) > 2 or len(parts) == 2 and posixpath.splitext(parts[1])[0].lower() not in GENERIC_STEMS


@dataclass(frozen=True)
class Decision:
    """A session's project and why: `kind` is project | checkout | worktree | branch-worktree | folder | files |
    new | unplaced (no directory recorded yet: not kept); `root` is the directory it ran in (its main checkout for a
    worktree), as the transcript recorded it."""

    ref: ProjectRef
    kind: str
    reason: str
    root: str


def m073_session_projects(conn: Connection) -> None:
    run_script(
        conn,
        """
    CREATE TABLE session_projects (
        transcript_path TEXT NOT NULL,
        session_id TEXT NOT NULL,
        project_id TEXT NOT NULL,
        root TEXT NOT NULL,
        kind TEXT NOT NULL,
        reason TEXT NOT NULL,
        files TEXT NOT NULL DEFAULT '[]',
        decided_at TEXT NOT NULL,
        PRIMARY KEY (transcript_path, session_id)
    );
    CREATE INDEX session_projects_root ON session_projects(root);
    CREATE INDEX session_projects_project ON session_projects(project_id);
    """,
    )


def recorded(db: Database, transcript_path: str, session_id: str) -> Decision | None:
    """The decision made at the session's first capture, with the project as it is now (merges re-key it)."""
    row = db.one(
        "SELECT s.project_id, p.name, p.path, s.kind, s.reason, s.root FROM session_projects s "
        "JOIN projects p ON p.id = s.project_id WHERE s.transcript_path = ? AND s.session_id = ?",
        (transcript_path, session_id),
    )
    return None if row is None else Decision(ProjectRef(*row[:3]), *row[3:])


def record(
    db: Database, transcript_path: str, session_id: str, decision: Decision, files: Iterable[str], *, replace: bool
) -> None:
    """Keep the decision (the project is recorded too, so that a merge finds it): the first one made, unless
    `replace` (an explicit `--project`)."""
    kept = list(dict.fromkeys(files))[:FILES_KEPT]
    with db.transaction():
        ProjectRegistry(db).ensure(decision.ref)
        db.execute(
            "INSERT INTO session_projects(transcript_path, session_id, project_id, root, kind, reason, files, "
            "decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO "
            + (
                "UPDATE SET project_id = excluded.project_id, kind = excluded.kind, reason = excluded.reason"
                if replace
                else "NOTHING"
            ),
            (
                transcript_path,
                session_id,
                decision.ref.id,
                decision.root,
                decision.kind,
                decision.reason,
                json.dumps(kept),
                iso_utc(),
            ),
        )


def main_of(root: str, branches: Iterable[str]) -> tuple[str, str | None]:
    """The main checkout of a worktree directory by its layout, and the layout's kind; (root, None) for others."""
    if m := _WORKTREE.match(root):
        return m["main"], "worktree"
    spelled = root.replace("\\", "/") if windows_shaped(root) else root
    for branch in branches:
        if "/" in branch and spelled.endswith("/" + branch):
            return root[: -len(branch) - 1], "branch-worktree"
    return root, None


def decide_missing(db: Database, root: str, files: set[str], branches: Iterable[str], *, act: bool = True) -> Decision:
    """The project of a session that ran in `root`, a directory not on this machine (see the module doc); `act`
    False (a dry run) decides without merging a folder's project into the one its files show."""
    main, layout = main_of(root, branches)
    if layout == "branch-worktree":
        beside = _projects_of_roots_in(db, main)
        if len(beside) == 1:
            ref, checkout = beside[0]
            return Decision(ref, layout, f"ran in {root}, a git worktree of its branch beside {checkout}", root)
        main, layout = root, None
    earlier = _project_of_root(db, main)
    name = folder_name(main)
    if earlier is not None:
        joined = join_orphan(db, earlier, files, name, act=act)
        if joined is not None:
            return Decision(joined[0], "files", f"ran in {main}; {joined[1]}", main)
        kind = "worktree" if layout else "folder"
        why = f"ran in {root}, a worktree of {main}" if layout else f"ran in {main}, as earlier sessions did"
        return Decision(earlier, kind, why, main)
    found = match(db, files, name)
    if found is not None:
        return Decision(found[0], "files", f"ran in {root} (not on this machine); {found[1]}", main)
    ref = directory_project(main)
    why = f"ran in {root}, not on this machine; no project here holds its files"
    return Decision(ref, "worktree" if layout else "new", why, main)


def match(db: Database, files: set[str], name: str, exclude: str | None = None) -> tuple[ProjectRef, str] | None:
    """The known project holding the most of `files` by `SAME_NAME` (its name is `name`) or `ANY_NAME`, and why."""
    files = set(telling(files))
    if not files:
        return None
    best: tuple[int, ProjectRef, str] | None = None
    for ref in _projects(db):
        if ref.id == exclude:
            continue
        held = files & _files_of(db, ref)
        if ref.path and os.path.isdir(ref.path):  # a checkout here holds the files its tree has
            held |= {f for f in list(files - held)[:FILES_ASKED] if os.path.exists(os.path.join(ref.path, f))}
        rule = SAME_NAME if ref.name.lower() == name.lower() else ANY_NAME
        if len(held) >= rule.least and len(held) >= rule.share * len(files) and (best is None or len(held) > best[0]):
            same = "same name, " if rule is SAME_NAME else ""
            best = (len(held), ref, f"{same}{len(held)} of the {len(files)} files it touched are {ref.name}'s")
    return None if best is None else (best[1], best[2])


def join_orphan(
    db: Database, orphan: ProjectRef, files: set[str], name: str, *, act: bool = True
) -> tuple[ProjectRef, str] | None:
    """With one more session's files, whether the project of a folder not on this machine now shows itself to be
    another project: then it is merged into it (and its sessions' reasons say so)."""
    if orphan.path and os.path.isdir(orphan.path):
        return None
    found = match(db, files | _files_of(db, orphan, FILES_ASKED), name, exclude=orphan.id)
    if found is None:
        return None
    if act:
        _merge(db, orphan, *found)
    return found


def adopt(db: Database, ref: ProjectRef) -> list[ProjectRef]:
    """A checkout on this machine seen for the first time takes in each project whose directory is not here and
    whose files its tree holds (`SAME_NAME` with the same name, else `ANY_NAME`); returns those taken in."""
    if not ref.path or not os.path.isdir(ref.path):
        return []
    taken = []
    for orphan in _projects(db):
        if orphan.id == ref.id or orphan.path and os.path.isdir(orphan.path):
            continue
        files = _files_of(db, orphan, FILES_ASKED)
        held = {f for f in files if os.path.exists(os.path.join(ref.path, f))}
        rule = SAME_NAME if orphan.name.lower() == ref.name.lower() else ANY_NAME
        if files and len(held) >= rule.least and len(held) >= rule.share * len(files):
            why = f"{len(held)} of its {len(files)} most touched files are in {ref.path}"
            _merge(db, orphan, ref, why)
            taken.append(orphan)
    return taken


def _merge(db: Database, source: ProjectRef, target: ProjectRef, why: str) -> None:
    from tempera.core.project_merge import merge_projects  # imports this module's table through the merge

    ProjectRegistry(db).ensure(target)
    db.execute(
        "UPDATE session_projects SET reason = reason || ? WHERE project_id = ?",
        (f"; then joined {target.name} ({target.id[:8]}): {why}", source.id),
    )
    merge_projects(db, source.id, target.id)
    log.info("project %s (%s, %s) joined %s (%s): %s", source.name, source.id, source.path, target.name, target.id, why)


def _projects(db: Database) -> list[ProjectRef]:
    return [ProjectRef(*r) for r in db.query("SELECT id, name, path FROM projects ORDER BY created_at")]


def _files_of(db: Database, ref: ProjectRef, most: int | None = None) -> set[str]:
    """The `telling` files a project's sessions touched (recorded with their decisions) and its episodes changed,
    relative to the checkout they were touched in; only its `most` touched when given."""
    counts: Counter[str] = Counter()
    for (files,) in db.query("SELECT files FROM session_projects WHERE project_id = ?", (ref.id,)):
        counts.update(telling(json.loads(files)))
    counts.update(
        telling(
            f
            for (f,) in db.query(
                "SELECT f.file FROM episode_files f JOIN episodes e ON e.id = f.episode_id WHERE e.project_id = ?",
                (ref.id,),
            )
        )
    )
    return {f for f, _ in counts.most_common(most)}


def _project_of_root(db: Database, root: str) -> ProjectRef | None:
    """The project of the latest session that ran in `root`, however its case was spelled where case does not
    tell folders apart (Windows; macOS's `/Users`: `project.spellings`)."""
    folded = spellings(root)[1]
    rows = db.query(
        "SELECT p.id, p.name, p.path, s.root FROM session_projects s JOIN projects p ON p.id = s.project_id "
        "WHERE s.root = ? " + ("COLLATE NOCASE " if caseless(root) else "") + "ORDER BY s.decided_at DESC",
        (root,),
    )
    return next((ProjectRef(*row[:3]) for row in rows if spellings(row[3])[1] == folded), None)


def _projects_of_roots_in(db: Database, base: str) -> list[tuple[ProjectRef, str]]:
    """The distinct projects of the checkouts directly inside `base` that sessions ran in."""
    windows = windows_shaped(base)
    rows = db.query(
        "SELECT DISTINCT p.id, p.name, p.path, s.root FROM session_projects s JOIN projects p ON p.id = s.project_id "
        "WHERE s.root LIKE ? ESCAPE '\\'",
        (base.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + ("\\\\%" if windows else "/%"),),
    )
    found: dict[str, tuple[ProjectRef, str]] = {}
    for pid, name, path, root in rows:
        if (ntpath if windows else posixpath).dirname(root) == base:
            found.setdefault(pid, (ProjectRef(pid, name, path), root))
    return list(found.values())
