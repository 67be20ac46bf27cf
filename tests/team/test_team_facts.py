"""Facts and forgetting across developers' data dirs through one real PostgreSQL + pgvector team database."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
import subprocess
import sys
from collections.abc import Callable

import pytest
from teamdb import Dev, Team
from test_team_sync import OPS, WEB, episode, local_ids, sync

from tempera.core import paths
from tempera.core import pause
from tempera.core.forget import Selector, link_fact_tx
from tempera.core.memory import Memory
from tempera.core.project import ProjectRef
from tempera.facts.store import FactStore
from tempera.facts.values import VT
from tempera.team import pgdb, service
from tempera.team.errors import TeamError
from tempera.team.pgschema import FACT_TABLES, SHARED_TABLES
from tempera.team.sync import TeamSync

USES = "[:find ?db :where [:service/checkout :uses ?db]]"


def facts(dev: Dev) -> FactStore:
    return FactStore(dev.mem.db)


def stated_in(dev: Dev, episode_id: str, text: str, reason: str) -> int:
    """What a captured turn does (turnfacts.py): facts transacted with the turn as reason, linked to its episode."""
    tx = facts(dev).transact(text, reason=reason).tx
    assert tx is not None
    link_fact_tx(dev.mem.db, episode_id, tx)
    return tx


def values(dev: Dev, query: str = USES) -> set[object]:
    return {row[0] for row in facts(dev).query(query).rows}


def dump(team: Team) -> str:
    """Every row of every team table, as text, for the secret scan."""
    return " ".join(
        str(r[0])
        for table in ("projects", "access", *SHARED_TABLES, *FACT_TABLES)
        for r in team.admin.execute(f"SELECT t::text FROM tempera.{table} t").fetchall()
    )


def test_a_fact_and_its_retraction_reach_a_teammate(devs: Callable[..., Dev], team: Team) -> None:
    alice, bob = devs("alice", WEB), devs("bob", WEB)
    ep = alice.mem.store.add(episode(WEB, "Decided the checkout service stores carts in postgres"))
    stated_in(
        alice,
        ep.id,
        '[[:service/checkout :uses "postgres"] [:service/checkout :owner "payments"]]',
        "the team chose postgres for carts",
    )
    facts(alice).transact('[[:alice/laptop :os "linux"]]', reason="by hand: no project")  # stays local
    other = alice.mem.store.add(episode(OPS, "Ops runbook uses consul"))  # a project not shared
    stated_in(alice, other.id, '[[:service/ops :uses "consul"]]', "ops turn")

    assert sync(alice, "push")["facts"] == 2
    assert sync(bob, "pull")["facts"] == 2
    assert values(bob) == {"postgres"}
    assert values(bob, "[:find ?o :where [:alice/laptop :os ?o]]") == set()
    assert values(bob, "[:find ?d :where [:service/ops :uses ?d]]") == set()
    assert team.rows("facts") == 2

    assert sync(alice, "sync")["facts"] == 0 and sync(bob, "sync")["facts"] == 0  # idempotent
    assert sync(bob, "push")["facts"] == 0  # pulled facts are never pushed back
    before = bob.mem.db.one("SELECT count(*) FROM fact_datoms")[0]
    bob.state.unshare(WEB.id)  # cursors go: the next pull reads everything again and merges by id
    bob.state.share(WEB.id)
    assert sync(bob, "pull")["facts"] == 2
    assert bob.mem.db.one("SELECT count(*) FROM fact_datoms")[0] == before

    bob_tx = facts(bob).current_tx()
    facts(alice).retract('[[:service/checkout :uses "postgres"]]', reason="carts moved to redis")
    assert sync(alice, "push")["facts"] == 1
    assert sync(bob, "pull")["facts"] == 1
    assert values(bob) == set()
    assert values(bob, f"[:find ?db :as-of {bob_tx} :where [:service/checkout :uses ?db]]") == {"postgres"}
    assert "carts moved to redis" in str(facts(bob).history(":service/checkout").rows)

    facts(bob).retract('[[:service/checkout :owner "payments"]]', reason="payments team dissolved")
    assert sync(bob, "push")["facts"] == 1  # a retraction travels with the datom, whoever made it
    assert sync(alice, "pull")["facts"] == 1
    assert values(alice, "[:find ?o :where [:service/checkout :owner ?o]]") == set()
    assert sync(alice, "sync")["facts"] == 0 and sync(bob, "sync")["facts"] == 0
    assert team.rows("facts") == 4


def test_facts_leave_redacted_and_never_from_a_paused_project(devs: Callable[..., Dev], team: Team) -> None:
    alice = devs("alice", WEB)
    token = "ghp_" + "Fq8" * 12
    ep = alice.mem.store.add(episode(WEB, "Deploy key rotated"))
    # written around the store's redaction (a path into memory that missed it): the push redacts again
    tx, _ = facts(alice).record(
        "rotated the key", [(":deploy/key", ":value", int(VT.STRING), f"token {token}", 0, None)]
    )
    link_fact_tx(alice.mem.db, ep.id, tx)
    stated_in(alice, ep.id, '[[:deploy/key :note "<private>the vault PIN is 4471</private> rotated"]]', "turn")
    pause.pause(WEB.id, WEB.name, None, alice.data_dir)
    assert sync(alice, "push").get("facts", 0) == 0 and team.rows("facts") == 0
    pause.resume(WEB.id, alice.data_dir)
    assert sync(alice, "push")["facts"] == 2
    text = dump(team)
    assert "[REDACTED:github_token]" in text and token not in text and "4471" not in text


def second_machine(alice: Dev, team: Team) -> Dev:
    """Alice's other data dir (a second laptop, or one restored from a backup): same role, its own machine id."""
    data_dir = alice.data_dir.parent / "dev-alice-2"
    mem = Memory(db_path=data_dir / paths.DB_NAME)
    mem.store.projects.ensure(WEB)
    dev = Dev(alice.role, data_dir, mem)
    dev.state.set_link(team.dsn(alice.role), alice.role)
    dev.state.share(WEB.id)
    return dev


def test_forget_reaches_the_team_and_nothing_brings_it_back(devs: Callable[..., Dev], team: Team) -> None:
    alice, bob = devs("alice", WEB), devs("bob", WEB)
    gone = alice.mem.store.add(episode(WEB, "Pasted the production database dump into the session"))
    kept = alice.mem.store.add(episode(WEB, "Checkout retries idempotently on a 409"))
    stated_in(alice, gone.id, '[[:db/prod :dump "customers.sql"]]', "the dump turn")
    alice.mem.feedback("helpful", [gone.id])
    laptop = second_machine(alice, team)
    laptop.mem.store.add(gone.model_copy())  # the same episode on Alice's other machine, not pushed from there yet
    try:
        sync(alice, "push")
        assert sync(bob, "pull")["episodes"] == 2 and values(bob, "[:find ?f :where [:db/prod :dump ?f]]")
        bob.mem.feedback("helpful", [gone.id])  # Bob's evidence on it, not pushed before the forget

        env = {**os.environ, "TEMPERA_DATA_DIR": str(alice.data_dir)}
        r = subprocess.run(
            [sys.executable, "-m", "tempera.cli", "forget", "episode", gone.id, "--yes"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        assert "team tombstones" in r.stdout
        assert alice.mem.db.one("SELECT count(*) FROM team_tombstones")[0] == 1
        assert sync(alice, "push")["tombstones"] == 1
        assert team.rows("episodes") == 1 and team.rows("tombstones") == 1
        assert [
            r[0] for r in team.admin.execute("SELECT count(*) FROM tempera.evidence WHERE episode_id = %s", (gone.id,))
        ] == [0]
        assert team.rows("facts") == 0

        assert sync(laptop, "push")["episodes"] == 1  # a stale push: accepted by the client, dropped by the team
        assert sync(bob, "push")["evidence"] == 1  # so is evidence about it
        assert team.rows("episodes") == 1 and team.rows("evidence") == 0
    finally:
        laptop.mem.close()
    assert [r[0] for r in team.admin.execute("SELECT id FROM tempera.episodes")] == [kept.id]

    assert sync(bob, "pull")["tombstones"] == 1
    assert local_ids(bob, WEB) == [kept.id]
    assert values(bob, "[:find ?f :where [:db/prod :dump ?f]]") == set()  # the facts of its turns went with it
    assert sync(bob, "pull")["tombstones"] == 0 and sync(alice, "sync")["episodes"] == 0
    assert local_ids(alice, WEB) == [kept.id]


def test_forgetting_an_unshared_project_queues_nothing(devs: Callable[..., Dev], team: Team) -> None:
    alice = devs("alice", WEB)
    ep = alice.mem.store.add(episode(OPS, "Ops note"))
    from tempera.team.local import forget

    forget(alice.mem.db, Selector("episode", ep.id))
    assert alice.mem.db.one("SELECT count(*) FROM team_tombstones")[0] == 0


def cli(dev: Dev, *args: str) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(
        [sys.executable, "-m", "tempera.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TEMPERA_DATA_DIR": str(dev.data_dir)},
    )
    assert r.returncode == 0, r.stderr
    return r


def test_projects_merge_moves_the_teams_rows_and_cursors(devs: Callable[..., Dev], team: Team) -> None:
    alice, bob = devs("alice", WEB), devs("bob", WEB)
    ep = alice.mem.store.add(episode(WEB, "Checkout totals rounded half-even"))
    stated_in(alice, ep.id, '[[:service/checkout :uses "postgres"]]', "the team chose postgres")
    sync(alice)
    sync(bob)
    bob.mem.feedback("helpful", [ep.id])
    sync(bob, "push")

    shop = ProjectRef("77aa77aa77aa77aa", "webshop-monorepo", None)  # the id the repository has now
    for dev in (alice, bob):
        dev.mem.store.projects.ensure(shop)
    out = cli(alice, "projects", "merge", WEB.id, shop.id).stdout
    assert "shared with the team" in out and "webshop-monorepo" in out
    assert alice.state.shared() == [shop.id]

    report = sync(alice, "push")
    assert report["moved episodes"] == 1  # then sent again under the target (a fresh cursor): merged by id
    for table in ("episodes", "evidence", "facts"):
        assert team.rows(table, shop.id) == team.rows(table) == 1, table
    assert not [r for r in alice.mem.db.query("SELECT name FROM team_cursors") if WEB.id in r[0]]
    assert sync(alice, "pull") == {
        "episodes": 0,
        "evidence": 1,
        "links": 0,
        "log_entries": 0,
        "facts": 0,
        "tombstones": 0,
    }  # Bob's row again, under its new id: merged, not doubled
    assert alice.mem.store.get(ep.id).utility.value == pytest.approx(2 / 3)

    link = bob.state.require_link()  # Bob has not merged yet: told what to do, nothing pushed to the old id
    with pgdb.session(link.dsn) as conn:
        skipped = TeamSync(bob.mem, conn).push().skipped
    assert "merged into project" in skipped[WEB.id] and "tempera projects merge" in skipped[WEB.id]

    cli(bob, "projects", "merge", WEB.id, shop.id)
    datoms = bob.mem.db.one("SELECT count(*) FROM fact_datoms")[0]
    assert sync(bob)["episodes"] == 1  # read again under the new id (a fresh cursor), merged by id
    assert local_ids(bob, shop) == [ep.id] and values(bob) == {"postgres"}
    assert bob.mem.db.one("SELECT count(*) FROM fact_datoms")[0] == datoms
    later = alice.mem.store.add(episode(shop, "Refunds go through the ledger service"))
    sync(alice, "push")
    assert sync(bob, "pull")["episodes"] == 1 and later.id in local_ids(bob, shop)
    assert team.rows("episodes") == 2 and team.rows("evidence") == 1


def test_a_team_database_older_than_this_tempera_is_named(devs: Callable[..., Dev], team: Team) -> None:
    alice = devs("alice", WEB)
    team.admin.execute("DELETE FROM tempera._tempera_migrations WHERE name = 'team.002_facts_and_forgetting'")
    with pytest.raises(TeamError, match="team.002_facts_and_forgetting"):
        sync(alice, "push")
    assert "tempera team init" in str(alice.state.runs()["push"]["error"])


def test_team_status_counts_facts_and_tombstones(devs: Callable[..., Dev], team: Team) -> None:
    alice, bob = devs("alice", WEB), devs("bob", WEB)
    ep = alice.mem.store.add(episode(WEB, "Decided the checkout service stores carts in postgres"))
    stated_in(alice, ep.id, '[[:service/checkout :uses "postgres"] [:service/checkout :owner "payments"]]', "turn")
    later = alice.mem.store.add(episode(WEB, "Pasted a customer's address into the session"))
    sync(alice, "push")
    sync(bob, "pull")
    from tempera.team.local import forget

    forget(alice.mem.db, Selector("episode", later.id))

    def counts(dev: Dev) -> dict[str, object]:
        (p,) = service.status(dev.mem)["projects"]
        return {k: p[k] for k in ("facts_pushed", "facts_pulled", "tombstones_waiting")}

    assert counts(alice) == {"facts_pushed": 2, "facts_pulled": 0, "tombstones_waiting": 1}
    assert counts(bob) == {"facts_pushed": 0, "facts_pulled": 2, "tombstones_waiting": 0}
    assert "2 facts pushed, 0 pulled; 1 tombstone waiting for the next push" in cli(alice, "team", "status").stdout
    sync(alice, "push")
    status = service.status(alice.mem)
    assert status["projects"][0]["tombstones_waiting"] == 0
    assert {k: status["team"][WEB.id][k] for k in ("facts", "tombstones")} == {"facts": 2, "tombstones": 1}
    assert "team has 1 episodes, 2 facts, 1 tombstones" in cli(bob, "team", "status").stdout


def move_the_export(dev: Dev) -> None:
    """A later turn supersedes the export target: it closes the old fact, which leaves a closed copy of it."""
    later = dev.mem.store.add(episode(WEB, "The customer export now goes to the ledger service"))
    tx = (
        facts(dev)
        .change(
            add='[[:service/export :target "ledger"]]',
            close='[[:service/export :target "acme-billing.example"]]',
            at=datetime.now(timezone.utc) + timedelta(hours=1),  # after the fact became valid: its copy ends there
            reason="the export moved",
        )
        .tx
    )
    assert tx is not None
    link_fact_tx(dev.mem.db, later.id, tx)


def test_forget_takes_the_closed_copies_of_its_facts_from_the_team(devs: Callable[..., Dev], team: Team) -> None:
    """A later turn that supersedes a forgotten episode's fact leaves a closed copy of it (same fact, a valid-to):
    it carries what the forgotten episode said, so it goes from the team and every teammate's machine too."""
    alice, bob = devs("alice", WEB), devs("bob", WEB)
    gone = alice.mem.store.add(episode(WEB, "The customer export goes to acme-billing.example"))
    stated_in(alice, gone.id, '[[:service/export :target "acme-billing.example"]]', "the export turn")
    move_the_export(alice)
    sync(alice, "push")
    sync(bob, "pull")
    assert "acme-billing" in str(facts(bob).history(":service/export").rows)

    from tempera.team.local import forget

    forget(alice.mem.db, Selector("episode", gone.id))
    assert "acme-billing" not in str(facts(alice).history(":service/export").rows)  # gone here, copies too
    sync(alice, "push")
    assert "acme-billing" not in dump(team)
    sync(bob, "pull")
    assert "acme-billing" not in str(facts(bob).history(":service/export").rows)
    carol = devs("carol", WEB)  # joins after the forget
    sync(carol, "pull")
    seen = str(facts(carol).history(":service/export").rows)
    assert "ledger" in seen and "acme-billing" not in seen  # the later turn's own fact came, not the copy


def test_a_closed_copy_pushed_after_the_forget_stays_out(devs: Callable[..., Dev], team: Team) -> None:
    """Bob pulled a fact and superseded it in his own turn; before he pulls Alice's tombstone he pushes his closed
    copy, which carries what the forgotten episode said: the team drops it, as it drops the episode's own rows."""
    alice, bob = devs("alice", WEB), devs("bob", WEB)
    gone = alice.mem.store.add(episode(WEB, "The customer export goes to acme-billing.example"))
    stated_in(alice, gone.id, '[[:service/export :target "acme-billing.example"]]', "the export turn")
    sync(alice, "push")
    sync(bob, "pull")
    move_the_export(bob)

    from tempera.team.local import forget

    forget(alice.mem.db, Selector("episode", gone.id))
    sync(alice, "push")  # the tombstone first
    sync(bob, "push")  # then Bob's turn, made before he saw it
    assert "acme-billing" not in dump(team)
    assert "ledger" in dump(team)  # his own fact came
    carol = devs("carol", WEB)
    sync(carol, "pull")
    seen = str(facts(carol).history(":service/export").rows)
    assert "ledger" in seen and "acme-billing" not in seen
    sync(bob, "pull")
    assert "acme-billing" not in str(facts(bob).history(":service/export").rows)
