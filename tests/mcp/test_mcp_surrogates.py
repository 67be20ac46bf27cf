"""Issue 17: a `tools/call` whose arguments hold a lone UTF-16 surrogate (`"\\ud83d"`, as Claude Code writes when it
cuts a string inside an emoji) is answered, its text repaired, and the server keeps serving. The SDK client cannot
produce such a message (it serialises with a strict encoder), so this session speaks raw JSON-RPC over the pipes."""

from __future__ import annotations

import json
import select
import subprocess
from pathlib import Path
from typing import Any

from stdio_session import SERVER, server_env

WAIT_SECONDS = 60


class RawSession:
    """A `tempera-mcp` subprocess spoken to line by line."""

    def __init__(self, data_dir: Path, cwd: Path):
        self.proc = subprocess.Popen(
            SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            env=server_env(data_dir),
        )

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def reply(self, request_id: int) -> dict[str, Any]:
        """The response to `request_id` (notifications in between are passed over); fails when none comes."""
        assert self.proc.stdout is not None
        while True:
            ready, _, _ = select.select([self.proc.stdout], [], [], WAIT_SECONDS)
            assert ready, f"no reply to request {request_id} in {WAIT_SECONDS} s"
            line = self.proc.stdout.readline()
            assert line, "the server closed its output"
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    def initialize(self) -> None:
        self.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                }
            )
        )
        assert "result" in self.reply(0)
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


def _call(request_id: int, name: str, arguments_json: str) -> str:
    """A tools/call line with the arguments spliced in as raw JSON text (escapes kept as written)."""
    return '{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "%s", "arguments": %s}}' % (
        request_id,
        name,
        arguments_json,
    )


def test_a_lone_surrogate_in_tool_arguments_is_answered_repaired(data_dir: Path, project_dir: Path) -> None:
    session = RawSession(data_dir, project_dir)
    try:
        session.initialize()
        session.send(
            _call(1, "tempera_capture", r'{"summary": "fix the \ud83d emoji bug in the banner", "tags": ["\udc00x"]}')
        )
        captured = session.reply(1)["result"]
        assert not captured.get("isError"), captured
        summary = captured["structuredContent"]["summary"]
        assert summary == "fix the \ufffd emoji bug in the banner"
        # a pair written as two escapes is one character, not two repairs; an escaped backslash is no escape
        session.send(_call(2, "tempera_retrieve", r'{"query": "emoji \ud83d\ude00 banner \\ud83d"}'))
        found = session.reply(2)["result"]
        assert not found.get("isError"), found
        assert "fix the \ufffd emoji bug" in json.dumps(found, ensure_ascii=False)
        session.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}))
        assert session.reply(3)["result"]["tools"]
    finally:
        session.close()
