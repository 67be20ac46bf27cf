"""Shared CLI plumbing: opening memory, JSON/text output, and turning domain errors into exit code 1."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click
from pydantic import ValidationError

from tempera.core.errors import TemperaError

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
project_option = click.option(
    "--project", "-p", default=None, help="Project path, name or id (default: the current directory's project)."
)
all_projects_option = click.option(
    "--project", "-p", default=None, help="Limit to one project (path, name or id); default: every project."
)


def run_guarded(group: click.Group) -> int:
    """Run the click group; expected errors print one line on stderr and exit 1."""
    try:
        group.main(standalone_mode=False)
        return 0
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 1
    except click.ClickException as exc:
        exc.show()
        return 1 if exc.exit_code == 2 else exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except TemperaError as exc:
        click.echo(f"Error: {exc}", err=True)
        return 1
    except ValidationError as exc:
        click.echo(f"Error: {validation_message(exc)}", err=True)
        return 1
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a full or read-only disk is the user's to fix: one line; anything else is a bug
        from tempera.core.db import storage_error

        error = storage_error(exc)
        if error is None:
            raise
        click.echo(f"Error: {error}", err=True)
        return 1


def validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "input"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def open_memory(*, use_model: bool = True) -> Any:
    from tempera.core.memory import Memory

    return Memory(use_model=use_model)


def emit(data: Any, as_json: bool, render: Callable[[Any], None]) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, default=str, ensure_ascii=False))
    else:
        render(data)


def read_stdin_text(limit: int = 64 * 1024 * 1024) -> str:
    data = sys.stdin.read(limit + 1)
    if len(data) > limit:
        raise click.ClickException(f"stdin is larger than {limit // (1024 * 1024)} MB")
    return data
