"""Install and uninstall as lists of planned file changes, so `--dry-run` and the real run share one code path and
every file is validated before the first one is written."""

from __future__ import annotations

from pathlib import Path

from tempera.core.errors import TemperaError
from tempera.installer.changes import FileChange, Written, apply, check_writable, plan_edit, undo
from tempera.installer.hookconfig import with_hooks, without_hooks
from tempera.installer.locations import Scope, find_executable, relay_program, targets
from tempera.installer.mcpconfig import MCP_EXECUTABLE, with_server, without_server


def plan_install(scope: Scope, project_dir: Path | None = None) -> list[FileChange]:
    """Our hooks into settings.json and our MCP server into the scope's MCP file, by absolute path."""
    where = targets(scope, project_dir)
    program = relay_program()
    mcp_exe = str(find_executable(MCP_EXECUTABLE))
    return [
        plan_edit(where.settings, "hooks", lambda hooks: with_hooks(hooks, program)),
        plan_edit(where.mcp, "mcpServers", lambda servers: with_server(servers, mcp_exe)),
    ]


def plan_uninstall(scope: Scope, project_dir: Path | None = None) -> list[FileChange]:
    """Exactly our entries out of the same two files."""
    where = targets(scope, project_dir)
    return [plan_edit(where.settings, "hooks", without_hooks), plan_edit(where.mcp, "mcpServers", without_server)]


def apply_all(changes: list[FileChange]) -> list[Written]:
    """Write the changed files (each with a backup); unchanged ones are not touched at all. All or nothing: every
    file is checked first, and when one cannot be written the ones written before it are put back, so Claude Code
    never sees hooks without their MCP server (or the reverse)."""
    todo = [change for change in changes if change.changed]
    for change in todo:
        check_writable(change.path)
    written: list[Written] = []
    for change in todo:
        try:
            written.append(apply(change))
        except TemperaError as exc:
            for done in reversed(written):
                undo(done)
            put_back = "".join(f"; {done.path} was put back as it was" for done in written)
            raise TemperaError(f"{exc}{put_back}") from exc
    return written
