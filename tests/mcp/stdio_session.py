"""Driving a real `tempera-mcp` subprocess with the SDK's stdio client, as Claude Code would."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession
from mcp.client.context import ClientRequestContext
from mcp.client.stdio import StdioServerParameters, stdio_client
from pydantic import FileUrl
from tests.support.cli import tempera

SERVER = [sys.executable, "-m", "tempera.mcp_server"]  # the same start as the tempera-mcp script
STEP_SECONDS = 60  # one call, including the first one that opens memory and loads the model


def server_env(data_dir: Path) -> dict[str, str]:
    """What the server needs beyond the SDK's default environment: the test's data dir and model cache, and the
    PYTHONPATH that puts the code under test first (a worktree's), when one is set."""
    env = {"TEMPERA_DATA_DIR": str(data_dir), "FASTEMBED_CACHE_DIR": os.environ["FASTEMBED_CACHE_DIR"]}
    return env | ({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {})


@dataclass
class Reply:
    is_error: bool
    text: str
    data: dict[str, Any] | None


class Tempera:
    """A connected client session with call helpers that return the text and structured parts."""

    def __init__(self, session: ClientSession):
        self.session = session

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> Reply:
        with anyio.fail_after(STEP_SECONDS):
            result = await self.session.call_tool(name, arguments or {})
        text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
        return Reply(bool(result.is_error), text, result.structured_content)

    async def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        reply = await self.call(name, arguments)
        assert not reply.is_error, reply.text
        assert reply.data is not None
        return reply.data


def _roots_callback(paths: Sequence[Path]) -> Any:
    async def list_roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(p.as_uri()), name=p.name) for p in paths])

    return list_roots


@asynccontextmanager
async def connect(
    data_dir: Path,
    cwd: Path,
    *,
    roots: Sequence[Path] | None = None,
    errlog: Path | None = None,
    env: dict[str, str] | None = None,
    command: Sequence[str] = SERVER,
) -> AsyncIterator[Tempera]:
    """Start the server (`command`) in `cwd` on `data_dir` (with `env` on top), initialise, and yield a client
    (with roots, when given)."""
    params = StdioServerParameters(
        command=command[0], args=list(command[1:]), env={**server_env(data_dir), **(env or {})}, cwd=cwd
    )
    log_path = errlog or data_dir.parent / "server-stderr.log"
    with log_path.open("a", encoding="utf-8") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            callback = _roots_callback(roots) if roots is not None else None
            async with ClientSession(read, write, list_roots_callback=callback) as session:
                with anyio.fail_after(STEP_SECONDS):
                    await session.initialize()
                yield Tempera(session)


def cli(data_dir: Path, cwd: Path, *args: str) -> str:
    """Run `python -m tempera.cli ARGS` on the same data dir; its stdout."""
    env = {**os.environ, **server_env(data_dir)}
    done = tempera(*args, cwd=cwd, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def cli_json(data_dir: Path, cwd: Path, *args: str) -> Any:
    return json.loads(cli(data_dir, cwd, *args, "--json"))
