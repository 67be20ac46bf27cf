"""The projects table: the projects memory knows, recorded once, found by path, id prefix or name, and listed."""

from __future__ import annotations

import os
import re
from typing import Any

from tempera.core.db import Database
from tempera.core.errors import AmbiguousId, NotFound
from tempera.core.models import iso_utc
from tempera.core.project import ProjectRef, project_for_name, project_for_path


class ProjectRegistry:
    """The one home that writes a project row; episodes, decisions and imports record their project through it."""

    def __init__(self, db: Database):
        self.db = db

    def ensure(self, ref: ProjectRef) -> ProjectRef:
        """Record the project once; a read first, so the hooks' per-turn call never takes the write lock."""
        if self.db.one("SELECT 1 FROM projects WHERE id = ?", (ref.id,)) is None:
            self.db.execute(
                "INSERT INTO projects(id, name, path, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO NOTHING",
                (ref.id, ref.name, ref.path, iso_utc()),
            )
        return ref

    def resolve(self, spec: str | None, *, cwd: str | None = None, create: bool = False) -> ProjectRef:
        """A project from a path, an id prefix or a display name; default the cwd's project."""
        if not spec:
            return project_for_path(cwd or os.getcwd())
        if os.path.isdir(os.path.expanduser(spec)):
            return project_for_path(spec)
        rows = self.db.query(
            "SELECT id, name, path FROM projects WHERE id = ? OR name = ? COLLATE NOCASE", (spec.lower(), spec)
        )
        if not rows and re.fullmatch(r"[0-9a-f]{6,16}", spec.lower()):
            rows = self.db.query("SELECT id, name, path FROM projects WHERE id LIKE ?", (spec.lower() + "%",))
        if len(rows) == 1:
            return ProjectRef(*rows[0])
        if len(rows) > 1:
            listing = ", ".join(f"{r[1]} ({r[0][:8]}, {r[2] or 'no path'})" for r in rows)
            raise AmbiguousId(f"project {spec!r} is ambiguous: {listing}; pass its path or id")
        if create:
            return project_for_name(spec)
        raise NotFound(f"unknown project {spec!r}; pass a path, a known name or id (see `tempera projects`)")

    def listing(self) -> list[dict[str, Any]]:
        """Every project with its episode count, by name."""
        rows = self.db.query(
            "SELECT p.id, p.name, p.path, COUNT(e.id) FROM projects p "
            "LEFT JOIN episodes e ON e.project_id = p.id GROUP BY p.id ORDER BY p.name"
        )
        return [{"id": r[0], "name": r[1], "path": r[2], "episodes": r[3]} for r in rows]
