"""Tempera's server in an `mcpServers` object (~/.claude.json or a project's .mcp.json). The name is the mark."""

from __future__ import annotations

from typing import Any

from tempera.installer.jsontext import ABSENT, Absent, object_copy

MCP_EXECUTABLE = "tempera-mcp"
SERVER_NAME = "tempera"


def server_entry(command: str, args: list[str] | None = None) -> dict[str, Any]:
    return {"type": "stdio", "command": command, "args": list(args or []), "env": {}}


def with_server(servers: object, mcp_exe: str) -> dict[str, Any]:
    """`mcpServers` (it may be ABSENT) with our stdio server; other servers keep their place and content."""
    new = object_copy(servers, "mcpServers")
    new[SERVER_NAME] = server_entry(mcp_exe)
    return new


def without_server(servers: object) -> dict[str, Any] | Absent:
    """`mcpServers` without ours; ABSENT (drop the key) when ours was the last one in it."""
    if servers is ABSENT:
        return ABSENT
    new = object_copy(servers, "mcpServers")
    if SERVER_NAME not in new:
        return new
    del new[SERVER_NAME]
    return new or ABSENT


def server_command(servers: object) -> str | None:
    """Our server's command, for status; tolerant of any shape."""
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    command = entry.get("command") if isinstance(entry, dict) else None
    return command if isinstance(command, str) else None
