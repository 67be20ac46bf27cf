"""Commands that control what memory keeps: forget, export, pause and resume (the browser has the same controls)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from tempera.cli.common import emit, json_option, open_memory
from tempera.core import export as exporting
from tempera.core import forget as forgetting
from tempera.core import pause as pausing


def _render_report(report: dict[str, Any]) -> None:
    counts = report["counts"]
    if counts:
        click.echo(f"{'Forgot' if report['executed'] else 'Would forget'} {report['what']}:")
        for label, n in counts.items():
            click.echo(f"  {n:>7}  {label}")
    else:
        click.echo(f"Nothing to forget for {report['what']}.")
    if report["executed"]:
        click.echo(
            "The database file was vacuumed and its WAL truncated."
            if report["wiped"]
            else "Another process kept reading the database, so its WAL still holds old pages: run "
            "`tempera daemon stop`, then this command again, to finish the wipe."
        )


@click.command()
@click.argument("what", type=click.Choice(forgetting.KINDS))
@click.argument("value")
@click.option("--project", "-p", default=None, help="With `before`: only this project (default: every project).")
@click.option("--dry-run", is_flag=True, help="Only count what would be forgotten.")
@click.option("--yes", "-y", is_flag=True, help="Forget without asking.")
@json_option
def forget(what: str, value: str, project: str | None, dry_run: bool, yes: bool, as_json: bool) -> None:
    """Forget an episode, a session, a project or everything before a date, with everything derived from it
    (vectors, search index, links, feedback, injections, facts it produced, self-improvement rows). The text is
    not recoverable from the database file afterwards.

    \b
    tempera forget episode 1a2b3c4d --dry-run
    tempera forget session 5f0e...-session-id --yes
    tempera forget project ~/src/webshop --yes
    tempera forget before 2026-01-01 [--project webshop] --yes
    """
    with open_memory(use_model=False) as mem:
        sel = forgetting.selector(mem.store, what, value, project)
        report = forgetting.plan(mem.db, sel)
        if dry_run or not (any(report.counts.values()) or yes):
            emit(report.as_dict(), as_json, _render_report)
            return
        if not yes:
            _render_report(report.as_dict())
            click.confirm("Forget all of this? It cannot be undone", abort=True)
        from tempera.team.local import forget as forget_shared

        report = forget_shared(mem.db, sel)  # with nothing left to delete, this still re-runs the wipe
    emit(report.as_dict(), as_json, _render_report)


@click.command("export")
@click.option("--format", "fmt", type=click.Choice(exporting.FORMATS), default="jsonl", show_default=True)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="File to write (default: stdout).",
)
@click.option("--project", "-p", default=None, help="Only this project's episodes (facts are then left out).")
@click.option("--no-facts", is_flag=True, help="Leave the fact graph out.")
def export_cmd(fmt: str, output: Path | None, project: str | None, no_facts: bool) -> None:
    """Export episodes and the fact graph's history as JSON lines or markdown."""
    from tempera.facts.memory_export import export

    with open_memory(use_model=False) as mem:
        if output is None:
            counts = export(mem, sys.stdout, fmt, project=project, facts=not no_facts)
        else:
            with output.open("w", encoding="utf-8") as fh:
                counts = export(mem, fh, fmt, project=project, facts=not no_facts)
    click.echo(
        f"exported {counts.episodes} episodes and {counts.facts} fact events" + (f" to {output}" if output else ""),
        err=True,
    )


def _render_paused(rows: list[dict[str, Any]]) -> None:
    if not rows:
        click.echo("Capture is not paused for any project.")
    for r in rows:
        click.echo(f"paused since {r['since'][:19]}  {r['name']}  ({r['id'][:8]}, {r['path'] or 'no path'})")


@click.command()
@click.argument("project", required=False)
@click.option("--list", "list_only", is_flag=True, help="List paused projects.")
@json_option
def pause(project: str | None, list_only: bool, as_json: bool) -> None:
    """Pause capture for a project (default: the current directory's): its hooks inject nothing and capture
    nothing, and the daemon skips its capture jobs, until `tempera resume`."""
    if list_only:
        emit([{"id": k, **v} for k, v in pausing.paused_projects().items()], as_json, _render_paused)
        return
    with open_memory(use_model=False) as mem:
        ref, record = pausing.pause_project(mem.store, project)
    emit({"id": ref.id, **record}, as_json, lambda r: click.echo(f"capture paused for {r['name']} ({r['id'][:8]})"))


@click.command()
@click.argument("project", required=False)
@json_option
def resume(project: str | None, as_json: bool) -> None:
    """Resume capture for a project; turns made while it was paused stay uncaptured."""
    from tempera.transcripts.resume import resume_project

    with open_memory(use_model=False) as mem:
        ref, record, moved = resume_project(mem, project)
    out = {"id": ref.id, "name": ref.name, "was_paused": record is not None, "transcripts_skipped": moved}
    emit(
        out,
        as_json,
        lambda r: click.echo(
            f"capture resumed for {r['name']}"
            + (
                f"; skipped what {r['transcripts_skipped']} transcript(s) recorded while paused"
                if r["transcripts_skipped"]
                else ""
            )
            if r["was_paused"]
            else f"capture was not paused for {r['name']}"
        ),
    )


@click.command()
@click.argument("episode")
@click.argument("scope")
@json_option
def scope(episode: str, scope: str, as_json: bool) -> None:
    """Change an episode's validity scope: project (stays in its project), forever, language:X, crate:X@V,
    domain:X or workaround:REF[@YYYY-MM-DD]. The scope sets how fast it fades and whether other projects see it."""
    with open_memory() as mem:
        ep = mem.store.set_scope(episode, scope)
    emit(
        {"id": ep.id, "scope": str(ep.scope), "transferable": ep.scope.transferable},
        as_json,
        lambda r: click.echo(
            f"{r['id'][:8]}  scope now {r['scope']}" + (" (other projects may see it)" if r["transferable"] else "")
        ),
    )


COMMANDS = [forget, export_cmd, pause, resume, scope]
