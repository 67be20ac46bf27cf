"""The `tempera` command. Domain errors become one-line messages with exit code 1, never tracebacks."""

from __future__ import annotations

import importlib
import os
import sys

import click

from tempera import __version__
from tempera.cli.common import run_guarded


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="tempera")
def cli() -> None:
    """Tempera: persistent, self-improving memory for Claude Code.

    Memory fills itself from Claude Code's hooks and transcripts; these commands inspect, search, teach and
    maintain it. Data lives in ~/.tempera (TEMPERA_DATA_DIR overrides).
    """


# the modules that each hold a `COMMANDS` list, named once (each is imported when the CLI starts)
COMMAND_MODULES = (
    "admin",
    "backup",
    "control",
    "daemon",
    "dream",
    "episodes",
    "evaluate",
    "facts",
    "install",
    "learning",
    "projects",
    "selfimprove",
    "team",
    "transcripts",
    "ui",
)


def _register() -> None:
    for name in COMMAND_MODULES:
        for command in importlib.import_module(f"tempera.cli.{name}").COMMANDS:
            cli.add_command(command)


_register()


def main() -> None:
    os.umask(0o077)  # memory holds code and prompts: files we create are owner-only
    sys.exit(run_guarded(cli))
