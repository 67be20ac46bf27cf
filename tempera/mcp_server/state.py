"""What every tool call shares: memory opened on first use, one lane for database work, and the result shape.

Opening memory imports the embedding stack and applies migrations, so it waits for the first tool that needs it:
`initialize` and `tools/list` never pay for it. Database work runs on a worker thread (the event loop keeps
answering), one call at a time, because every call shares one SQLite connection and its transactions.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from tempera.core.db import storage_error
from tempera.core.errors import TemperaError
from tempera.mcp_server.project import client_workdir

if TYPE_CHECKING:
    from tempera.core.memory import Memory
    from tempera.facts import FactStore

log = logging.getLogger("tempera.mcp")
T = TypeVar("T")

# Structured content plus readable text; the schema published for every tool is "an object".
ToolResult = Annotated[CallToolResult, dict[str, Any]]


def reply(data: dict[str, Any], text: str) -> CallToolResult:
    """The data as structured content (JSON-normalised exactly as the CLI's --json prints it) and as text."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=json.loads(json.dumps(data, default=str, ensure_ascii=False)),
    )


def _problem(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in exc.errors()[:3])


@dataclass
class ServerState:
    """The lifespan context: one per server process (stdio serves one client)."""

    memory: "Memory | None" = None
    facts: "FactStore | None" = None
    lane: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(1))

    def open_memory(self) -> "Memory":
        if self.memory is None:
            from tempera.core.memory import Memory

            self.memory = Memory()
            log.info("memory opened: %s", self.memory.db.path)
        return self.memory

    def open_facts(self) -> "FactStore":
        if self.facts is None:
            from tempera.facts import FactStore

            self.facts = FactStore(self.open_memory().db)
        return self.facts

    async def run(self, work: Callable[[], T]) -> T:
        """Run `work` on the database lane; expected errors become tool errors with their own message."""
        return await anyio.to_thread.run_sync(_guarded, work, limiter=self.lane)

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()
            self.memory = None
            self.facts = None


def _guarded(work: Callable[[], T]) -> T:
    try:
        return work()
    except TemperaError as exc:
        raise ToolError(str(exc)) from exc
    except ValidationError as exc:  # a core input model (CaptureInput, CorrectionInput ...) refused a value
        raise ToolError(_problem(exc)) from exc
    except Exception as exc:  # a full or read-only disk gets the CLI's one line; anything else is a bug
        problem = storage_error(exc)
        if problem is None:
            raise
        raise ToolError(str(problem)) from exc


def state_of(ctx: Context) -> ServerState:
    """The lifespan context `server.lifespan` yields (the SDK types it as a plain dict)."""
    return cast(ServerState, ctx.request_context.lifespan_context)


async def with_memory(ctx: Context, work: Callable[["Memory"], T]) -> T:
    """`work(memory)` on the database lane."""
    state = state_of(ctx)
    return await state.run(lambda: work(state.open_memory()))


async def in_project(ctx: Context, work: Callable[["Memory", str], T]) -> T:
    """`work(memory, workdir)`, where workdir is the client's root or the server's cwd: the directory a missing
    `project` argument resolves from, and relative file paths are taken against."""
    workdir = await client_workdir(ctx)
    state = state_of(ctx)
    return await state.run(lambda: work(state.open_memory(), workdir))


async def with_facts(ctx: Context, work: Callable[["FactStore"], T]) -> T:
    """`work(fact store)` on the database lane (the fact tables live in the same file as memory)."""
    state = state_of(ctx)
    return await state.run(lambda: work(state.open_facts()))
