"""The one way tests run the `tempera` command: `python -m tempera.cli`, a process of its own running `main()` as
the console script does (umask 077, domain errors as one line and exit code 1), so what a test sees is what a
user's shell sees. In-process runners (click's CliRunner, calling the group) skip `main()` and share the test's
process state; the installed console script is the same `main()` behind a PATH lookup."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import click

TEMPERA = [sys.executable, "-m", "tempera.cli"]


def tempera(
    *args: str,
    cwd: Path | None = None,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 180,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`tempera ARGS`; `env` is the whole environment (default: the test's, with its data dir); `check`: fail on a
    non-zero exit."""
    done = subprocess.run(
        [*TEMPERA, *args], cwd=cwd, input=input, capture_output=True, text=True, timeout=timeout, env=env
    )
    if check:
        assert done.returncode == 0, f"tempera {' '.join(args)} exited {done.returncode}: {done.stderr}"
    return done


def command_tree() -> Iterator[tuple[list[str], click.Command]]:
    """Every command and group of `tempera` with the words that run it (`["learn", "explain"]`), depth first."""
    from tempera.cli import cli

    def walk(group: click.Group, prefix: list[str]) -> Iterator[tuple[list[str], click.Command]]:
        for name, command in group.commands.items():
            yield [*prefix, name], command
            if isinstance(command, click.Group):
                yield from walk(command, [*prefix, name])

    return walk(cli, [])


def command_path(command: click.Command) -> list[str]:
    """The words that run `command`, wherever the tree puts it, so a test walking a module's COMMANDS does not
    restate the grouping."""
    found = [path for path, c in command_tree() if c is command]
    assert found, f"{command.name} is not in the tempera command tree"
    return found[0]
