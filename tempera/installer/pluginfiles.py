"""The plugin form's files (.claude-plugin/plugin.json and marketplace.json at the repository root), made from the
installer's own hook and server entries, so that the plugin registers what `tempera install` registers. The hooks
are inline in plugin.json beside the MCP server (Claude Code's manifest takes both), so the repository has no root
`hooks/` folder to be mistaken for the `tempera/hooks/` package. The commands run plugin_launcher.py with the
`python3` on PATH: a plugin user has nothing else.

Regenerate after a change: `python -m tempera.installer.pluginfiles` (a test fails while the files differ).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tempera import __version__
from tempera.installer.hookconfig import with_hooks
from tempera.installer.jsontext import ABSENT
from tempera.installer.mcpconfig import SERVER_NAME, server_entry

LAUNCHER = "${CLAUDE_PLUGIN_ROOT}/tempera/installer/plugin_launcher.py"
PROGRAM = ["python3", "-I", "-S", LAUNCHER, "${CLAUDE_PLUGIN_ROOT}", "${CLAUDE_PLUGIN_DATA}"]
NAME = "tempera"
AUTHOR = {"name": "Tempera contributors"}
DESCRIPTION = (
    "Persistent, self-improving memory for Claude Code: hooks inject what the agent should know before it "
    "acts and capture what happened after, with zero tool calls. Needs python3 (3.11+) on PATH; the first "
    "session sets up its environment in the background (pip, from the plugin's own source)."
)


def plugin_json() -> dict[str, Any]:
    return {
        "name": NAME,
        "version": __version__,
        "description": DESCRIPTION,
        "author": AUTHOR,
        "license": "Apache-2.0",
        "keywords": ["memory", "hooks", "mcp"],
        # pip reaches PyPI when the venv is built; the daemon reaches the API only with `[llm] enabled`
        "network": {"hosts": ["pypi.org", "files.pythonhosted.org", "api.anthropic.com"]},
        "hooks": with_hooks(ABSENT, PROGRAM),
        "mcpServers": {SERVER_NAME: server_entry(PROGRAM[0], [*PROGRAM[1:], "mcp"])},
    }


def marketplace_json() -> dict[str, Any]:
    """This repository as a marketplace of one plugin, itself: `claude plugin install tempera@tempera`."""
    return {
        "name": NAME,
        "owner": AUTHOR,
        "description": "Tempera, persistent memory for Claude Code",
        "plugins": [{"name": NAME, "source": "./", "description": DESCRIPTION, "version": __version__}],
    }


FILES = {
    ".claude-plugin/plugin.json": plugin_json,
    ".claude-plugin/marketplace.json": marketplace_json,
}


def render(name: str) -> str:
    return json.dumps(FILES[name](), indent=2) + "\n"


def write(root: Path) -> None:
    for name in FILES:
        (root / name).write_text(render(name), encoding="utf-8")


if __name__ == "__main__":
    write(Path(__file__).resolve().parents[2])
