"""What the mistakes log and the should-have-asked log share.

Both hold rows of a project, optionally tied to an episode and a session, anchored to files (relative to the
project root) and carrying a validity scope: a transferable row (anything but project scope) may surface in
another project's brief, a project-scoped one never does. A dedupe key makes detection from transcripts
idempotent: replaying the same turns inserts nothing new.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tempera.core.db import Database
from tempera.core.episodes import EpisodeStore
from tempera.core.errors import InvalidInput
from tempera.core.models import ValidityScope
from tempera.core.project import ProjectRef
from tempera.core.projects import ProjectRegistry
from tempera.core.redact import redact
from tempera.core.selfimprove.anchors import anchor_files

MAX_TEXT = 4000


@dataclass(frozen=True)
class LogKind:
    name: str  # the `kind` of its rows in selfimprove_files
    table: str
    fields: tuple[str, ...]  # its own text columns
    required: tuple[str, ...]


@dataclass
class LogEntry:
    id: int
    project_id: str
    project_name: str
    values: dict[str, str]
    files: list[str]
    scope: str
    transferable: bool
    episode_id: str | None
    session_id: str | None
    source: str
    created_at: str
    foreign: bool = field(default=False)  # set by `entries_for` for rows of another project

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            **self.values,
            "files": self.files,
            "project": self.project_name,
            "project_id": self.project_id,
            "scope": self.scope,
            "episode_id": self.episode_id,
            "session_id": self.session_id,
            "source": self.source,
            "created_at": self.created_at,
            "foreign": self.foreign,
        }


def add_entry(
    db: Database,
    kind: LogKind,
    project: ProjectRef,
    values: dict[str, str],
    *,
    files: Sequence[str],
    scope: ValidityScope,
    episode_id: str | None = None,
    session_id: str | None = None,
    source: str = "manual",
    dedupe_key: str | None = None,
    at: datetime | None = None,
) -> int | None:
    """Store one row, secrets redacted; None when a row with the same dedupe key exists (already logged). `at` is
    when it happened (a transcript's timestamp: an imported session keeps its own date); default now."""
    clean = {f: " ".join(redact(values.get(f) or "").split())[:MAX_TEXT] for f in kind.fields}
    missing = [f for f in kind.required if not clean[f]]
    if missing:
        raise InvalidInput(f"{kind.name}: {', '.join(missing)} must not be empty")
    now = (at or datetime.now(timezone.utc)).astimezone(timezone.utc).isoformat()
    cols = ", ".join(kind.fields)
    with db.transaction():
        ProjectRegistry(db).ensure(project)
        cur = db.execute(
            f"INSERT INTO {kind.table}(project_id, {cols}, episode_id, session_id, scope, transferable, source, "
            f"dedupe_key, created_at) VALUES (?, {', '.join('?' * len(kind.fields))}, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(dedupe_key) DO NOTHING",
            (
                project.id,
                *clean.values(),
                episode_id,
                session_id,
                str(scope),
                int(scope.transferable),
                source,
                dedupe_key,
                now,
            ),
        )
        if cur.rowcount == 0:
            return None
        row_id = int(cur.lastrowid)
        for path in dict.fromkeys(files):
            db.execute("INSERT INTO selfimprove_files(kind, row_id, path) VALUES (?, ?, ?)", (kind.name, row_id, path))
    return row_id


def exists(db: Database, kind: LogKind, dedupe_key: str) -> bool:
    """Whether a row with this dedupe key is stored (checked before paying for an LLM call about it)."""
    return db.one(f"SELECT 1 FROM {kind.table} WHERE dedupe_key = ?", (dedupe_key,)) is not None


def _select(kind: LogKind) -> str:
    return (
        f"SELECT t.id, t.project_id, COALESCE(p.name, t.project_id), {', '.join('t.' + f for f in kind.fields)}, "
        "t.scope, t.transferable, t.episode_id, t.session_id, t.source, t.created_at "
        f"FROM {kind.table} t LEFT JOIN projects p ON p.id = t.project_id"
    )


def _entries(
    db: Database, kind: LogKind, where: str, params: Sequence[Any], limit: int | None, home: str | None = None
) -> list[LogEntry]:
    sql = f"{_select(kind)} WHERE {where} ORDER BY t.created_at DESC, t.id DESC"
    if limit:
        sql += f" LIMIT {int(limit)}"
    rows = db.query(sql, params)
    files = _files_of(db, kind, [int(r[0]) for r in rows])
    n = len(kind.fields)
    return [
        LogEntry(
            id=int(r[0]),
            project_id=r[1],
            project_name=r[2],
            values=dict(zip(kind.fields, r[3 : 3 + n])),
            files=files.get(int(r[0]), []),
            scope=r[3 + n],
            transferable=bool(r[4 + n]),
            episode_id=r[5 + n],
            session_id=r[6 + n],
            source=r[7 + n],
            created_at=r[8 + n],
            foreign=home is not None and r[1] != home,
        )
        for r in rows
    ]


def _files_of(db: Database, kind: LogKind, ids: list[int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for row_id, path in db.query(
            f"SELECT row_id, path FROM selfimprove_files WHERE kind = ? AND row_id IN "
            f"({','.join('?' * len(chunk))}) ORDER BY rowid",
            (kind.name, *chunk),
        ):
            out.setdefault(int(row_id), []).append(path)
    return out


def list_entries(
    db: Database, kind: LogKind, *, project_id: str | None = None, limit: int | None = None
) -> list[LogEntry]:
    """Newest first; every project when `project_id` is None."""
    if project_id:
        return _entries(db, kind, "t.project_id = ?", (project_id,), limit)
    return _entries(db, kind, "1", (), limit)


def entries_for(
    db: Database,
    kind: LogKind,
    project_id: str,
    files: Sequence[str],
    *,
    cross_project: bool = False,
    scopes: Sequence[str] = (),
    limit: int = 500,
) -> list[LogEntry]:
    """Rows of this project anchored to any of `files` (all of its rows when no file is named); with
    `cross_project`, transferable rows of other projects anchored to the same paths or whose scope is one of
    `scopes` (e.g. `language:python` for a Python file set)."""
    file_match = (
        (f"t.id IN (SELECT row_id FROM selfimprove_files WHERE kind = ? AND path IN ({','.join('?' * len(files))}))")
        if files
        else ""
    )
    own_where, params = "t.project_id = ?", [project_id]
    if files:
        own_where += f" AND {file_match}"
        params += [kind.name, *files]
    rows = _entries(db, kind, own_where, params, limit, home=project_id)
    if not cross_project:
        return rows
    alternatives, foreign_params = [], []
    if files:
        alternatives.append(file_match)
        foreign_params += [kind.name, *files]
    if scopes:
        alternatives.append(f"t.scope IN ({','.join('?' * len(scopes))})")
        foreign_params += list(scopes)
    if not alternatives:
        return rows
    where = f"t.project_id != ? AND t.transferable = 1 AND ({' OR '.join(alternatives)})"
    return rows + _entries(db, kind, where, [project_id, *foreign_params], limit, home=project_id)


def count_by(
    db: Database, kind: LogKind, column: str, *, project_id: str | None = None, limit: int = 10
) -> list[dict[str, Any]]:
    """The most frequent values of one text column, with how often and when last seen."""
    if column not in kind.fields:
        raise InvalidInput(f"{kind.name} has no column {column!r}")
    where, params = ("WHERE project_id = ?", (project_id,)) if project_id else ("", ())
    rows = db.query(
        f"SELECT {column}, COUNT(*), MAX(created_at), COUNT(DISTINCT project_id) FROM {kind.table} "
        f"{where} GROUP BY {column} ORDER BY COUNT(*) DESC, MAX(created_at) DESC LIMIT ?",
        (*params, limit),
    )
    return [{column: r[0], "count": int(r[1]), "last_seen": r[2], "projects": int(r[3])} for r in rows]


class AnchoredInput(BaseModel):
    """Fields every logged row takes from a person, the CLI or an MCP tool (and its files as they gave them)."""

    model_config = ConfigDict(extra="forbid")
    files: list[str] = Field(default_factory=list, description="Files concerned, relative to the cwd or absolute")
    scope: str | None = Field(
        None,
        description="project (default) | forever | language:X | crate:X@V | domain:X | "
        "workaround:REF: anything but project may surface in other projects",
    )
    episode: str | None = Field(None, description="The episode this belongs to (id or 8+ char prefix)")
    session_id: str | None = None
    project: str | None = Field(None, description="Project path, name or id; default the episode's, else the cwd's")

    @field_validator("files", mode="before")
    @classmethod
    def _split(cls, v: object) -> object:
        return [x.strip() for x in v.split(",") if x.strip()] if isinstance(v, str) else v


@dataclass(frozen=True)
class Anchor:
    project: ProjectRef
    files: list[str]
    scope: ValidityScope
    episode_id: str | None


def resolve_anchor(store: EpisodeStore, item: AnchoredInput, *, cwd: str | None = None) -> Anchor:
    """The project (the episode's when one is named), root-relative files and the parsed scope."""
    episode_id, project = None, None
    if item.episode:
        ep = store.get(item.episode)
        episode_id, project = ep.id, ProjectRef(ep.project_id, ep.project_name, ep.project_path)
    if item.project or project is None:
        project = store.projects.resolve(item.project, cwd=cwd, create=True)
    return Anchor(project, anchor_files(item.files, project.path, cwd), ValidityScope.parse(item.scope), episode_id)


def log_entry(
    store: EpisodeStore,
    kind: LogKind,
    item: AnchoredInput,
    values: dict[str, str],
    *,
    cwd: str | None = None,
    source: str = "manual",
    dedupe_key: str | None = None,
    at: datetime | None = None,
) -> int | None:
    """Resolve the item's project, episode, files and scope, then store its row (None: already logged)."""
    anchor = resolve_anchor(store, item, cwd=cwd)
    return add_entry(
        store.db,
        kind,
        anchor.project,
        values,
        files=anchor.files,
        scope=anchor.scope,
        episode_id=anchor.episode_id,
        session_id=item.session_id,
        source=source,
        dedupe_key=dedupe_key,
        at=at,
    )
