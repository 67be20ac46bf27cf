"""The plugin form at the repo root runs the same hooks and server as `tempera install` writes."""

from __future__ import annotations

import json
from pathlib import Path

from tempera import __version__
from tempera.installer.hookconfig import with_hooks
from tempera.installer.jsontext import ABSENT
from tempera.installer.mcpconfig import with_server

REPO = Path(__file__).resolve().parents[2]


def load(relative: str) -> dict:  # type: ignore[type-arg]
    return json.loads((REPO / relative).read_text(encoding="utf-8"))


def test_manifest() -> None:
    manifest = load(".claude-plugin/plugin.json")
    assert manifest["name"] == "tempera" and manifest["version"] == __version__ == "0.1.0"
    assert "memory" in manifest["description"]


def test_hooks_match_the_installer() -> None:
    plugin = load("hooks/hooks.json")
    assert plugin["hooks"] == with_hooks(ABSENT, ["tempera-hook"])  # console scripts on PATH in the plugin form
    assert plugin["description"]


def test_mcp_server_matches_the_installer() -> None:
    assert load(".mcp.json") == {"mcpServers": with_server(ABSENT, "tempera-mcp")}
