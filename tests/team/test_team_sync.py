"""Push and pull between developers' data dirs through one real PostgreSQL + pgvector team database."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timezone

import psycopg
import pytest

from support.datafiles import stored_bytes
from support.secrets import SECRETS
from tempera.core import pause
from teamdb import Dev, Team

from tempera.core.models import Episode, ValidityScope
from tempera.core.project import ProjectRef
from tempera.core.selfimprove.logs import add_entry
from tempera.core.selfimprove.mistakes import MISTAKES
from tempera.team import pgdb
from tempera.team.errors import TeamError
from tempera.team.sync import TeamSync

WEB = ProjectRef("a1b2c3d4e5f60718", "webshop", None)
OPS = ProjectRef("0f1e2d3c4b5a6978", "ops", None)


PUSHED = {"curl_basic_auth", "docker_password_stdin", "slack_app", "url_password_slash_at", "rubygems", "azure_sas"}


def episode(project: ProjectRef, summary: str) -> Episode:
    return Episode(project_id=project.id, project_name=project.name, summary=summary)


def sync(dev: Dev, direction: str = "sync", *, batch: int = 200) -> dict[str, int]:
    link = dev.state.require_link()
    with pgdb.session(link.dsn) as conn:
        report = getattr(TeamSync(dev.mem, conn, batch=batch), direction)()
    return report.pushed if direction == "push" else report.pulled


def link_and_log(dev: Dev, later: Episode, earlier: Episode) -> None:
    """A session link from `later` to `earlier` and a mistakes-log row of `later`, as a session's capture makes."""
    dev.mem.db.execute(
        "INSERT INTO episode_links(src_id, dst_id, relationship, weight, created_at) "
        "VALUES (?, ?, 'continuation', 1.0, '2026-01-01T00:00:00+00:00')",
        (later.id, earlier.id),
    )
    add_entry(
        dev.mem.db,
        MISTAKES,
        WEB,
        {"category": "wrong-file", "description": "edited the built bundle", "correction": "edit src/session.ts"},
        files=["src/session.ts"],
        scope=ValidityScope(),
        episode_id=later.id,
    )


def local_ids(dev: Dev, project: ProjectRef) -> list[str]:
    return [r[0] for r in dev.mem.db.query("SELECT id FROM episodes WHERE project_id = ?", (project.id,))]


def test_teammates_memory_arrives_with_its_author_and_utility_merges(devs: Callable[..., Dev], team: Team) -> None:
    alice, bob = devs("alice", WEB), devs("bob", WEB)
    mine = alice.mem.store.add(episode(WEB, "Login redirect loop fixed by clearing the stale session cookie"))
    alice.mem.store.add(episode(OPS, "Rotated the staging TLS certificate"))  # not shared: never leaves
    assert sync(alice, "push")["episodes"] == 1
    assert team.rows("episodes") == 1

    assert sync(bob, "pull")["episodes"] == 1
    theirs = bob.mem.store.get(mine.id)
    assert theirs.source.author == alice.role and theirs.summary == mine.summary
    assert sync(bob, "push")["episodes"] == 0  # a pulled episode is never pushed back

    bob.mem.feedback("helpful", [mine.id])
    bob.mem.feedback("helpful", [mine.id])
    assert sync(bob, "push")["evidence"] == 2
    assert sync(alice, "pull")["evidence"] == 2
    assert alice.mem.store.get(mine.id).utility.value == pytest.approx(0.75)  # Beta(1 + 2, 1 + 0)
    assert sync(alice, "sync") == {
        "episodes": 0,
        "evidence": 0,
        "links": 0,
        "log_entries": 0,
        "facts": 0,
        "tombstones": 0,
    }
    assert sync(bob, "pull")["evidence"] == 0  # its own rows never come back
    assert bob.mem.store.get(mine.id).utility.value == pytest.approx(0.75)

    # session links and the self-improvement logs travel too, once each
    later = alice.mem.store.add(episode(WEB, "Session cookie now rotates on login"))
    link_and_log(alice, later, mine)
    assert sync(alice, "push") == {
        "tombstones": 0,
        "episodes": 1,
        "evidence": 0,
        "links": 1,
        "mistakes": 1,
        "should_have_asked": 0,
        "facts": 0,
    }
    assert sync(bob, "pull") == {
        "episodes": 1,
        "evidence": 0,
        "links": 1,
        "log_entries": 1,
        "facts": 0,
        "tombstones": 0,
    }
    assert sync(bob, "pull") == {
        "episodes": 0,
        "evidence": 0,
        "links": 0,
        "log_entries": 0,
        "facts": 0,
        "tombstones": 0,
    }
    assert bob.mem.db.one("SELECT relationship FROM episode_links WHERE src_id = ?", (later.id,))[0] == "continuation"
    assert bob.mem.db.query("SELECT correction, source FROM mistakes") == [("edit src/session.ts", "team")]
    assert bob.mem.db.query("SELECT path FROM selfimprove_files") == [("src/session.ts",)]
    assert sync(bob, "push")["mistakes"] == 0  # pulled rows are never pushed back

    # the vector travelled with the episode: bob's KNN finds it without embedding it again
    hits = bob.mem.retrieve("session cookie causes a redirect loop at login", project=WEB.id, mode="vector")
    assert hits and hits[0].episode.id == mine.id


def test_a_role_without_the_share_sees_nothing(devs: Callable[..., Dev], team: Team) -> None:
    alice = devs("alice", WEB)
    alice.mem.store.add(episode(WEB, "Checkout total rounds half-cents down"))
    alice.mem.feedback("helpful", [next(alice.mem.store.iter_episodes(WEB.id)).id])
    add_entry(
        alice.mem.db,
        MISTAKES,
        WEB,
        {"category": "wrong-file", "description": "edited the copy", "correction": "edit src/cart.py"},
        files=["src/cart.py"],
        scope=ValidityScope(),
    )
    pushed = sync(alice, "push")
    assert pushed["episodes"] == 1 and pushed["evidence"] == 1 and pushed["mistakes"] == 1

    carol = devs("carol", WEB, member_of=[OPS])  # a member of the team, but only of another project
    with pgdb.session(team.dsn(carol.role)) as conn:
        for table in ("episodes", "evidence", "links", "log_entries", "projects", "access"):
            visible = conn.execute(
                f"SELECT count(*) FROM tempera.{table} WHERE "
                + ("id" if table == "projects" else "project_id")
                + " = %s",
                (WEB.id,),
            )
            assert visible.fetchone()[0] == 0, table
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO tempera.episodes(id, project_id, origin, created_at, updated_at, summary, "
                "transferable, body, data) VALUES ('x', %s, 'm', now(), now(), 's', false, 'b', '{}')",
                (WEB.id,),
            )
        assert conn.execute("UPDATE tempera.episodes SET summary = 'vandalised'").rowcount == 0
    assert team.admin.execute("SELECT count(*) FROM tempera.episodes WHERE summary = 'vandalised'").fetchone()[0] == 0
    with pytest.raises(TeamError, match="not shared with role"):
        sync(carol, "push")  # opting in locally is not access: the database decides
    assert sync(carol, "pull")["episodes"] == 0 and local_ids(carol, WEB) == []


def test_connection_killed_mid_push_loses_and_doubles_nothing(devs: Callable[..., Dev], team: Team) -> None:
    alice, bob = devs("alice", WEB), devs("bob", WEB)
    alice.mem.store.add_many(
        [episode(WEB, f"Step {n}: tuned the retry backoff of the payment client") for n in range(50)]
    )
    # the server drops alice's connection while the third batch of ten is being inserted
    team.admin.execute("""
    CREATE FUNCTION tempera.drop_connection() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF (SELECT count(*) FROM tempera.episodes) >= 25 THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
        RETURN NEW;
    END $$;
    CREATE TRIGGER drop_connection AFTER INSERT ON tempera.episodes FOR EACH ROW
        EXECUTE FUNCTION tempera.drop_connection();
    """)
    with pytest.raises(TeamError, match="push failed"):
        sync(alice, "push", batch=10)
    assert team.rows("episodes") == 20  # two batches committed, the third rolled back with the connection
    assert alice.state.runs()["push"]["error"]
    team.admin.execute("DROP TRIGGER drop_connection ON tempera.episodes")

    assert sync(alice, "push", batch=10)["episodes"] == 30
    assert sync(bob, "pull", batch=7)["episodes"] == 50
    # cursors and push records lost after the team committed (a crash between the two) re-send rows that change
    # nothing
    alice.mem.db.execute("DELETE FROM team_cursors")
    alice.mem.db.execute("DELETE FROM team_pushed")
    assert sync(alice, "push", batch=10)["episodes"] == 50
    assert team.rows("episodes") == 50
    assert sync(bob, "pull")["episodes"] == 0
    assert sorted(local_ids(bob, WEB)) == sorted(local_ids(alice, WEB))
    assert alice.state.runs()["push"]["error"] is None


def test_eight_concurrent_syncs_converge(devs: Callable[..., Dev], team: Team) -> None:
    crew = [devs(f"m{n}", WEB) for n in range(8)]
    for n, dev in enumerate(crew):
        dev.mem.store.add_many([episode(WEB, f"member {n} note {k} about the cache warmer") for k in range(5)])
    start = threading.Barrier(len(crew))
    errors: list[BaseException] = []

    def run(dev: Dev) -> None:
        try:
            start.wait()
            for _ in range(2):
                sync(dev, batch=3)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(d,)) for d in crew]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    for dev in crew:
        sync(dev)  # whatever was committed after this member's last pull
    assert team.rows("episodes") == 40
    for dev in crew:
        ids = local_ids(dev, WEB)
        assert len(ids) == len(set(ids)) == 40


def test_paused_project_pushes_nothing(devs: Callable[..., Dev], team: Team) -> None:
    alice = devs("alice", WEB)
    alice.mem.store.add(episode(WEB, "Paused work on the invoice exporter"))
    pause.pause(WEB.id, WEB.name, None, alice.data_dir)
    link = alice.state.require_link()
    with pgdb.session(link.dsn) as conn:
        report = TeamSync(alice.mem, conn).push()
    assert report.skipped == {WEB.id: "paused"} and sum(report.pushed.values()) == 0
    assert team.rows("episodes") == 0 and team.rows("evidence") == 0
    pause.resume(WEB.id, alice.data_dir)
    assert sync(alice, "push")["episodes"] == 1


def test_redaction_runs_again_before_anything_leaves(devs: Callable[..., Dev], team: Team) -> None:
    alice = devs("alice", WEB)
    token = "ghp_" + "Zq7" * 12
    ep = episode(WEB, f"Deploy works again with GITHUB_TOKEN={token} <private>the on-call phone 5550199</private>")
    ep.project_path = "/home/alice/src/webshop"
    alice.mem.store.add(ep)  # stored as it came (a path into memory that missed redaction)
    alice.mem.feedback("helpful", [ep.id], evidence={"note": f"used {token}"})
    sync(alice, "push")
    dump = " ".join(
        r[0]
        for table in ("episodes", "evidence")
        for r in team.admin.execute(f"SELECT t::text FROM tempera.{table} t").fetchall()
    )
    assert "[REDACTED:github_token]" in dump and "[REDACTED:private]" in dump
    assert token not in dump and "5550199" not in dump and "/home/alice" not in dump


def test_the_secret_shapes_of_issue_40_never_leave(devs: Callable[..., Dev], team: Team) -> None:
    """Issue 40's shapes (curl -u, a --password-stdin pipeline, Slack xapp-, a password holding `@` and `/`, ...)
    in an episode stored as it came and in its evidence: not one is in any table of the team database, nor on the
    disk of a teammate who pulls them from a row an older client left unredacted."""
    shapes = [s for s in SECRETS if s[0] in PUSHED]
    assert len(shapes) == len(PUSHED)
    alice = devs("alice", WEB)
    ep = episode(WEB, "Deploy works again: " + " ; ".join(text for _, text, _ in shapes))
    alice.mem.store.add(ep)  # stored as it came (a path into memory that missed redaction)
    alice.mem.feedback("helpful", [ep.id], evidence={"note": " ; ".join(text for _, text, _ in shapes)})
    assert sync(alice, "push")["episodes"] == 1
    tables = [r[0] for r in team.admin.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'tempera'")]
    dump = " ".join(
        r[0] for table in tables for r in team.admin.execute(f"SELECT t::text FROM tempera.{table} t").fetchall()
    )
    assert "[REDACTED:" in dump
    assert [name for name, _, secret in shapes if secret in dump] == []

    # a teammate on an older version pushes what it could not redact: pulled, it is redacted here
    raw = "Deploy works again: " + " ; ".join(text for _, text, _ in shapes)
    team.admin.execute(
        "UPDATE tempera.episodes SET data = jsonb_set(data, '{summary}', to_jsonb(%s::text)), updated_at = now()",
        (raw,),
    )
    bob = devs("bob", WEB)
    assert sync(bob, "pull")["episodes"] == 1
    bob.mem.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    stored = stored_bytes(bob.data_dir)
    assert b"[REDACTED:" in stored
    assert [name for name, _, secret in shapes if secret.encode() in stored] == []


def test_keyword_and_vector_search_in_postgres(devs: Callable[..., Dev], team: Team) -> None:
    alice = devs("alice", WEB)
    alice.mem.store.add_many(
        [
            episode(WEB, "Flaky websocket reconnect fixed with jittered backoff"),
            episode(WEB, "Invoice PDF fonts embedded to fix missing glyphs"),
        ]
    )
    sync(alice, "push")
    ranked = team.admin.execute(
        "SELECT summary FROM tempera.episodes WHERE tsv @@ websearch_to_tsquery('english', %s) "
        "ORDER BY ts_rank_cd(tsv, websearch_to_tsquery('english', %s)) DESC",
        ("reconnecting websockets",) * 2,
    )
    assert [r[0] for r in ranked][:1] == ["Flaky websocket reconnect fixed with jittered backoff"]
    qvec = alice.mem.embedder.embed_one("the PDF shows boxes instead of letters")
    near = team.admin.execute("SELECT summary FROM tempera.episodes ORDER BY embedding <=> %s LIMIT 1", (qvec,))
    assert near.fetchone()[0].startswith("Invoice PDF")
    with team.admin.transaction():
        team.admin.execute("SET LOCAL enable_seqscan = off")  # two rows would be scanned; is the index usable?
        plan = " ".join(
            r[0]
            for r in team.admin.execute(
                "EXPLAIN SELECT id FROM tempera.episodes ORDER BY embedding <=> %s LIMIT 5", (qvec,)
            ).fetchall()
        )
    assert "episodes_hnsw" in plan


def test_the_memory_browser_names_and_filters_by_author(devs: Callable[..., Dev], team: Team) -> None:
    import httpx

    from tempera.ui.server import UiServer

    alice, bob = devs("alice", WEB), devs("bob", WEB)
    alice.mem.store.add(episode(WEB, "Alice tuned the search ranking weights"))
    bob.mem.store.add(episode(WEB, "Bob fixed the flaky upload test"))
    sync(alice, "push")
    sync(bob, "pull")
    server = UiServer(0, db_path=bob.mem.db.path)
    server.start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{server.launch.port}", timeout=30) as client:
            assert client.get(f"/?token={server.launch.token}").status_code == 303
            page = client.get("/timeline", params={"project": WEB.id}).text
            assert f"by teammate {alice.role}" in page and "Bob fixed" in page and 'id="author-filter"' in page
            theirs = client.get("/timeline", params={"project": WEB.id, "author": alice.role}).text
            assert "Alice tuned" in theirs and "Bob fixed" not in theirs
            own = client.get("/timeline", params={"project": WEB.id, "author": "me"}).text
            assert "Bob fixed" in own and "Alice tuned" not in own
    finally:
        server.stop()


def test_an_episode_imported_after_a_push_is_pushed_whatever_its_times(devs: Callable[..., Dev], team: Team) -> None:
    """An import after a push stores episodes with their old sessions' times; they are pushed all the same."""
    alice = devs("alice", WEB)
    alice.mem.store.add(episode(WEB, "Checkout totals round half up since today"))
    assert sync(alice, "push")["episodes"] == 1
    old = episode(WEB, "Imported: the invoice exporter writes UTF-8 with a BOM for Excel")
    old.created_at = old.updated_at = datetime(2025, 3, 1, tzinfo=timezone.utc)
    alice.mem.store.add(old)
    assert sync(alice, "push")["episodes"] == 1
    assert team.rows("episodes") == 2
    assert sync(alice, "push")["episodes"] == 0  # nothing is sent twice


def test_a_revoked_member_gets_nothing_more_and_loses_nothing_of_their_own(
    devs: Callable[..., Dev], team: Team
) -> None:
    """Access taken away between two syncs: the member's pull brings nothing new, their push is refused by the
    database with a clear error, and what they had (their own and what they pulled before) stays."""
    alice, bob = devs("alice", WEB), devs("bob", WEB)
    alice.mem.store.add(episode(WEB, "Checkout totals round half up since the finance review"))
    bob.mem.store.add(episode(WEB, "The payment client retries twice with jitter"))
    assert sync(alice, "push")["episodes"] == 1
    assert sync(bob)["episodes"] == 1  # bob's sync pulled alice's episode
    team.admin.execute("DELETE FROM tempera.access WHERE member = %s", (bob.role,))
    alice.mem.store.add(episode(WEB, "Invoices export as UTF-8 with a BOM for Excel"))
    assert sync(alice, "push")["episodes"] == 1
    before = sorted(local_ids(bob, WEB))
    assert sync(bob, "pull")["episodes"] == 0
    bob.mem.store.add(episode(WEB, "Refunds post to the ledger the next day"))
    with pytest.raises(TeamError, match="not shared with role"):
        sync(bob, "push")
    assert bob.state.runs()["push"]["error"]
    assert set(before) < set(local_ids(bob, WEB)) and len(local_ids(bob, WEB)) == 3
    assert team.rows("episodes", WEB.id) == 3  # alice's two and bob's one from before the revocation


def test_a_pull_killed_mid_way_loses_and_doubles_nothing(devs: Callable[..., Dev], team: Team) -> None:
    """The server drops bob's connection while he reads the 26th episode (a restrictive row policy that ends his
    backend): what was applied stays, with its cursor; the next pull brings exactly the rest."""
    alice, bob = devs("alice", WEB), devs("bob", WEB)
    alice.mem.store.add_many(
        [episode(WEB, f"Step {n}: tuned the retry backoff of the payment client") for n in range(50)]
    )
    assert sync(alice, "push")["episodes"] == 50
    team.admin.execute(f"""
    CREATE SEQUENCE tempera.rows_read;
    CREATE FUNCTION tempera.end_after_rows() RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER AS $$
    BEGIN
        IF nextval('tempera.rows_read') > 25 THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
        RETURN true;
    END $$;
    CREATE POLICY end_mid_pull ON tempera.episodes AS RESTRICTIVE FOR SELECT TO {bob.role}
        USING (tempera.end_after_rows());
    """)
    with pytest.raises(TeamError, match="pull failed"):
        sync(bob, "pull", batch=7)
    got = len(local_ids(bob, WEB))
    assert 0 < got < 50, got
    assert bob.state.runs()["pull"]["error"]
    team.admin.execute("DROP POLICY end_mid_pull ON tempera.episodes")
    assert sync(bob, "pull", batch=7)["episodes"] == 50 - got
    assert sorted(local_ids(bob, WEB)) == sorted(local_ids(alice, WEB))
    assert bob.state.runs()["pull"]["error"] is None
