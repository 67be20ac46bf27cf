"""Registers Tempera with Claude Code: hooks in settings.json, the MCP server in ~/.claude.json or .mcp.json.

Only our own entries are ever added, updated or removed; every other byte of those files is left as it was.
"""

from tempera.installer.locations import SCOPES, Scope
from tempera.installer.plan import apply_all, plan_install, plan_uninstall
from tempera.installer.status import installed_status

__all__ = ["SCOPES", "Scope", "apply_all", "installed_status", "plan_install", "plan_uninstall"]
