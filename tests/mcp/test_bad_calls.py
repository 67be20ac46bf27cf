"""Fifty malformed calls: each is answered with a tool error (isError) that says what is wrong, none crashes
the tool or the server, and a good call still works afterwards."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from stdio_session import connect

HUGE = "x" * 300_000
UNKNOWN_ID = "0badbeef00c0ffee"

BAD_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("tempera_nope", {}),
    ("", {}),
    ("tempera_retrieve", {}),
    ("tempera_retrieve", {"query": ""}),
    ("tempera_retrieve", {"query": "   "}),
    ("tempera_retrieve", {"query": "login", "all": True}),
    ("tempera_retrieve", {"query": "login", "limit": 0}),
    ("tempera_retrieve", {"query": "login", "limit": 100_000}),
    ("tempera_retrieve", {"query": "login", "limit": "many"}),
    ("tempera_retrieve", {"query": "login", "scope": "galaxy"}),
    ("tempera_retrieve", {"query": "login", "mode": "psychic"}),
    ("tempera_retrieve", {"query": UNKNOWN_ID}),
    ("tempera_retrieve", {"query": HUGE}),
    ("tempera_retrieve", {"query": "login", "project": "no-such-project"}),
    ("tempera_retrieve", {"querry": "login"}),
    ("tempera_retrieve", {"all": "yes please"}),
    ("tempera_brief", {}),
    ("tempera_brief", {"files": 3}),
    ("tempera_brief", {"files": [1, 2]}),
    ("tempera_brief", {"files": [""]}),
    ("tempera_brief", {"files": ["a.py"], "task_type": "cooking"}),
    ("tempera_brief", {"files": ["a.py"], "cross_project": "maybe"}),
    ("tempera_brief", {"files": [HUGE]}),
    ("tempera_template", {}),
    ("tempera_template", {"task_type": "bugfix", "domain": ""}),
    ("tempera_log_correction", {"description": "no category"}),
    ("tempera_log_correction", {"category": "", "description": "empty category"}),
    ("tempera_log_correction", {"category": "c", "description": HUGE}),
    ("tempera_log_correction", {"category": "c", "description": "d", "episode": "short"}),
    ("tempera_log_correction", {"category": "c", "description": "d", "episode": UNKNOWN_ID}),
    ("tempera_log_correction", {"category": "c", "description": "d", "scope": "galaxy:far-away"}),
    ("tempera_log_should_have_asked", {"trigger": "editing auth"}),
    ("tempera_log_should_have_asked", {"trigger": 12345, "question": "Which order?"}),
    ("tempera_capture", {}),
    ("tempera_capture", {"summary": ""}),
    ("tempera_capture", {"summary": HUGE}),
    ("tempera_capture", {"summary": "did it", "outcome": "meh"}),
    ("tempera_capture", {"summary": "did it", "tags": {"a": 1}}),
    ("tempera_capture", {"summary": "did it", "validity_scope": "nowhere"}),
    ("tempera_feedback", {}),
    ("tempera_feedback", {"helpful": "perhaps", "episodes": [UNKNOWN_ID]}),
    ("tempera_feedback", {"helpful": True, "episodes": []}),
    ("tempera_feedback", {"helpful": True, "episodes": ["xyz"]}),
    ("tempera_feedback", {"helpful": True, "episodes": [UNKNOWN_ID]}),
    ("tempera_stats", {"kind": "everything"}),
    ("tempera_stats", {"kind": "trends", "bucket": "daily"}),
    ("tempera_review", {"action": "burn"}),
    ("tempera_query", {"query": "[:find ?x :where"}),
    ("tempera_transact", {"facts": "[[:a/b :c 1]]", "reason": ""}),
    ("tempera_ingest_git", {"path": "/no/such/dir/anywhere"}),
]


@pytest.mark.anyio
async def test_fifty_bad_calls_are_tool_errors_and_the_server_lives(data_dir: Path, project_dir: Path) -> None:
    assert len(BAD_CALLS) == 50
    async with connect(data_dir, project_dir) as client:
        for name, arguments in BAD_CALLS:
            reply = await client.call(name, arguments)
            assert reply.is_error, (name, arguments, reply.text)
            assert reply.text and len(reply.text) < 5000, (name, arguments)
            # an anticipated error names the problem; a crash would say only "Error executing tool X"
            assert not re.fullmatch(r"Error executing tool \w*", reply.text), (name, arguments)
        captured = await client.ok("tempera_capture", {"summary": "Still here after fifty bad calls"})
        found = await client.ok("tempera_retrieve", {"query": "fifty bad calls"})
    assert [h["id"] for h in found["hits"]] == [captured["id"]]


@pytest.mark.anyio
async def test_a_bad_argument_is_answered_with_what_to_send(data_dir: Path, project_dir: Path) -> None:
    async with connect(data_dir, project_dir) as client:
        scope = await client.call("tempera_retrieve", {"query": "login", "scope": "galaxy"})
        typo = await client.call("tempera_retrieve", {"querry": "login"})
        unknown = await client.call("tempera_feedback", {"helpful": True, "episodes": [UNKNOWN_ID]})
    assert 'send one of "project", "cross-project" (default "project")' in scope.text
    assert "unknown argument(s) 'querry'" in typo.text and "query?:" in typo.text
    assert f"no episode with id '{UNKNOWN_ID}'" in unknown.text
