"""Upgrading a populated team.001 database, the local one and the PostgreSQL one, through team.002 and later:
nothing is lost, and sync goes on from where it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from teamdb import Dev, Team
from test_team_sync import WEB, episode, link_and_log, sync

from tempera.core.db import apply_migrations
from tempera.core.memory import Memory
from tempera.team import local, pgdb, pgschema
from tempera.team.errors import TeamError
from tempera.team.kinds import EPISODES, EVIDENCE, LINKS, LOG_ENTRIES
from tempera.team.sync import TeamSync

TEAM_001_TABLES = ("team_link", "team_shared", "team_cursors", "team_evidence", "team_runs")


def _local_rows(mem: Memory) -> dict[str, list[Any]]:
    return {t: mem.db.query(f"SELECT * FROM {t} ORDER BY 1") for t in TEAM_001_TABLES}


def test_the_local_team_tables_upgrade_from_team_001_keeping_every_row(tmp_path: Path) -> None:
    with Memory(db_path=tmp_path / "old" / "tempera.db", use_model=False) as mem:
        apply_migrations(mem.db, local.MIGRATIONS[:1])  # what a Tempera of team.001 left behind
        ep = mem.store.add(episode(WEB, "Login redirect loop fixed by clearing the stale session cookie"))
        mem.store.projects.ensure(WEB)
        mem.feedback("helpful", [ep.id])
        (fid,) = mem.db.one("SELECT max(id) FROM feedback_events")
        for sql, args in (
            ("INSERT INTO team_link VALUES (1, 'host=db dbname=team user=alice', 'alice', '2026-01-01T00:00:00')", ()),
            ("INSERT INTO team_shared VALUES (?, '2026-01-01T00:00:01')", (WEB.id,)),
            ("INSERT INTO team_cursors VALUES (?, '2026-01-02T00:00:00|7')", (f"push.episodes:{WEB.id}",)),
            ("INSERT INTO team_cursors VALUES (?, '42')", (f"pull.evidence:{WEB.id}",)),
            ("INSERT INTO team_evidence VALUES (?, 'm1:ev:1')", (fid,)),
            ("INSERT INTO team_runs VALUES ('push', '2026-01-02', '2026-01-02', '2026-01-02', 3, NULL)", ()),
        ):
            mem.db.execute(sql, args)
        before = _local_rows(mem)

        state = local.TeamState(mem.db)  # the team part opening the data dir applies team.002

        assert _local_rows(mem) == before
        assert mem.db.query("SELECT pg_id, project_id FROM team_projects") == [(WEB.id, WEB.id)]
        assert state.require_link().member == "alice" and state.shared() == [WEB.id]
        assert state.cursor("push.episodes", WEB.id, "") == "2026-01-02T00:00:00|7"


def _team_rows(team: Team) -> dict[str, list[Any]]:
    """Every row of the team.001 tables, in the columns team.001 made (team.002 adds one to `projects`)."""
    out = {
        t: team.admin.execute(f"SELECT t::text FROM tempera.{t} t ORDER BY 1").fetchall()
        for t in pgschema.SHARED_TABLES
    }
    out["projects"] = team.admin.execute("SELECT id, name, created_by FROM tempera.projects ORDER BY id").fetchall()
    out["access"] = team.admin.execute("SELECT project_id, member FROM tempera.access ORDER BY 1, 2").fetchall()
    return out


def test_a_populated_team_001_database_upgrades_and_loses_nothing(
    devs: Callable[..., Dev], team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    team.admin.execute("DROP SCHEMA tempera CASCADE")
    with monkeypatch.context() as old:  # `tempera team init` of a Tempera that knew team.001 only
        old.setattr(pgdb, "MIGRATIONS", pgschema.MIGRATIONS[:1])
        assert pgdb.apply_migrations(team.admin) == ["team.001_shared_memory"]
    alice = devs("alice", WEB)
    first = alice.mem.store.add(episode(WEB, "Login redirect loop fixed by clearing the stale session cookie"))
    later = alice.mem.store.add(episode(WEB, "Session cookie now rotates on login"))
    alice.mem.feedback("helpful", [first.id])
    link_and_log(alice, later, first)
    with pgdb.session(alice.state.require_link().dsn) as conn:  # what team.001's push sent: its tables only
        ts = TeamSync(alice.mem, conn)
        conn.execute("SELECT tempera.share_project(%s, %s)", (WEB.id, WEB.name))
        pushed = [
            ts.send(kind, source, WEB) for kind in (EPISODES, EVIDENCE, LINKS, LOG_ENTRIES) for source in kind.pushes
        ]
    assert pushed == [2, 1, 1, 1, 0]
    before = _team_rows(team)
    with pytest.raises(TeamError, match="team.002_facts_and_forgetting"):
        sync(alice, "push")  # an old database is named, not half-used

    assert pgdb.apply_migrations(team.admin) == [name for name, _ in pgschema.MIGRATIONS[1:]]

    assert _team_rows(team) == before
    assert sync(alice, "push") == {
        "tombstones": 0,
        "episodes": 0,
        "evidence": 0,
        "links": 0,
        "mistakes": 0,
        "should_have_asked": 0,
        "facts": 0,
    }  # its cursors still hold: nothing is sent twice
    bob = devs("bob", WEB)
    assert sync(bob, "pull") == {
        "episodes": 2,
        "evidence": 1,
        "links": 1,
        "log_entries": 1,
        "facts": 0,
        "tombstones": 0,
    }
    assert bob.mem.store.get(first.id).utility.value == alice.mem.store.get(first.id).utility.value
