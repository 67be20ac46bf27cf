"""What tool calls say about a turn, without an LLM: files touched, commands, test runs, errors and whether they
were resolved. Pure functions over `ToolCall` lists, shared by the main agent and its subagents."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tempera.core.fingerprint import fingerprint
from tempera.core.redact import redact
from tempera.transcripts.reader import ORIGINAL_FILE

if TYPE_CHECKING:
    from tempera.transcripts.turns import ToolCall

READ_TOOLS = frozenset({"Read", "NotebookRead", "View"})
MODIFY_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "Replace"})
SHELL_TOOLS = frozenset({"Bash", "PowerShell"})
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
REJECTION_PREFIXES = (
    "The user doesn't want to proceed",
    "The user doesn't want to take this action",
    "[Request interrupted by user",
    "Claude requested permissions to",
)

_TEST_COMMAND = re.compile(
    r"(?:^|[\s;&|(])(?:"
    r"pytest|py\.test|python\d*(?:\.\d+)?\s+-m\s+(?:pytest|unittest)|tox|nox|"
    r"(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test\S*|npx\s+(?:jest|vitest|mocha|playwright\s+test)|jest|vitest|mocha|"
    r"go\s+test|cargo\s+(?:test|nextest)|mix\s+test|(?:bundle\s+exec\s+)?rspec|rake\s+test|phpunit|"
    r"mvn\s+(?:\S+\s+)*test|(?:\./)?gradlew?\s+(?:\S+\s+)*test|dotnet\s+test|make\s+(?:\S+\s+)*test\S*|ctest|"
    r"deno\s+test|swift\s+test|zig\s+build\s+test|(?:mise|just|task)\s+(?:run\s+)?test\S*|"
    r"python\d*(?:\.\d+)?\s+(?:\S+/)?(?:test_\w+|\w+_test)\.py)"
)
_FAIL_COUNT = re.compile(r"\b([1-9]\d*)\s+(?:failed|failing|failures?|errors?)\b", re.I)
_FAIL_MARK = re.compile(r"^(?:FAIL\b|FAILED\b|FAILURES\b|test result: FAILED|ERROR:)|Tests?:\s+\d+ failed", re.M | re.I)
_SUMMARY_LINE = re.compile(
    r"(?:\d+\s+(?:passed|failed|tests?|errors?|skipped)|test result:|Tests?:|^ok\s|^FAIL|"
    r"^PASS|\bOK\b)",
    re.I,
)
_SYSTEM_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.S)
_ERROR_LINE = re.compile(
    r"\b(?:error|exception|failed|failure|fatal|panic|traceback|not found|denied|refused|"
    r"cannot|can't|unable|invalid|undefined|no such)\b",
    re.I,
)
_EXIT_CODE = re.compile(r"^Exit code \d+\s*$")
_COMMIT = re.compile(r"^\[[^\]\s]+(?: \(root-commit\))? ([0-9a-f]{7,40})\] ?(.*)$", re.M)


@dataclass
class TestRunSeen:
    """A test command the agent ran, in call order (`position` indexes the turn's tool calls)."""

    __test__ = False  # not a pytest class
    command: str
    passed: bool
    summary: str
    call_id: str
    position: int


@dataclass
class ErrorSeen:
    message: str  # the most telling line of the failed call's output
    fingerprint: str  # stable across paths, line numbers, addresses (core.fingerprint)
    tool: str
    call_id: str
    position: int
    resolved: bool = False
    resolution: str | None = None


def strip_reminders(text: str) -> str:
    """Drop `<system-reminder>` blocks Claude Code appends to tool results and prompts (never the user's words)."""
    return _SYSTEM_REMINDER.sub("", text) if "<system-reminder>" in text else text


def file_path(call: "ToolCall") -> str | None:
    for key in ("file_path", "notebook_path", "path"):
        value = call.input.get(key)
        if isinstance(value, str) and value and (key != "path" or call.name in READ_TOOLS | MODIFY_TOOLS):
            return value
    return None


def is_rejection(call: "ToolCall") -> bool:
    """The user refused the call (permission prompt or interrupt): a signal about the request, not an error."""
    return call.result is not None and call.result.lstrip().startswith(REJECTION_PREFIXES)


def shell_command(call: "ToolCall") -> str | None:
    value = call.input.get("command")
    return value if call.name in SHELL_TOOLS and isinstance(value, str) and value.strip() else None


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def files_read(calls: list["ToolCall"]) -> list[str]:
    return _unique([file_path(c) or "" for c in calls if c.name in READ_TOOLS and not c.is_error])


def files_modified(calls: list["ToolCall"]) -> list[str]:
    return _unique(
        [file_path(c) or "" for c in calls if c.name in MODIFY_TOOLS and c.result is not None and not c.is_error]
    )


def edits(calls: list["ToolCall"]) -> list[tuple[str, str | None, str]]:
    """(file, text before, text after) of each successful Write, Edit and MultiEdit: the whole file before and after
    when Claude Code's result carried the file as it was (`originalFile`, reader.py) and each replaced text is in it,
    else the replaced and the new texts alone (a Write's before is None when it made the file)."""
    out = []
    for c in calls:
        path = file_path(c)
        if c.name not in ("Write", "Edit", "MultiEdit") or c.result is None or c.is_error or not path:
            continue
        original = c.output.get(ORIGINAL_FILE) if isinstance(c.output, dict) else None
        before = original if isinstance(original, str) else None
        if c.name == "Write":
            content = c.input.get("content")
            if isinstance(content, str):
                out.append((path, before, content))
            continue
        steps = c.input.get("edits") if c.name == "MultiEdit" else [c.input]
        pairs = [
            (e.get("old_string"), e.get("new_string"), e.get("replace_all") is True)
            for e in (steps if isinstance(steps, list) else [])
            if isinstance(e, dict)
        ]
        pairs = [(old, new, every) for old, new, every in pairs if isinstance(old, str) and isinstance(new, str)]
        after = before
        for old, new, every in pairs:
            after = after.replace(old, new, -1 if every else 1) if after is not None and old in after else None
        if before is not None and after is not None:
            out.append((path, before, after))
        else:
            out.extend((path, old, new) for old, new, _ in pairs)
    return out


def symbols_modified(calls: list["ToolCall"], limit: int) -> list[str]:
    """The definitions the turn's edits touched (`core/symbols.py` `touched`), by name, at most `limit`."""
    from tempera.core.symbols import touched

    found: dict[str, None] = {}
    for path, before, after in edits(calls):
        found.update(dict.fromkeys(touched(path, before, after)))
    return list(found)[:limit]


def commands(calls: list["ToolCall"]) -> list[str]:
    return _unique([shell_command(c) or "" for c in calls])


def is_test_command(command: str) -> bool:
    return bool(_TEST_COMMAND.search(command))


def _test_failed(call: "ToolCall") -> bool:
    text = call.result or ""
    return call.is_error or bool(_FAIL_MARK.search(text)) or bool(_FAIL_COUNT.search(text))


def _last_summary(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in reversed(lines):
        if _SUMMARY_LINE.search(line):
            return line[:200]
    return lines[-1][:200] if lines else ""


_COUNT = re.compile(r"\b\d+ (?:passed|pass|failed|fail|failing|skipped|errors?|tests?)\b", re.I)


def test_counts(summary: str) -> str:
    """The counts a test run's summary line gives ("1290 passed, 2 skipped"; "" for `ok  pkg  0.3s`)."""
    return ", ".join(m.group(0) for m in _COUNT.finditer(summary))


def test_passed(call: "ToolCall") -> bool | None:
    """Whether a call that ran tests passed; None for any other call."""
    cmd = shell_command(call)
    if cmd and call.result is not None and not is_rejection(call) and is_test_command(cmd):
        return not _test_failed(call)
    return None


SUMMARY_TAIL = 4096  # a test run's summary line is among its last lines: only those are redacted and searched


def test_runs(calls: list["ToolCall"]) -> list[TestRunSeen]:
    runs = []
    for pos, call in enumerate(calls):
        passed = test_passed(call)
        if passed is not None:
            tail = redact((call.result or "")[-SUMMARY_TAIL:])
            runs.append(TestRunSeen(shell_command(call) or "", passed, _last_summary(tail), call.id, pos))
    return runs


def error_message(output: str) -> str:
    """The line that names the failure: a traceback's last line, else the first line that sounds like an error.
    The output is redacted first: picking one line out of a multi-line secret would defeat the patterns."""
    lines = [ln.strip() for ln in redact(strip_reminders(output)).splitlines()]
    lines = [ln for ln in lines if ln and not _EXIT_CODE.match(ln)]
    if not lines:
        return "failed without output"
    text = "\n".join(lines)
    if "Traceback (most recent call last)" in text:
        tail = [ln for ln in lines if not ln.startswith(("File ", "^", "~"))]
        return tail[-1][:300]
    for line in lines:
        if _ERROR_LINE.search(line):
            return re.sub(r"</?tool_use_error>", "", line)[:300]
    return re.sub(r"</?tool_use_error>", "", lines[0])[:300]


def _target(call: "ToolCall") -> tuple[str, str]:
    """What a call acts on, to tell whether a later call retried the same thing."""
    cmd = shell_command(call)
    if cmd:
        try:
            head = shlex.split(cmd)[:3]
        except ValueError:
            head = cmd.split()[:3]
        return call.name, " ".join(head)
    kind = "modify" if call.name in MODIFY_TOOLS else "read" if call.name in READ_TOOLS else call.name
    return kind, file_path(call) or ""


def errors(calls: list["ToolCall"]) -> list[ErrorSeen]:
    """Failed calls (not refusals), each marked resolved when the same target later succeeded or a later
    test run passed after a failing one."""
    found = []
    for pos, call in enumerate(calls):
        if not call.is_error or call.result is None or is_rejection(call):
            continue
        msg = error_message(call.result)
        err = ErrorSeen(msg, fingerprint(msg), call.name, call.id, pos)
        _resolve(err, call, calls[pos + 1 :], pos)
        found.append(err)
    return found


def _resolve(err: ErrorSeen, failed: "ToolCall", later: list["ToolCall"], pos: int) -> None:
    target = _target(failed)
    failed_cmd = shell_command(failed) or ""
    was_test = is_test_command(failed_cmd)
    edits: list[str] = []
    for call in later:
        if call.name in MODIFY_TOOLS and not call.is_error and call.result is not None:
            edits.append(file_path(call) or call.name)
        if call.is_error or call.result is None:
            continue
        cmd = shell_command(call) or ""
        same = _target(call) == target
        if same or (was_test and is_test_command(cmd) and not _test_failed(call)):
            err.resolved = True
            what = f"`{cmd}`" if cmd else f"{call.name} {file_path(call) or ''}".strip()
            changed = f"after editing {', '.join(_unique(edits)[:5])}, " if edits else ""
            err.resolution = redact(f"{changed}{what} succeeded")[:300]
            return


def commit_made(call: "ToolCall") -> tuple[str, str] | None:
    """(hash, subject) of the commit a successful `git commit` call reported, e.g. `[main 1a2b3c4] message`."""
    cmd = shell_command(call) or ""
    if "git commit" not in cmd or not call.result or call.is_error:
        return None
    m = _COMMIT.search(call.result)
    return (m.group(1), m.group(2).strip()) if m else None


def commit_hash(calls: list["ToolCall"]) -> str | None:
    """The last commit the calls made."""
    made = [c for c in (commit_made(call) for call in calls) if c]
    return made[-1][0] if made else None
