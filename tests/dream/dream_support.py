"""Helpers of the dream tests: a transcript written for them (project /home/dev/ledger, several days, with a
reversed decision and a bug that came back) and small readers of what a cycle left behind."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

LEDGER = "/home/dev/ledger"  # need not exist: the project then resolves to this path


class WrittenSession:
    """Claude Code 2.1-shaped records: prompt, tool_use/tool_result pairs, a closing text, parentUuid-chained."""

    def __init__(self, path: Path, session_id: str, cwd: str = LEDGER):
        self.path, self.session_id, self.cwd = path, session_id, cwd
        self.parent: str | None = None
        self.clock = datetime(2026, 1, 1, tzinfo=timezone.utc)
        path.parent.mkdir(parents=True, exist_ok=True)

    def _emit(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        self.clock += timedelta(seconds=7)
        uid = str(uuid.uuid4())
        rec = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": "2.1.38",
            "gitBranch": "main",
            "type": kind,
            "uuid": uid,
            "timestamp": self.clock.isoformat().replace("+00:00", "Z"),
            "message": message,
            **extra,
        }
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")
        self.parent = uid

    def _call(self, name: str, args: dict[str, Any], output: str, failed: bool = False) -> None:
        call = "toolu_" + uuid.uuid4().hex[:20]
        self._emit(
            "assistant",
            {
                "id": "msg_" + uuid.uuid4().hex[:20],
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [{"type": "tool_use", "id": call, "name": name, "input": args}],
            },
        )
        self._emit(
            "user",
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call, "content": output, "is_error": failed}],
            },
            toolUseResult={"stdout": output, "stderr": ""},
        )

    def turn(
        self, at: datetime, prompt: str, reply: str, *, edit: str, tests_pass: bool = True, error: str | None = None
    ) -> None:
        """The user asks, the agent edits one file (after a failing run that shows `error`, if given), runs the
        tests and answers."""
        self.clock = at
        self._emit("user", {"role": "user", "content": prompt})
        if error:
            self._call(
                "Bash",
                {"command": "pytest -q"},
                f"Exit code 1\nFAILED tests/test_totals.py::test_totals - {error}\n1 failed, 4 passed",
                True,
            )
        self._call(
            "Edit",
            {"file_path": f"{self.cwd}/{edit}", "old_string": "a", "new_string": "b"},
            f"The file {self.cwd}/{edit} has been updated.",
        )
        summary = "5 passed in 0.20s" if tests_pass else "1 failed, 4 passed in 0.22s"
        self._call("Bash", {"command": "pytest -q"}, ("" if tests_pass else "Exit code 1\n") + summary, not tests_pass)
        self._emit(
            "assistant",
            {
                "id": "msg_" + uuid.uuid4().hex[:20],
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [{"type": "text", "text": reply}],
            },
        )


def day(d: int, hour: int = 10) -> datetime:
    return datetime(2026, 3, d, hour, tzinfo=timezone.utc)


def write_ledger(path: Path) -> Path:
    """Four days in /home/dev/ledger: verbose output through logging, then explicitly not; a totals rounding bug
    fixed, broken again, fixed again."""
    s = WrittenSession(path, "5f1c2b7a-0d4e-4b8a-9c61-7e2d1a3b4c50")
    s.turn(
        day(1),
        "Use the standard logging module for verbose output in src/ledger/cli.py",
        "Verbose output now goes through the logging module at DEBUG level.",
        edit="src/ledger/cli.py",
    )
    s.turn(
        day(1, 11),
        "Fix the rounding of totals in src/ledger/totals.py",
        "Totals now round half even; the failing test passes.",
        edit="src/ledger/totals.py",
        error="AssertionError: totals 10.01 != 10.0",
    )
    s.turn(
        day(2),
        "Don't use logging for verbose output in src/ledger/cli.py, print to stderr instead",
        "Verbose output no longer uses logging; it prints to stderr.",
        edit="src/ledger/cli.py",
    )
    s.turn(
        day(2, 11),
        "The totals rounding in src/ledger/totals.py is wrong again, fix it",
        "I couldn't get test_totals to pass; the rounding of totals still differs by a cent.",
        edit="src/ledger/totals.py",
        tests_pass=False,
    )
    s.turn(
        day(3),
        "Round the totals in src/ledger/totals.py half up, like the invoices do",
        "Totals round half up now and test_totals passes.",
        edit="src/ledger/totals.py",
    )
    return path


def pages(root: Path) -> dict[str, str]:
    """Every file under root (relative path -> text); temporary files would show up here too."""
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*")) if p.is_file()}
