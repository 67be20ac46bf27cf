"""The SQL a DBA runs to add a member to the team and give them projects (printed, never run by Tempera)."""

from __future__ import annotations

import re

from tempera.core.errors import InvalidInput
from tempera.core.project import ProjectRef
from tempera.team.pgschema import MEMBER_ROLE

ROLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def member_sql(role: str, projects: list[ProjectRef], *, database: str | None = None) -> str:
    """CREATE ROLE (login, in the member group) and one access row per project, as one script for psql."""
    if not ROLE_NAME.fullmatch(role):
        raise InvalidInput(f"{role!r} is not a plain role name (lower-case letters, digits, _; at most 63)")
    lines = [
        f"-- Add {role} to the Tempera team: run as the team database's owner (psql -v ON_ERROR_STOP=1).",
        "BEGIN;",
        f"DO $$ BEGIN CREATE ROLE {role} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;",
        f"GRANT {MEMBER_ROLE} TO {role};",
    ]
    if database:
        quoted = '"' + database.replace('"', '""') + '"'
        lines.append(f"GRANT CONNECT ON DATABASE {quoted} TO {role};")
    for ref in projects:
        lines.append(
            f"INSERT INTO tempera.projects(id, name) VALUES ({_literal(ref.id)}, {_literal(ref.name)}) "
            "ON CONFLICT (id) DO NOTHING;"
        )
        lines.append(
            f"INSERT INTO tempera.access(project_id, member) VALUES ({_literal(ref.id)}, "
            f"{_literal(role)}) ON CONFLICT DO NOTHING;"
        )
    lines += [
        "COMMIT;",
        f"-- Then set a password outside this script (psql: \\password {role}) or use certificate / SSO auth;",
        f"-- {role} keeps it in ~/.pgpass and runs: tempera team connect 'host=... dbname=... user={role}'",
    ]
    return "\n".join(lines) + "\n"
