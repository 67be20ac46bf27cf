"""What Claude Code sends a hook on stdin, as an immutable record: parsed here for the hook process (its stdin) and
for the daemon (the stdin relay.py forwards). Standard library only (and no dataclasses: their import costs ~4 ms
on every turn).

Missing or mistyped fields become "" / None / False and never raise: a hook must answer whatever arrives.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from tempera.core.surrogates import repair

MAX_STDIN_BYTES = 4 * 1024 * 1024
MAX_PROMPT_CHARS = 20_000  # retrieval reads the start of a huge prompt; the rest adds nothing but latency

EVENTS = {
    "session-start": "SessionStart",
    "sessionstart": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "userpromptsubmit": "UserPromptSubmit",
    "stop": "Stop",
    "pre-compact": "PreCompact",
    "precompact": "PreCompact",
    "session-end": "SessionEnd",
    "sessionend": "SessionEnd",
}


def event_name(arg: str) -> str | None:
    """`session-start` or `SessionStart` (any case, _ or -) -> the Claude Code event name."""
    key = arg.strip().lower().replace("_", "-")
    return EVENTS.get(key) or EVENTS.get(key.replace("-", ""))


class HookPayload(NamedTuple):
    event: str
    session_id: str = ""
    transcript_path: str = ""
    cwd: str = ""
    source: str = ""
    prompt: str = ""
    stop_hook_active: bool = False

    @property
    def searches(self) -> bool:
        """Whether the answer is about `prompt`: at UserPromptSubmit, and at SessionStart after a compaction, where
        `prompt` is the work in progress (inject/sessionstart.py)."""
        return self.event == "UserPromptSubmit" or (self.event == "SessionStart" and self.source == "compact")


def _str(d: dict[str, Any], key: str, limit: int = 4096) -> str:
    """The field's text, cut to `limit`, lone surrogates repaired (Claude Code cuts strings inside emoji)."""
    v = d.get(key)
    return repair(v[:limit]) if isinstance(v, str) else ""


def decode(raw: bytes) -> dict[str, Any]:
    """The JSON object in what arrived on stdin, or {} for empty input, bad JSON or a non-object."""
    if len(raw) > MAX_STDIN_BYTES:
        raw = b""  # a payload this large is not from Claude Code; answer nothing rather than guess
    try:
        doc = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
    except (ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def parse(event: str, doc: dict[str, Any]) -> HookPayload:
    return HookPayload(
        event=event,
        session_id=_str(doc, "session_id", 200),
        transcript_path=_str(doc, "transcript_path"),
        cwd=_str(doc, "cwd"),
        source=_str(doc, "source", 50),
        prompt=_str(doc, "prompt", MAX_PROMPT_CHARS),
        stop_hook_active=doc.get("stop_hook_active") is True,
    )
