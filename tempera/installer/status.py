"""Is Tempera registered with Claude Code, and would the registered commands run? `tempera doctor` asks this."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path
from typing import Any

from tempera.core.errors import TemperaError
from tempera.installer.changes import read_member
from tempera.installer.hookconfig import HOOK_EVENTS, owned_command, program_files
from tempera.installer.locations import Scope, claude_config_dir, targets
from tempera.installer.mcpconfig import server_command
from tempera.installer.pluginfiles import NAME as PLUGIN_NAME


def installed_status(scope: Scope = "user", project_dir: Path | None = None) -> dict[str, Any]:
    """One row per hook event and one for the MCP server: present, command, executable and whether it can run.

    Never raises for a broken file: the reason goes to `errors` and `ok` is False, so doctor can show it.
    """
    where = targets(scope, project_dir)
    errors: list[str] = []
    hooks = _member_or_error(where.settings, "hooks", errors)
    servers = _member_or_error(where.mcp, "mcpServers", errors)
    hook_rows = {event: _row(owned_command(hooks, event, verb)) for event, verb in HOOK_EVENTS.items()}
    mcp_row = _row(server_command(servers))
    rows = [*hook_rows.values(), mcp_row]
    return {
        "scope": scope,
        "settings_file": str(where.settings),
        "mcp_file": str(where.mcp),
        "hooks": hook_rows,
        "mcp": mcp_row,
        "errors": errors,
        "ok": not errors and all(r["present"] and r["executable_ok"] for r in rows),
    }


def _member_or_error(path: Path, key: str, errors: list[str]) -> Any:
    try:
        return read_member(path, key)
    except TemperaError as exc:
        errors.append(str(exc))
        return None


def _row(command: str | None) -> dict[str, Any]:
    files = _program_files(command) if command else None
    executable = files[0] if files else None
    return {
        "present": command is not None,
        "command": command,
        "executable": str(executable) if executable else None,
        "executable_ok": bool(files) and os.access(files[0], os.X_OK) and all(f.is_file() for f in files),
    }


def _program_files(command: str) -> list[Path] | None:
    """What a command runs: its program (looked up on PATH when it has no directory, the plugin form), and for
    the relay form the script too."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if not argv:
        return None
    ours = program_files(argv) or [argv[0]]
    if os.sep not in ours[0]:
        found = shutil.which(ours[0])
        if not found:
            return None
        ours = [found, *ours[1:]]
    return [Path(f) for f in ours]


def plugin_status() -> dict[str, Any] | None:
    """The Tempera plugin as Claude Code recorded its install (`plugins/installed_plugins.json`, any marketplace)
    and whether the user settings disable it (`enabledPlugins`); None when no Tempera plugin is installed.

    A plugin install writes nothing to the `hooks` of settings.json, so without this doctor would call a plugin
    user's Claude Code "not installed"."""
    base = claude_config_dir()
    errors: list[str] = []
    installed = _member_or_error(base / "plugins" / "installed_plugins.json", "plugins", errors)
    ids = sorted(k for k in installed if k.partition("@")[0] == PLUGIN_NAME) if isinstance(installed, dict) else []
    if not ids and not errors:
        return None
    enabled = _member_or_error(base / "settings.json", "enabledPlugins", errors)
    disabled = [i for i in ids if isinstance(enabled, dict) and enabled.get(i) is False]
    return {"plugins": ids, "disabled": disabled, "errors": errors, "ok": bool(ids) and not disabled and not errors}
