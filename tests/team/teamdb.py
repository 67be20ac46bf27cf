"""A team database and a developer's data dir, as the team tests hold them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from tempera.core.memory import Memory
from tempera.core.project import ProjectRef
from tempera.team.access import member_sql
from tempera.team.local import TeamState


@dataclass
class Team:
    """One team database: the owner's connection and the DSN of each member role."""

    admin_uri: str
    dbname: str
    admin: psycopg.Connection
    roles: list[str] = field(default_factory=list)

    def dsn(self, role: str) -> str:
        return self.admin_uri.replace("postgres:@", f"{role}@").replace("/postgres?", f"/{self.dbname}?")

    def add_member(self, role: str, projects: list[ProjectRef]) -> None:
        """Run what `tempera team member-sql ROLE --project ...` prints, as the owner."""
        self.admin.execute(member_sql(role, projects, database=self.dbname))
        self.roles.append(role)

    def rows(self, table: str, project_id: str | None = None) -> int:
        sql = f"SELECT count(*) FROM tempera.{table}" + (" WHERE project_id = %s" if project_id else "")
        return int(self.admin.execute(sql, (project_id,) if project_id else ()).fetchone()[0])


@dataclass
class Dev:
    """One developer's machine: a data dir with its own local memory, linked to the team as `role`."""

    role: str
    data_dir: Path
    mem: Memory

    @property
    def state(self) -> TeamState:
        return TeamState(self.mem.db)
