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

# Commands a user runs by hand now and then sit in a group named for what they act on, as `llm models …` or
# `sqlite-utils indexes …` do; every command not named here stays at the top: the everyday ones (init, install,
# import, retrieve, capture, feedback, forget, pause, resume, status, doctor, ui) and the groups that were already
# nouns (config, models, daemon, projects, facts, team, eval).
GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "memory": (
        "The stored episodes as a whole: counts, vectors, export, backups, an episode's validity scope.",
        ("stats", "index", "export", "backup", "scope"),
    ),
    "learn": (
        "The learning loop by hand: why an episode ranks where it does, feedback propagation, decay, verification, "
        "review and pruning, trends, the dream cycle and its phases, refits of the gate and the fusion.",
        (
            "explain",
            "propagate",
            "decay",
            "advance-verification",
            "review",
            "prune",
            "trends",
            "dream",
            "reflect",
            "contradict",
            "refit-gate",
            "refit-fusion",
        ),
    ),
    "lessons": (
        "What the agent learned about working with you: corrections, questions it should have asked, ask-backs, "
        "the brief for a change, reasoning templates, calibration.",
        (
            "session-start",
            "brief",
            "mistakes",
            "log-correction",
            "asks",
            "log-should-have-asked",
            "ask-backs",
            "templates",
            "calibration",
        ),
    ),
}


def _register() -> None:
    commands = {
        command.name: command
        for name in COMMAND_MODULES
        for command in importlib.import_module(f"tempera.cli.{name}").COMMANDS
    }
    for group_name, (help_text, names) in GROUPS.items():
        cli.add_command(click.Group(group_name, help=help_text, commands=[commands.pop(n) for n in names]))
    for command in commands.values():
        cli.add_command(command)


_register()


def main() -> None:
    os.umask(0o077)  # memory holds code and prompts: files we create are owner-only
    sys.exit(run_guarded(cli))
