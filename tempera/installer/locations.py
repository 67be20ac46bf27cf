"""Where Claude Code keeps hooks and MCP servers for each scope, and where our executables are."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tempera.core.errors import InvalidInput, TemperaError
from tempera.core.project import find_root
from tempera.installer.hookconfig import RELAY_FLAGS

Scope = Literal["user", "project"]
SCOPES: tuple[Scope, ...] = ("user", "project")


@dataclass(frozen=True)
class Targets:
    settings: Path  # settings.json that holds `hooks`
    mcp: Path  # the file that holds `mcpServers`


def claude_config_dir() -> Path:
    """~/.claude, or CLAUDE_CONFIG_DIR when set: Claude Code then reads everything from there instead."""
    override = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(override).expanduser() if override else Path.home() / ".claude"


def user_mcp_file() -> Path:
    """~/.claude.json; with CLAUDE_CONFIG_DIR set, Claude Code keeps that file inside that dir instead."""
    override = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(override).expanduser() / ".claude.json" if override else Path.home() / ".claude.json"


def targets(scope: Scope, project_dir: Path | None = None) -> Targets:
    """The two files one scope uses. The project is `project_dir` as given, else the git root of the cwd."""
    if scope == "user":
        if project_dir is not None:
            raise InvalidInput("--project-dir applies only to --scope project")
        return Targets(claude_config_dir() / "settings.json", user_mcp_file())
    root = Path(project_dir).absolute() if project_dir is not None else find_root(Path.cwd())
    return Targets(root / ".claude" / "settings.json", root / ".mcp.json")


def find_executable(name: str, bin_dir: Path | None = None, search_path: str | None = None) -> Path:
    """The absolute path of one of our console scripts: the one next to this Python first (the environment that is
    installing), else the first on PATH. `bin_dir` and `search_path` are for tests."""
    # not resolved: a venv's python is a symlink to the base interpreter, whose directory has no scripts of ours
    here = Path(sys.executable).parent if bin_dir is None else bin_dir
    # Windows: `<name>.exe`, beside a venv's python (Scripts\) or in Scripts\ of a python.org install
    windows = [here / f"{name}.exe", here / "Scripts" / f"{name}.exe"] if sys.platform == "win32" else []
    for candidate in (here / name, *windows):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate.absolute()
    found = shutil.which(name, path=search_path)
    if found:
        return Path(found).absolute()
    raise TemperaError(
        f"cannot find the `{name}` executable in {here} or on PATH; "
        "install tempera-memory into this Python environment first"
    )


def relay_program() -> list[str]:
    """The hook command's program: this environment's Python running relay.py isolated and without `site`, so a
    warm turn costs a bare interpreter start (see relay.py). Not resolved, like find_executable: a venv is known
    by the path of its python."""
    import tempera.hooks

    if not sys.executable:
        raise TemperaError(
            "cannot tell which Python runs Tempera (sys.executable is empty); "
            "run `tempera install` from the environment Tempera is installed in"
        )
    relay = Path(tempera.hooks.__file__).resolve().parent / "relay.py"
    return [str(Path(sys.executable).absolute()), *RELAY_FLAGS, str(relay)]
