"""The warm start (tempera/mcp_server/warmstart.py) with a real SDK client over stdio: the second start answers the
handshake from what the first recorded, and the session behind it is the SDK's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from stdio_session import connect

from tempera.mcp_server.warmstart import CACHE_NAME, fingerprint


def _tool_dump(tools: list) -> list[dict]:  # type: ignore[type-arg]
    return [t.model_dump(mode="json") for t in tools]


@pytest.mark.anyio
async def test_second_start_lists_what_the_first_recorded_and_still_serves_calls(data_dir: Path,
                                                                               project_dir: Path) -> None:
    async with connect(data_dir, project_dir) as client:
        first = _tool_dump((await client.session.list_tools()).tools)
    recorded = json.loads((data_dir / CACHE_NAME).read_text(encoding="utf-8"))
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
    path = data_dir / CACHE_NAME
    doc = json.loads(path.read_text(encoding="utf-8"))
    name = next(n for n in doc["results"] if n.endswith(" tools/list"))
    doc["results"][name]["tools"][0]["description"] = "Call MARKED"
    path.write_text(json.dumps(doc), encoding="utf-8")
    async with connect(data_dir, project_dir) as client:
        tools = (await client.session.list_tools()).tools
    assert tools[0].description == "Call MARKED"


@pytest.mark.anyio
async def test_a_record_from_other_code_is_ignored_and_replaced(data_dir: Path, project_dir: Path) -> None:
    path = data_dir / CACHE_NAME
    data_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"fingerprint": "older code", "results": {
        "2025-06-18 tools/list": {"tools": []}, "2025-11-25 tools/list": {"tools": []}}}), encoding="utf-8")
    async with connect(data_dir, project_dir) as client:
        tools = (await client.session.list_tools()).tools
    assert len(tools) > 10
    assert json.loads(path.read_text(encoding="utf-8"))["fingerprint"] == fingerprint()
    assert path.stat().st_mode & 0o077 == 0


def test_start_imports_no_sdk_before_answering() -> None:
    """What makes the warm start fast: the relay module itself loads neither the SDK nor pydantic."""
    probe = ("import sys, tempera.mcp_server.warmstart; "
             "print(sorted(m for m in ('mcp', 'mcp_types', 'pydantic', 'anyio') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
