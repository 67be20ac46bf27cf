"""The warm start (tempera/mcp_server/warmstart.py) with a real SDK client over stdio: the second start answers the
handshake from what the first recorded, and the session behind it is the SDK's own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from stdio_session import SERVER, STEP_SECONDS, connect, server_env

from tempera.core import paths
from tempera.mcp_server.warmstart import fingerprint


def _tool_dump(tools: list) -> list[dict]:  # type: ignore[type-arg]
    return [t.model_dump(mode="json") for t in tools]


@pytest.mark.anyio
async def test_second_start_lists_what_the_first_recorded_and_still_serves_calls(
    data_dir: Path, project_dir: Path
) -> None:
    async with connect(data_dir, project_dir) as client:
        first = _tool_dump((await client.session.list_tools()).tools)
    recorded = json.loads((data_dir / paths.MCP_REPLIES_NAME).read_text(encoding="utf-8"))
    assert recorded["fingerprint"] == fingerprint()
    assert any(name.endswith(" tools/list") for name in recorded["results"])
    assert any(name.endswith(" initialize") for name in recorded["results"])
    async with connect(data_dir, project_dir) as client:
        second = _tool_dump((await client.session.list_tools()).tools)
        status = await client.ok("tempera_status")  # a call goes to the SDK server behind the relay
    assert second == first
    assert status["project"]["name"] == "webshop"


@pytest.mark.anyio
async def test_recorded_list_is_what_is_served(data_dir: Path, project_dir: Path) -> None:
    """Proof the answer comes from the record and not from the SDK: a marked record is what the client sees."""
    async with connect(data_dir, project_dir) as client:
        await client.session.list_tools()
    path = data_dir / paths.MCP_REPLIES_NAME
    doc = json.loads(path.read_text(encoding="utf-8"))
    name = next(n for n in doc["results"] if n.endswith(" tools/list"))
    doc["results"][name]["tools"][0]["description"] = "Call MARKED"
    path.write_text(json.dumps(doc), encoding="utf-8")
    async with connect(data_dir, project_dir) as client:
        tools = (await client.session.list_tools()).tools
    assert tools[0].description == "Call MARKED"


@pytest.mark.anyio
async def test_a_record_from_other_code_is_ignored_and_replaced(data_dir: Path, project_dir: Path) -> None:
    path = data_dir / paths.MCP_REPLIES_NAME
    data_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "fingerprint": "older code",
                "results": {"2025-06-18 tools/list": {"tools": []}, "2025-11-25 tools/list": {"tools": []}},
            }
        ),
        encoding="utf-8",
    )
    async with connect(data_dir, project_dir) as client:
        tools = (await client.session.list_tools()).tools
    assert len(tools) > 10
    assert json.loads(path.read_text(encoding="utf-8"))["fingerprint"] == fingerprint()
    assert path.stat().st_mode & 0o077 == 0


async def _stateless_session(data_dir: Path, cwd: Path) -> tuple[list[dict], dict]:  # type: ignore[type-arg]
    """The protocol Claude Code speaks (2026-07-28: server/discover, then requests carrying their own _meta), with
    the subscription it opens first; the tools listed and one call's structured result."""
    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:], env=server_env(data_dir), cwd=cwd)
    with anyio.fail_after(STEP_SECONDS):
        async with Client(params) as client:
            assert client.protocol_version == "2026-07-28"
            async with client.listen(tools_list_changed=True):  # entering waits for the acknowledgement
                tools = _tool_dump((await client.list_tools()).tools)
                status = await client.call_tool("tempera_status", {})
    assert not status.is_error and status.structured_content is not None
    return tools, status.structured_content


@pytest.mark.anyio
async def test_stateless_protocol_is_answered_from_the_record_too(data_dir: Path, project_dir: Path) -> None:
    first_tools, _ = await _stateless_session(data_dir, project_dir)
    names = json.loads((data_dir / paths.MCP_REPLIES_NAME).read_text(encoding="utf-8"))["results"]
    assert {n.split(" ")[0] for n in names} == {"2026-07-28"}
    assert any(n.endswith(" server/discover") for n in names)
    assert any(" subscriptions/listen " in n for n in names)
    listed = next(n for n in names if n.endswith(" tools/list"))
    names[listed]["tools"][0]["description"] = "Call MARKED"  # proof that the next list comes from the record
    (data_dir / paths.MCP_REPLIES_NAME).write_text(
        json.dumps({"fingerprint": fingerprint(), "results": names}), encoding="utf-8"
    )
    second_tools, status = await _stateless_session(data_dir, project_dir)
    assert second_tools[0]["description"] == "Call MARKED" and second_tools[1:] == first_tools[1:]
    assert status["project"]["name"] == "webshop"  # the call behind the relay reached the SDK server


def test_start_imports_no_sdk_before_answering() -> None:
    """What makes the warm start fast: the relay module itself loads neither the SDK nor pydantic."""
    probe = (
        "import sys, tempera.mcp_server.warmstart; "
        "print(sorted(m for m in ('mcp', 'mcp_types', 'pydantic', 'anyio') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_server_leaves_at_once_when_the_client_signals(data_dir: Path, project_dir: Path, sig: int) -> None:
    """Claude Code ends every session with SIGINT (seen on its wire): the running SDK loop alone ignores it."""
    proc = subprocess.Popen(
        SERVER,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=project_dir,
        env={**os.environ, **server_env(data_dir)},
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for message in (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        ):
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert [r["id"] for r in replies] == [1, 2]  # the ping went to the SDK: its loop is running
        proc.send_signal(sig)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
