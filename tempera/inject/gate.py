"""Whether a hook call is acted on, decided the same way by the daemon that answers it and by the hook process that
keeps a capture the daemon could not take: the kill switch, `tempera pause`, `stop_hook_active`, then a capture
(Stop, PreCompact, SessionEnd) or the context answered (SessionStart, UserPromptSubmit; SessionStart by its source,
`sessionstart.py`) in Claude Code's output shape. Standard library only: the hook process runs `admitted`.

Hooks fail open: what goes wrong is written to hooks.log in the data dir, never printed.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from tempera.core import pause, paths
from tempera.inject import payload as payloads
from tempera.inject import sessionstart
from tempera.inject.payload import HookPayload

LOG_MAX_BYTES = 2 * 1024 * 1024
INJECTING = {"SessionStart", "UserPromptSubmit"}
CAPTURING = {"Stop", "PreCompact", "SessionEnd"}


def log(message: str) -> bool:
    """Append to hooks.log (0600), rotating once it grows past 2 MB, secrets redacted (a traceback may quote a
    payload); never raises: False when it could not. Redaction is imported here: compiling its patterns would slow
    every hook's start."""
    try:
        from tempera.core.redact import redact

        message = redact(message)
        d = paths.ensure_data_dir()
        p = d / paths.HOOK_LOG_NAME
        if p.exists() and p.stat().st_size > LOG_MAX_BYTES:
            os.replace(p, d / (paths.HOOK_LOG_NAME + ".1"))
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid={os.getpid()} {message.rstrip()}\n")
    except Exception:
        return False
    return True


def known_event(arg: str) -> str | None:
    """The Claude Code event a hook argument names; an unknown one is logged."""
    event = payloads.event_name(arg)
    if event is None:
        log(f"unknown hook event {arg!r}; expected session-start, user-prompt-submit, stop, pre-compact or session-end")
    return event


def admitted(event: str, doc: dict[str, Any], *, disabled: bool) -> HookPayload | None:
    """The payload of a call for a known `event` to act on: a capture to queue or a context to answer; None under
    the kill switch or `tempera pause`, for a Stop inside a stop hook, a capture without a transcript (logged), or a
    SessionStart whose source gets nothing."""
    if disabled:
        return None
    hp = payloads.parse(event, doc)
    if pause.paused_for_cwd(hp.cwd):  # `tempera pause`: nothing injected, nothing captured
        return None
    if event in CAPTURING:
        if event == "Stop" and hp.stop_hook_active:
            return None
        if not hp.transcript_path:
            log(f"{hp.event}: no transcript_path in the payload; nothing to capture")
            return None
        return hp
    if event not in INJECTING or not sessionstart.answered(hp):
        return None
    return hp


def output(event: str, context: str) -> dict[str, Any] | None:
    """Claude Code's shape of an injecting event's answer; None for no context."""
    if not context:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}


def output_bytes(out: dict[str, Any] | None) -> bytes:
    """What the hook prints: nothing, or one JSON object on one line."""
    return b"" if out is None else (json.dumps(out, ensure_ascii=False) + "\n").encode("utf-8")
