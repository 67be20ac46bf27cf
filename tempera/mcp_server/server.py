"""`tempera-mcp`: every Tempera capability as an explicit MCP tool, over stdio.

The hooks already inject what the agent should know with no tool call; these tools are the explicit fallback.
Start-up imports only the SDK and Tempera's light modules: memory (database, embedding model) opens on the first
tool call that needs it, so `initialize` and `tools/list` answer at once. Logs go to stderr; stdout carries the
protocol only.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp_types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import ValidationError

from tempera import __version__
from tempera.core.redact import RedactingFormatter
from tempera.mcp_server import tools_facts, tools_maintenance, tools_memory, tools_selfimprove, tools_turn
from tempera.mcp_server.state import ServerState
from tempera.mcp_server.stdin import RepairedStdin
from tempera.mcp_server.validation import explain, signature

INSTRUCTIONS = """Tempera is persistent, self-improving memory for this codebase. Its hooks already add relevant
memories to each prompt; call these tools when you want more, or to teach it:
1. tempera_session_start once at the start (a question left by an earlier failed session is shown once).
2. tempera_brief(files, task_type, domain) once you know which files you will change.
3. tempera_retrieve(query) to deep-dive into past episodes; tempera_feedback on the ones you used.
4. tempera_log_correction / tempera_log_should_have_asked when the user corrects you or a question was missed.
5. tempera_capture at the end of a task, without waiting to be asked.
A client without Tempera's hooks calls memory_prepare_turn(prompt) before each turn and memory_finalize_turn after."""

TOOL_MODULES = (tools_selfimprove, tools_memory, tools_maintenance, tools_facts, tools_turn)
READ_ONLY = {
    "tempera_brief",
    "tempera_template",
    "tempera_status",
    "tempera_stats",
    "tempera_query",
    "tempera_ingest_status",
}
DESTRUCTIVE = {"tempera_review", "tempera_retract", "tempera_audit"}
IDEMPOTENT = READ_ONLY | {
    "tempera_propagate",
    "tempera_transact",
    "tempera_retract",
    "tempera_audit",
    "memory_finalize_turn",
}


class TemperaServer(MCPServer[ServerState]):
    """An MCPServer whose refused calls say what to send instead: unknown tools and argument names are named,
    and validation failures become one line per bad argument with what its schema accepts."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._schemas: dict[str, dict[str, Any]] = {}

    def add_tempera_tool(self, fn: Callable[..., Any]) -> None:
        name = fn.__name__
        self.add_tool(
            fn,
            description=" ".join((fn.__doc__ or "").split()),
            annotations=ToolAnnotations(
                read_only_hint=name in READ_ONLY,
                destructive_hint=name in DESTRUCTIVE,
                idempotent_hint=name in IDEMPOTENT,
                open_world_hint=False,
            ),
        )

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[ServerState, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        if not self._schemas:
            self._schemas = {tool.name: tool.input_schema for tool in await self.list_tools()}
        schema = self._schemas.get(name)
        if schema is None:
            raise ToolError(f"unknown tool {name!r}; the tools are: {', '.join(sorted(self._schemas))}")
        unknown = sorted(set(arguments) - set(schema.get("properties", {})))
        if unknown:
            raise ToolError(
                f"{name}: unknown argument(s) {', '.join(map(repr, unknown))}; send {signature(name, schema)}"
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(explain(name, exc.__cause__, schema)) from exc.__cause__
            raise

    async def run_stdio_async(self) -> None:
        """Stdio as the SDK serves it, but reading stdin through RepairedStdin (a lone surrogate in a call's
        arguments would leave the call unanswered)."""
        async with stdio_server(stdin=RepairedStdin()) as (read_stream, write_stream):  # type: ignore[arg-type]
            low = self._lowlevel_server
            await low.run(read_stream, write_stream, low.create_initialization_options())


@asynccontextmanager
async def lifespan(_: MCPServer[ServerState]) -> AsyncIterator[ServerState]:
    state = ServerState()
    try:
        yield state
    finally:
        state.close()


def build_server() -> TemperaServer:
    server = TemperaServer(name="tempera", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan)
    for module in TOOL_MODULES:
        for fn in module.TOOLS:
            server.add_tempera_tool(fn)
    return server


def main() -> None:
    os.umask(0o077)  # memory holds code and prompts: files we create are owner-only
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter("%(asctime)s tempera-mcp %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    build_server().run("stdio")


if __name__ == "__main__":
    main()
