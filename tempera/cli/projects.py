"""`tempera projects`: the projects memory knows, how each is identified, and merging one into another."""

from __future__ import annotations

import os
from typing import Any

import click

from tempera.cli.common import emit, json_option, open_memory
from tempera.core.errors import NotFound
from tempera.core.project import ProjectRef, identify

HOW = {
    "commit": "root commit",
    "remote": "origin remote",
    "path": "repository path",
    "directory": "directory",
    "elsewhere": "path not on this machine",
    "name": "name only",
}


def listing(mem: Any) -> list[dict[str, Any]]:
    """Every project with its episode count, the checkouts its episodes came from and how its path identifies it."""
    checkouts: dict[str, list[str]] = {}
    for project_id, path in mem.db.query(
        "SELECT DISTINCT project_id, json_extract(data, '$.project_path') FROM episodes ORDER BY 1, 2"
    ):
        if path:
            checkouts.setdefault(project_id, []).append(path)
    out = []
    for p in mem.store.projects():
        paths = list(dict.fromkeys(([p["path"]] if p["path"] else []) + checkouts.get(p["id"], [])))
        kind, key = ("name", None) if not p["path"] else ("elsewhere", None)
        if p["path"] and os.path.isdir(p["path"]):
            identity = identify(p["path"])
            kind, key = identity.kind, identity.key
        out.append({**p, "paths": paths, "identified_by": kind, "key": key})
    return out


def _render_listing(rows: list[dict[str, Any]]) -> None:
    if not rows:
        click.echo("No projects yet: memory fills as Claude Code works in a directory (or `tempera capture`).")
        return
    width = max(len(r["name"]) for r in rows)
    click.echo(f"{'ID':<10}{'NAME':<{width + 2}}{'EPISODES':>8}  {'IDENTIFIED BY':<26}PATHS")
    for r in rows:
        how = HOW[r["identified_by"]] + (f" {r['key'][:10]}" if r["identified_by"] == "commit" else "")
        click.echo(
            f"{r['id'][:8]:<10}{r['name']:<{width + 2}}{r['episodes']:>8}  {how:<26}{', '.join(r['paths']) or '-'}"
        )


@click.group(invoke_without_command=True)
@json_option
@click.pass_context
def projects(ctx: click.Context, as_json: bool) -> None:
    """List the projects in memory: id, name, episodes, the checkouts they came from and how the project is
    identified. Worktrees and clones of one repository are one project, known by the repository's root commit
    (else its origin remote, else its path); a directory outside any repository is a project of its own."""
    if ctx.invoked_subcommand is None:
        with open_memory(use_model=False) as mem:
            emit(listing(mem), as_json, _render_listing)


def _known(mem: Any, spec: str) -> ProjectRef:
    ref: ProjectRef = mem.store.resolve_project(spec)
    if mem.db.one("SELECT 1 FROM projects WHERE id = ?", (ref.id,)) is None:
        raise NotFound(f"{spec!r} is not a project in memory yet; `tempera projects` lists them")
    return ref


def _render_merge(r: dict[str, Any]) -> None:
    verb = "Merged" if r["executed"] else "Would merge (dry run)"
    click.echo(
        f"{verb} {r['source_name']} ({r['source'][:8]}) into {r['target_name']} ({r['target'][:8]})"
        + (":" if r["counts"] else ": nothing to move")
    )
    for label, n in r["counts"].items():
        click.echo(f"  {n:>7}  {label}")
    for label, n in r["dropped"].items():
        click.echo(f"  {n:>7}  {label} dropped: the target had one for the same slot")
    if r.get("team"):
        click.echo(f"Team: {r['team']}.")


@projects.command("merge")
@click.argument("source")
@click.argument("target")
@click.option("--dry-run", is_flag=True, help="Only count what would move.")
@json_option
def merge(source: str, target: str, dry_run: bool, as_json: bool) -> None:
    """Move everything of project SOURCE into project TARGET (each a path, name or id prefix): episodes with their
    vectors and search index, self-improvement logs, injections, calibration, dream records, stances and a pause.
    SOURCE is gone afterwards. For what identity cannot join by itself, e.g. a repository whose history was
    rewritten, or captures made by name; new captures still go to the project of the directory they are made in.

    \b
    tempera projects merge ~/old/webshop ~/src/webshop --dry-run
    tempera projects merge 3f2a9c1b webshop
    """
    from tempera.core.project_merge import merge_projects

    from tempera.team.local import TeamState

    with open_memory(use_model=False) as mem:
        src, dst = _known(mem, source), _known(mem, target)
        state = TeamState(mem.db)
        shared = state.link() is not None and src.id in state.shared()
        report = merge_projects(mem.db, src.id, dst.id, dry_run=dry_run)
    team = (
        (
            f"{src.name} is shared with the team: after the merge {dst.name} is, and the next push moves the "
            f"team's rows of {src.name} to {dst.name} (teammates who still have {src.name} are told to run the same "
            "merge)"
        )
        if shared
        else None
    )
    emit(report.as_dict() | {"source_name": src.name, "target_name": dst.name, "team": team}, as_json, _render_merge)


COMMANDS = [projects]
