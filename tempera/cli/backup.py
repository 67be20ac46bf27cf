"""`tempera memory backup`: snapshot the database, list the snapshots, restore one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from tempera.cli.common import emit, json_option
from tempera.core import backup as backups
from tempera.core import paths


def known_migrations() -> list[str]:
    """Every migration this version can apply: a backup with any other was written by a newer Tempera."""
    from tempera.core.migrations import MIGRATIONS
    from tempera.dream.schema import MIGRATIONS as DREAM_MIGRATIONS
    from tempera.facts.schema import MIGRATIONS as FACT_MIGRATIONS
    from tempera.team.local import MIGRATIONS as TEAM_MIGRATIONS
    from tempera.transcripts.schema import MIGRATIONS as CAPTURE_MIGRATIONS

    return [
        name for name, _ in [*MIGRATIONS, *CAPTURE_MIGRATIONS, *DREAM_MIGRATIONS, *FACT_MIGRATIONS, *TEAM_MIGRATIONS]
    ]


@click.command()
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--keep",
    type=int,
    default=backups.DEFAULT_KEEP,
    show_default=True,
    help="Backups to keep in the backups folder; older ones are deleted (not with PATH).",
)
@click.option("--list", "list_only", is_flag=True, help="List the backups in the backups folder, oldest first.")
@click.option(
    "--restore",
    "restore_from",
    metavar="FILE",
    default=None,
    help="Restore this backup (a file, or a name or timestamp from --list) over the current database.",
)
@click.option("--yes", "-y", is_flag=True, help="Restore without asking.")
@json_option
def backup(path: Path | None, keep: int, list_only: bool, restore_from: str | None, yes: bool, as_json: bool) -> None:
    """Snapshot the database (SQLite's online backup API: safe while the daemon runs) into PATH, or into a
    timestamped file in the data dir's backups folder, owner-only (0600).

    --restore checks the file first (integrity_check, and a schema this version knows), stops the daemon, keeps
    the current database aside in the backups folder (before-restore-*; broken-* as it was, unread, when it is
    damaged), then restores. Backups keep what
    `tempera forget` deletes later: delete old ones yourself when that matters.

    \b
    tempera memory backup
    tempera memory backup --list
    tempera memory backup --restore 20260524T123456Z
    """
    if list_only:
        rows = [{"path": str(b.path), "created": b.created, "bytes": b.size} for b in backups.listing()]
        emit(rows, as_json, _render_list)
    elif restore_from is not None:
        _restore(backups.resolve(restore_from), yes, as_json)
    else:
        from tempera.core.migrations import connect

        db = connect()
        try:
            target = backups.create(db, path, keep=keep)
        finally:
            db.close()
        out = {"path": str(target), "bytes": target.stat().st_size}
        emit(
            out,
            as_json,
            lambda o: click.echo(f"backed up {paths.db_path()} to {o['path']} ({o['bytes'] / 1e6:.1f} MB)"),
        )


def _restore(source: Path, yes: bool, as_json: bool) -> None:
    from tempera.cli.daemon import daemon_lock_held, stop_daemon

    known = known_migrations()
    backups.check(source, known)  # before stopping anything
    if not yes:
        click.confirm(f"Replace {paths.db_path()} with {source}? (the current one is kept aside)", abort=True)
    stopped = stop_daemon()
    with daemon_lock_held():
        aside = backups.restore(source, paths.db_path(), known)
    out = {
        "restored": str(source),
        "database": str(paths.db_path()),
        "kept_aside": str(aside) if aside else None,
        "daemon_stopped": stopped,
    }
    emit(out, as_json, _render_restore)


def _render_list(rows: list[dict[str, Any]]) -> None:
    if not rows:
        click.echo(f"no backups in {backups.backups_dir()} (make one with `tempera memory backup`)")
    for r in rows:
        click.echo(f"{r['created']}  {r['bytes'] / 1e6:8.1f} MB  {r['path']}")


def _render_restore(o: dict[str, Any]) -> None:
    click.echo(f"restored {o['database']} from {o['restored']}")
    if o["kept_aside"]:
        click.echo(f"the database as it was is kept in {o['kept_aside']}")
    if o["daemon_stopped"]:
        click.echo("the daemon was stopped; the next hook starts it again (or `tempera daemon start`)")


COMMANDS = [backup]
