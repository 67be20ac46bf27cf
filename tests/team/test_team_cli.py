"""The `tempera team` commands as a user meets them: help, clean errors, no password stored, disconnect."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from teamdb import Team

from tempera.cli.team import team as team_group
from tests.conftest import REPO
from tests.support.gitrepos import repo, tempera

README = (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(team_group.commands))
def test_every_team_command_has_help_and_is_in_the_readme(name: str) -> None:
    command = team_group.commands[name]
    assert (command.help or "").strip(), name
    assert f"tempera team {name}" in README, name


def test_connect_refuses_a_password_and_stores_nothing(data_dir: Path, tmp_path: Path) -> None:
    r = tempera("team", "connect", "postgresql://alice:s3cr3t-pw@db.example/team", cwd=tmp_path)
    assert r.returncode == 1 and "pgpass" in r.stderr and "Traceback" not in r.stderr
    stored = b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())
    assert b"s3cr3t-pw" not in stored
    assert json.loads(tempera("team", "status", "--json", cwd=tmp_path).stdout) == {"connected": False}


def test_a_database_without_the_schema_says_who_runs_init(team: Team, tmp_path: Path) -> None:
    with psycopg.connect(team.admin_uri, autocommit=True) as root:
        root.execute(f'CREATE DATABASE "{team.dbname}_bare"')
    try:
        bare = team.dsn("postgres").replace(f"/{team.dbname}?", f"/{team.dbname}_bare?")
        r = tempera("team", "connect", bare, cwd=tmp_path)
        assert r.returncode == 1 and "tempera team init" in r.stderr and "Traceback" not in r.stderr
        assert "Applied team.001_shared_memory" in tempera("team", "init", bare, cwd=tmp_path).stdout
        assert "current" in tempera("team", "init", bare, cwd=tmp_path).stdout
    finally:
        with psycopg.connect(team.admin_uri, autocommit=True) as root:
            root.execute(f'DROP DATABASE "{team.dbname}_bare" WITH (FORCE)')


def test_share_unshare_disconnect(team: Team, tmp_path: Path) -> None:
    checkout = repo(tmp_path / "webshop")
    role = f"dana_{team.dbname[-6:]}"
    team.add_member(role, [])
    assert tempera("team", "connect", team.dsn(role), cwd=checkout).returncode == 0
    shared = tempera("team", "share", cwd=checkout)
    assert shared.returncode == 0 and "Added webshop" in shared.stdout
    assert "Stopped sharing webshop" in tempera("team", "unshare", cwd=checkout).stdout
    pushed = tempera("team", "push", "--json", cwd=checkout)
    assert pushed.returncode == 0 and sum(json.loads(pushed.stdout)["pushed"].values()) == 0
    assert "Disconnected" in tempera("team", "disconnect", cwd=checkout).stdout
    r = tempera("team", "push", cwd=checkout)
    assert r.returncode == 1 and "tempera team connect" in r.stderr


def test_an_unreachable_database_is_a_clean_error(tmp_path: Path) -> None:
    dead = f"host={tmp_path} dbname=team user=nobody connect_timeout=2"  # a socket dir with no server in it
    r = tempera("team", "connect", dead, cwd=tmp_path)
    assert r.returncode == 1 and "cannot connect to the team database" in r.stderr and "Traceback" not in r.stderr


def test_member_sql_is_what_the_dba_runs(tmp_path: Path) -> None:
    checkout = repo(tmp_path / "webshop")
    out = tempera("team", "member-sql", "erin", "--project", str(checkout), "--database", "team", cwd=checkout)
    assert out.returncode == 0
    assert "CREATE ROLE erin LOGIN" in out.stdout and "GRANT tempera_member TO erin" in out.stdout
    assert "INSERT INTO tempera.access" in out.stdout and "'webshop'" in out.stdout
    bad = tempera("team", "member-sql", "Robert'); DROP TABLE x;--", cwd=checkout)
    assert bad.returncode == 1 and "not a plain role name" in bad.stderr
