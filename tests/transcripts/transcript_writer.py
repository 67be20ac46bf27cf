"""Writes transcripts in Claude Code 2.1's shape (one record per content block sharing `message.id`, parentUuid
chain, toolUseResult, sessionId/cwd/version), appending line by line like the real CLI, so tests can grow a file
between captures."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any


class SessionWriter:
    def __init__(
        self,
        path: Path,
        *,
        session_id: str = "0b7c3a52-5d1e-4a57-9b61-3f0d1c2e4a10",
        cwd: str = "/nonexistent/work/shop",
        start: datetime | None = None,
    ):
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.clock = start or datetime(2025, 6, 2, 9, 0, tzinfo=timezone.utc)
        self.last: str | None = None
        path.parent.mkdir(parents=True, exist_ok=True)

    def _base(self, kind: str, parent: str | None) -> dict[str, Any]:
        self.clock += timedelta(seconds=5)
        return {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": "2.1.197",
            "gitBranch": "main",
            "type": kind,
            "uuid": str(uuid.uuid4()),
            "timestamp": self.clock.isoformat().replace("+00:00", "Z"),
        }

    def raw(self, obj: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")

    def _add(self, record: dict[str, Any]) -> str:
        self.raw(record)
        self.last = record["uuid"]
        return record["uuid"]

    def prompt(self, text: str, *, parent: str | None = "last") -> str:
        rec = self._base("user", self.last if parent == "last" else parent)
        rec["message"] = {"role": "user", "content": text}
        return self._add(rec)

    def _assistant(self, msg_id: str, block: dict[str, Any]) -> str:
        rec = self._base("assistant", self.last)
        rec["message"] = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [block],
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        return self._add(rec)

    def say(self, text: str) -> str:
        return self._assistant("msg_" + uuid.uuid4().hex[:20], {"type": "text", "text": text})

    def tool(
        self, name: str, tool_input: dict[str, Any], result: str, *, is_error: bool = False, text: str | None = None
    ) -> str:
        """An assistant message (optional text + tool_use, one record each) and its tool_result."""
        msg_id = "msg_" + uuid.uuid4().hex[:20]
        if text:
            self._assistant(msg_id, {"type": "text", "text": text})
        call_id = "toolu_" + uuid.uuid4().hex[:20]
        self._assistant(msg_id, {"type": "tool_use", "id": call_id, "name": name, "input": tool_input})
        rec = self._base("user", self.last)
        rec["message"] = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result, "is_error": is_error}],
        }
        rec["toolUseResult"] = ("Error: " + result) if is_error else {"stdout": result, "stderr": ""}
        self._add(rec)
        return call_id

    def bash(self, command: str, output: str, *, ok: bool = True) -> str:
        return self.tool("Bash", {"command": command}, output if ok else f"Exit code 1\n{output}", is_error=not ok)

    def attachment(self, attachment: dict[str, Any]) -> str:
        rec = self._base("attachment", self.last)
        rec["attachment"] = attachment
        return self._add(rec)
