"""`tempera team`: share a project's memory with teammates through the team's PostgreSQL + pgvector."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import click

from tempera.cli.common import emit, json_option, open_memory, project_option


def _service() -> ModuleType:
    """The team service, or a clean error when the optional `team` extra is not installed."""
    try:
        from tempera.team import service
    except ImportError as exc:
        raise click.ClickException(
            f"team memory needs the `team` extra: pip install 'tempera-memory[team]' ({exc.name} is missing)"
        ) from exc
    return service


@click.group()
def team() -> None:
    """Team memory on your own PostgreSQL + pgvector. Hooks keep reading only the local store; the daemon pushes
    the shared projects' episodes, evidence, links and corrections, and pulls teammates' (every team.sync_seconds).

    \b
    DBA, once:      tempera team init 'host=db.example dbname=team user=owner'
                    tempera team member-sql alice --project ~/src/webshop | psql ...
    Each member:    tempera team connect 'host=db.example dbname=team user=alice' --project ~/src/webshop
    """


@team.command("init")
@click.argument("dsn")
def init(dsn: str) -> None:
    """(DBA) Create or upgrade the team schema in DSN's database: the pgvector extension, tables, indexes, the
    tempera_member group role and the row-level security policies. Run as the database owner; idempotent."""
    _service()
    from tempera.team import pgdb

    with pgdb.session(dsn) as conn:  # the DBA's DSN is not stored, so it may hold a password
        applied = pgdb.apply_migrations(conn)
    click.echo(f"Applied {', '.join(applied)}." if applied else "The team schema is current.")


@team.command("member-sql")
@click.argument("role")
@click.option(
    "--project", "-p", "projects", multiple=True, help="A project to give ROLE (path, name or id; repeatable)."
)
@click.option("--database", default=None, help="Also GRANT CONNECT on this database.")
def member_sql(role: str, projects: tuple[str, ...], database: str | None) -> None:
    """(DBA) Print the SQL that adds ROLE as a member and gives it PROJECTs; Tempera never runs it. Pipe it into
    psql as the database owner, then set the role's password (or certificate) outside the script."""
    from tempera.team.access import member_sql as render

    with open_memory(use_model=False) as mem:
        refs = [mem.store.projects.resolve(p) for p in projects]
    click.echo(render(role, refs, database=database), nl=False)


@team.command("connect")
@click.argument("dsn")
@project_option
@json_option
def connect(dsn: str, project: str | None, as_json: bool) -> None:
    """Link this data dir to the team database DSN (libpq keywords or a URL; no password: keep it in ~/.pgpass,
    PGPASSWORD or a service file; TLS options pass through). With --project, share that project as well."""
    service = _service()
    with open_memory(use_model=False) as mem:
        ref = mem.store.projects.resolve(project) if project else None
        out = service.connect(mem, dsn, ref)
    emit(
        out,
        as_json,
        lambda d: click.echo(f"Connected to {d['database']} as {d['member']}; shared projects: {len(d['shared'])}."),
    )


@team.command("share")
@click.argument("project", required=False)
def share(project: str | None) -> None:
    """Share PROJECT (path, name or id; default: the current directory's) with the team: its episodes, direct
    evidence, session links and corrections are pushed, and teammates' are pulled. A paused project pushes
    nothing until resumed."""
    service = _service()
    with open_memory(use_model=False) as mem:
        ref = mem.store.projects.resolve(project)
        how = service.share(mem, ref)
    click.echo(
        f"{'Added' if how == 'created' else 'Sharing'} {ref.name} ({ref.id[:8]})"
        f"{' to the team' if how == 'created' else ' with the team'}."
    )


@team.command("unshare")
@click.argument("project", required=False)
def unshare(project: str | None) -> None:
    """Stop syncing PROJECT (default: the current directory's). What was pushed stays in the team database (the
    DBA removes it); what was pulled stays here."""
    from tempera.team.local import TeamState

    with open_memory(use_model=False) as mem:
        ref = mem.store.projects.resolve(project)
        was = TeamState(mem.db).unshare(ref.id)
    click.echo(f"Stopped sharing {ref.name}." if was else f"{ref.name} was not shared.")


def _render_report(direction: str) -> Any:
    def render(d: dict[str, Any]) -> None:
        parts = [
            f"{side} " + ", ".join(f"{n} {k}" for k, n in d[side].items() if n)
            for side in ("pushed", "pulled")
            if any(d[side].values())
        ]
        click.echo(f"team {direction}: " + ("; ".join(parts) if parts else "nothing new") + ".")
        for pid, why in d["skipped"].items():
            click.echo(f"  skipped {pid[:8]}: {why}")

    return render


def _run(direction: str, as_json: bool) -> None:
    service = _service()
    with open_memory() as mem:
        report = service.run(mem, direction)
    emit(
        {"pushed": report.pushed, "pulled": report.pulled, "skipped": report.skipped},
        as_json,
        _render_report(direction),
    )


@team.command("push")
@json_option
def push(as_json: bool) -> None:
    """Push this machine's new memory of the shared projects now (the daemon does this every team.sync_seconds)."""
    _run("push", as_json)


@team.command("pull")
@json_option
def pull(as_json: bool) -> None:
    """Pull teammates' new memory of the shared projects now (the daemon does this every team.sync_seconds)."""
    _run("pull", as_json)


def _render_status(d: dict[str, Any]) -> None:
    if not d["connected"]:
        click.echo("Not connected to a team (tempera team connect DSN).")
        return
    click.echo(f"Team database {d['database']} as {d['member']} (machine {d['machine'][:8]})")
    team_counts = d.get("team", {})
    for p in d["projects"]:
        remote = team_counts.get(p["id"], {})
        waiting = p["tombstones_waiting"]
        click.echo(
            f"  {p['name']} ({p['id'][:8]}){' PAUSED: pushes nothing' if p['paused'] else ''}: "
            f"{p['own']} own, {p['pulled']} pulled here; {p['facts_pushed']} facts pushed, {p['facts_pulled']} pulled"
            + (f"; {waiting} tombstone{'s' if waiting != 1 else ''} waiting for the next push" if waiting else "")
            + f"; team has {remote.get('episodes', 0)} episodes, {remote.get('facts', 0)} facts, "
            f"{remote.get('tombstones', 0)} tombstones"
        )
    for direction, r in sorted(d["runs"].items()):
        lag = f", last success {r['lag_seconds']}s ago" if r["lag_seconds"] is not None else ", never succeeded"
        click.echo(
            f"  last {direction}: {r['finished_at'] or 'running'} ({r['rows']} rows{lag})"
            + (f" ERROR: {r['error']}" if r["error"] else "")
        )
    if d.get("team_error"):
        click.echo(f"  team database unreachable: {d['team_error']}")


@team.command("status")
@json_option
def status(as_json: bool) -> None:
    """Show the link, the shared projects (own and pulled episodes and facts, tombstones waiting to be sent, the
    team's episodes, facts and tombstones), the last push and pull with their lag and errors."""
    service = _service()
    with open_memory(use_model=False) as mem:
        emit(service.status(mem), as_json, _render_status)


@team.command("disconnect")
def disconnect() -> None:
    """Forget the team link, shares and cursors. Pulled memory stays in the local store."""
    from tempera.team.local import TeamState

    with open_memory(use_model=False) as mem:
        TeamState(mem.db).disconnect()
    click.echo("Disconnected from the team.")


COMMANDS = [team]
