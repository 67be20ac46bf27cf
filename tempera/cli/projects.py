"""`tempera projects`: the projects memory knows, how each is identified, and merging one into another."""

from __future__ import annotations

import os
from typing import Any

import click

from tempera.cli.common import emit, json_option, open_memory
from tempera.core.errors import InvalidInput, NotFound
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
    for p in mem.store.projects.listing():
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
    ref: ProjectRef = mem.store.projects.resolve(spec)
    if mem.db.one("SELECT 1 FROM projects WHERE id = ?", (ref.id,)) is None:
        raise NotFound(f"{spec!r} is not a project in memory yet; `tempera projects` lists them")
    return ref


def _target(mem: Any, spec: str, dry_run: bool) -> ProjectRef:
    """A project in memory, or a directory on this machine that holds none yet (a fresh clone of a repository whose
    history was imported from elsewhere): recorded as a project, unless this is a dry run."""
    import os

    if not os.path.isdir(os.path.expanduser(spec)):
        return _known(mem, spec)
    ref: ProjectRef = mem.store.projects.resolve(spec)
    return ref if dry_run else mem.store.projects.ensure(ref)


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
@click.argument("names", nargs=-1, required=True, metavar="SOURCE... TARGET")
@click.option("--dry-run", is_flag=True, help="Only count what would move.")
@json_option
def merge(names: tuple[str, ...], dry_run: bool, as_json: bool) -> None:
    """Move everything of each project SOURCE into project TARGET (each a path, name or id prefix; TARGET may be a
    directory that holds no memory yet, such as a fresh clone): episodes with their vectors and search index,
    self-improvement logs, injections, calibration, dream records, stances and a pause. The sources are gone
    afterwards. For what identity cannot join by itself, e.g. sessions imported from checkouts that are not on this
    machine, a repository whose history was rewritten, or captures made by name; new captures still go to the
    project of the directory they are made in.

    \b
    tempera projects merge ~/old/webshop ~/src/webshop --dry-run
    tempera projects merge 3f2a9c1b 7d0e11aa ~/src/webshop
    """
    from tempera.core.project_merge import merge_projects

    from tempera.team.local import TeamState

    if len(names) < 2:
        raise InvalidInput("give one or more SOURCE projects and then the TARGET, e.g. `projects merge 3f2a9c1b .`")
    with open_memory(use_model=False) as mem:
        sources = [_known(mem, name) for name in names[:-1]]
        dst = _target(mem, names[-1], dry_run)
        if len({s.id for s in sources}) < len(sources):
            raise InvalidInput("a project is named twice among the sources")
        state = TeamState(mem.db)
        merged = []
        for src in sources:
            shared = state.link() is not None and src.id in state.shared()
            report = merge_projects(mem.db, src.id, dst.id, dry_run=dry_run)
            team = (
                f"{src.name} is shared with the team: after the merge {dst.name} is, and the next push moves the "
                f"team's rows of {src.name} to {dst.name} (teammates who still have {src.name} are told to run the "
                "same merge)"
                if shared
                else None
            )
            merged.append(report.as_dict() | {"source_name": src.name, "target_name": dst.name, "team": team})
    emit(merged[0] if len(merged) == 1 else merged, as_json, _render_merges)


def _render_merges(result: dict[str, Any] | list[dict[str, Any]]) -> None:
    for r in result if isinstance(result, list) else [result]:
        _render_merge(r)


COMMANDS = [projects]
