"""`tempera install` and `tempera uninstall`: register Tempera with Claude Code, or take it out again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from tempera.cli.common import emit, json_option
from tempera.installer import SCOPES, Scope, apply_all, plan_install, plan_uninstall
from tempera.installer.changes import FileChange


def _common_options(fn: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(
        [
            click.option(
                "--scope",
                type=click.Choice(SCOPES),
                default="user",
                show_default=True,
                help="user: ~/.claude/settings.json and ~/.claude.json (CLAUDE_CONFIG_DIR is honoured); "
                "project: <project>/.claude/settings.json and <project>/.mcp.json.",
            ),
            click.option(
                "--project-dir",
                type=click.Path(file_okay=False, path_type=Path),
                default=None,
                help="Project root for --scope project (default: the git root of the current directory, "
                "or the directory itself).",
            ),
            click.option("--dry-run", is_flag=True, help="Print a unified diff per file and write nothing."),
            json_option,
        ]
    ):
        fn = option(fn)
    return fn


@click.command()
@_common_options
def install(scope: Scope, project_dir: Path | None, dry_run: bool, as_json: bool) -> None:
    """Add Tempera's hooks (SessionStart, UserPromptSubmit, Stop) and its MCP server to Claude Code.

    Merges into the existing files, keeps every other setting and hook, backs each file up before changing it,
    and changes nothing when Tempera is already installed.
    """
    _run(plan_install(scope, project_dir), scope, dry_run, as_json)


@click.command()
@_common_options
def uninstall(scope: Scope, project_dir: Path | None, dry_run: bool, as_json: bool) -> None:
    """Remove exactly Tempera's hooks and MCP server from Claude Code's files; everything else stays. When no
    scope has Tempera's hooks any more, the daemon is stopped too (its transcript watch would go on capturing)."""
    _run(plan_uninstall(scope, project_dir), scope, dry_run, as_json)
    if not dry_run and not _hooks_installed_anywhere(project_dir):
        _stop_daemon()


def _hooks_installed_anywhere(project_dir: Path | None) -> bool:
    from tempera.installer import installed_status

    for where in ("user", "project"):
        status = installed_status(where, project_dir if where == "project" else None)  # type: ignore[arg-type]
        if any(row["present"] for row in status["hooks"].values()):
            return True
    return False


def _stop_daemon() -> None:
    from tempera.core import paths
    from tempera.hooks.client import request

    if request(paths.data_dir(), {"op": "shutdown"}, timeout=2.0) is not None:
        click.echo("stopped the Tempera daemon (no hooks are installed any more)", err=True)


def _run(changes: list[FileChange], scope: Scope, dry_run: bool, as_json: bool) -> None:
    backups = {} if dry_run else {w.path: w.backup for w in apply_all(changes)}
    files = [
        {
            "path": str(c.path),
            "changed": c.changed,
            "created": c.changed and c.before is None,
            "backup": str(backups[c.path]) if backups.get(c.path) else None,
            "diff": c.diff() if dry_run else None,
        }
        for c in changes
    ]
    emit({"scope": scope, "dry_run": dry_run, "files": files}, as_json, _render)


def _render(report: dict[str, Any]) -> None:
    for f in report["files"]:
        if not f["changed"]:
            click.echo(f"unchanged {f['path']}")
        elif report["dry_run"]:
            click.echo(f["diff"], nl=False)
        else:
            click.echo(
                f"{'created' if f['created'] else 'updated'} {f['path']}"
                + (f" (backup: {f['backup']})" if f["backup"] else "")
            )
    if report["dry_run"]:
        click.echo("dry run: nothing was written")
    elif any(f["changed"] for f in report["files"]):
        click.echo("Claude Code reads these files at startup: restart running sessions to pick up the change.")


COMMANDS = [install, uninstall]
