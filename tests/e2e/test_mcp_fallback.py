"""Scenario 3, the MCP fallback: the server `tempera install` registered connects to the real Claude Code, and a
model call of `mcp__tempera__tempera_retrieve` comes back, in the next model request, with the expected episode.

The episode is saved with `tempera capture` (as a user would by hand), so this test depends on the MCP server only,
not on the hooks' capture, which scenario 1 covers.
"""

from __future__ import annotations

import json
import re

from projects import CALC
from replies import call, say
from request_log import tool_result
from sandbox import ALLOWED_TOOLS, Sandbox

SUMMARY = "Fixed add() in calc.py: it subtracted instead of adding; test_calc passes now"
RETRIEVE = "mcp__tempera__tempera_retrieve"


def test_claude_code_calls_tempera_retrieve(installed: Sandbox) -> None:
    box = installed
    repo = box.repo("work/calc-app", CALC)
    saved = json.loads(
        box.tempera("capture", "-s", SUMMARY, "--task-type", "bugfix", "--files", "calc.py", "--json", cwd=repo)
    )
    episode_id = saved[0]["id"]

    listing = box.claude_command("mcp", "list", cwd=repo)
    line = next((row for row in listing.stdout.splitlines() if row.startswith("tempera:")), "")
    assert re.search(r"\bconnected\b", line, re.I) and "fail" not in line.lower(), (
        f"`claude mcp list` does not report tempera connected:\n{listing.stdout}\n{listing.stderr}"
    )

    run = box.claude(
        "what do we already know about the add bug in calc.py?",
        cwd=repo,
        allowed_tools=f"{ALLOWED_TOOLS},{RETRIEVE}",
        script=[
            call(RETRIEVE, {"query": "add subtracted calc.py"}, id="toolu_mcp_retrieve"),
            say("An earlier session fixed it."),
        ],
    )
    result = tool_result(run.requests, "toolu_mcp_retrieve")
    assert result is not None, "Claude Code sent no result for the MCP call"
    text, is_error = result
    assert not is_error, text
    assert episode_id[:8] in text and "subtracted instead of adding" in text, text
    box.assert_no_hook_errors()
