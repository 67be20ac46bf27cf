"""`tools/list` of a real `tempera-mcp` process: every tool, with typed schemas, enums and defaults."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from stdio_session import connect

from tempera.core.models import TASK_TYPES

SEED_TOOLS = {
    "tempera_session_start",
    "tempera_brief",
    "tempera_retrieve",
    "tempera_template",
    "tempera_log_correction",
    "tempera_log_should_have_asked",
    "tempera_capture",
    "tempera_feedback",
    "tempera_status",
    "tempera_stats",
    "tempera_propagate",
    "tempera_review",
}
FACT_TOOLS = {
    "tempera_query",
    "tempera_transact",
    "tempera_retract",
    "tempera_audit",
    "tempera_ingest_git",
    "tempera_ingest_status",
}
TURN_TOOLS = {"memory_prepare_turn", "memory_finalize_turn"}  # Temporal Reasoning's names for the per-turn hooks


@pytest.mark.anyio
async def test_every_tool_is_listed_with_its_schema(data_dir: Path, project_dir: Path) -> None:
    async with connect(data_dir, project_dir) as client:
        listed = (await client.session.list_tools()).tools
    tools = {t.name: t for t in listed}
    assert set(tools) == SEED_TOOLS | FACT_TOOLS | TURN_TOOLS
    for tool in listed:
        assert tool.description and tool.description.startswith("Call "), tool.name  # says when to call it
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema and tool.output_schema["type"] == "object"
        assert tool.annotations and tool.annotations.open_world_hint is False
        assert "ctx" not in tool.input_schema.get("properties", {})

    def prop(tool: str, name: str) -> dict[str, Any]:
        schema: dict[str, Any] = tools[tool].input_schema["properties"][name]
        return schema

    scope, limit = prop("tempera_retrieve", "scope"), prop("tempera_retrieve", "limit")
    assert (scope["enum"], scope["default"]) == (["project", "cross-project"], "project")
    assert (limit["type"], limit["default"], limit["minimum"]) == ("integer", 5, 1)
    assert prop("tempera_retrieve", "all")["default"] is False
    assert prop("tempera_retrieve", "mode")["anyOf"][0]["enum"] == ["keyword", "vector", "hybrid"]
    assert prop("tempera_review", "action")["enum"] == ["analyze", "consolidate", "cleanup"]
    assert prop("tempera_review", "dry_run")["default"] is True
    assert prop("tempera_stats", "kind")["enum"] == ["stats", "trends"]
    assert prop("tempera_capture", "task_type")["enum"] == list(TASK_TYPES)
    assert prop("tempera_capture", "outcome")["enum"] == ["success", "partial", "failure"]
    assert prop("tempera_brief", "files")["items"]["type"] == "string"
    assert prop("tempera_feedback", "helpful")["type"] == "boolean"
    assert tools["tempera_capture"].input_schema["required"] == ["summary"]
    assert tools["tempera_feedback"].input_schema["required"] == ["helpful", "episodes"]
    assert tools["tempera_brief"].input_schema["required"] == ["files"]
    assert tools["tempera_brief"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert tools["tempera_review"].annotations.destructive_hint is True  # type: ignore[union-attr]


def test_import_loads_no_embedding_stack() -> None:
    """What makes `initialize` and `tools/list` fast: importing the server loads no model code."""
    probe = (
        "import sys, tempera.mcp_server.server; "
        "print(sorted(m for m in ('numpy', 'fastembed', 'onnxruntime', 'git', 'anthropic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
