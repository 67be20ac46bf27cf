"""Settings as a user might have them before Tempera (foreign hooks in the same events, unrelated keys), and the
real `tempera` CLI run as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any
from tests.support.cli import tempera

SETTINGS = (
    json.dumps(
        {
            "$schema": "https://json.schemastore.org/claude-code-settings.json",
            "model": "opus",
            "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
            "env": {"GREETING": "café"},
            "hooks": {
                "SessionStart": [{"matcher": "", "hooks": [{"type": "command", "command": "~/bin/greet.sh"}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "notify-send 'Claude is done'", "timeout": 5}]}],
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
                "Notification": [],
            },
            "statusLine": {"type": "command", "command": "status.sh"},
        },
        indent=2,
        ensure_ascii=False,
    )
    + "\n"
)

# the way Claude Code writes ~/.claude.json: 2-space indent, no trailing newline; plus hand-made oddities
CLAUDE_JSON = """{
  "numStartups": 42,
  "installMethod": "npm",
  "oauthAccount": {
    "emailAddress": "dev@example.com",
    "organizationName": "caf\\u00e9"
  },
  "projects": {
    "/home/dev/app": {
      "allowedTools": [],
      "lastCost": 1.50,
      "mcpServers": {}
    }
  },
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {}
    }
  },
  "tipsHistory": {"hooks": 3}
}"""


def foreign_commands(settings: dict[str, Any]) -> set[tuple[str, str]]:
    """(event, command) for every hook in a settings object."""
    return {(event, h["command"]) for event, groups in settings["hooks"].items() for g in groups for h in g["hooks"]}


def run_cli(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m tempera.cli ARGS` with this test's environment (HOME is the temporary one) plus `env`."""
    return tempera(*args, cwd=cwd, env={**os.environ, **env}, timeout=120)
