"""Tempera's entries in the `hooks` object of Claude Code's settings.json: add, update and remove exactly ours.

An entry is ours when it runs `<python> -I -S <path>/tempera/hooks/relay.py <verb>` (what install writes:
the warm path without importing the package, see relay.py) or `<path>/tempera-hook <verb>` (earlier installs)
and nothing else, so the user's hooks, even in the same event and the same matcher group, are never touched.
Install writes the exec form (`command` the program, `args` the rest): Claude Code then spawns Python directly
instead of through `sh -c`, one process less per hook; the shell form of earlier installs is recognised too.
Ours is updated where it stands, so a second install changes nothing and the order the user chose stays.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

from tempera.core.errors import InvalidInput
from tempera.installer.jsontext import ABSENT, Absent, json_type, object_copy

HOOK_EXECUTABLE = "tempera-hook"
RELAY_FLAGS = ["-I", "-S"]  # isolated, no site: see relay.py
RELAY_SUFFIX = os.path.join("tempera", "hooks", "relay.py")
# PreCompact queues a capture of the work the compaction is about to summarise (a long autonomous turn can run
# for hours between two Stops); SessionEnd queues one for a session that ends without a last Stop. SubagentStop
# is not registered: a subagent's transcript is read with its parent's at the parent's next capture, and a
# compaction fires it too (agent_type "").
HOOK_EVENTS: dict[str, str] = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "Stop": "stop",
    "PreCompact": "pre-compact",
    "SessionEnd": "session-end",
}
HOOK_TIMEOUT_S = 10  # Claude Code counts hook timeouts in seconds


def hook_entry(program: list[str], verb: str) -> dict[str, Any]:
    """The exec form of `program verb`: no shell between Claude Code and the hook."""
    return {"type": "command", "command": program[0], "args": [*program[1:], verb], "timeout": HOOK_TIMEOUT_S}


def entry_argv(entry: object) -> list[str] | None:
    """What a command hook entry runs: `command` + `args` in the exec form, the words of `command` in the shell
    form; None for anything else."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return None
    args = entry.get("args")
    if args is not None:
        ok = isinstance(args, list) and all(isinstance(a, str) for a in args)
        return [entry["command"], *args] if ok else None
    try:
        return shlex.split(entry["command"])
    except ValueError:
        return None


def program_files(argv: list[str]) -> list[str] | None:
    """The files one of our commands runs ([tempera-hook] or [python, relay.py]), or None if it is not ours."""
    if len(argv) == 2 and os.path.basename(argv[0]) == HOOK_EXECUTABLE:
        return [argv[0]]
    if len(argv) == 5 and argv[1:3] == RELAY_FLAGS and argv[3].endswith(os.sep + RELAY_SUFFIX):
        return [argv[0], argv[3]]
    return None


def owned_verb(entry: object) -> str | None:
    """The verb when this hook entry is one of ours (either program, either form, any path), else None."""
    argv = entry_argv(entry)
    return argv[-1] if argv and program_files(argv) else None


def with_hooks(hooks: object, program: list[str]) -> dict[str, Any]:
    """`hooks` (it may be ABSENT) with an entry of ours for every event in HOOK_EVENTS, running `program <verb>`."""
    new = _checked_copy(hooks)
    for event, verb in HOOK_EVENTS.items():
        desired = hook_entry(program, verb)
        groups, placed, _ = _strip(new.get(event, []), desired)
        if not placed:
            groups.append({"matcher": "", "hooks": [desired]})
        new[event] = groups
    return new


def without_hooks(hooks: object) -> dict[str, Any] | Absent:
    """`hooks` without any entry of ours; a group, event or the whole object that our removal emptied goes too
    (ABSENT: drop `hooks`). What the user left empty stays empty."""
    if hooks is ABSENT:
        return ABSENT
    new = _checked_copy(hooks)
    removed_any = False
    for event in list(new):
        groups, _, removed = _strip(new[event], None)
        if removed and not groups:
            del new[event]
        else:
            new[event] = groups
        removed_any = removed_any or removed
    return ABSENT if removed_any and not new else new


def owned_command(hooks: object, event: str, verb: str) -> str | None:
    """The command line of our entry for (event, verb), for status; tolerant of any shape."""
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    for group in groups if isinstance(groups, list) else []:
        entries = group.get("hooks") if isinstance(group, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if owned_verb(entry) == verb:
                return shlex.join(entry_argv(entry) or [])
    return None


def _checked_copy(hooks: object) -> dict[str, Any]:
    """A deep copy to edit, after refusing shapes Claude Code itself would reject."""
    new = object_copy(hooks, "hooks")
    for event, groups in new.items():
        if not isinstance(groups, list):
            raise InvalidInput(f"`hooks.{event}` must be an array, not {json_type(groups)}")
    return new


def _strip(groups: list[Any], replacement: dict[str, Any] | None) -> tuple[list[Any], bool, bool]:
    """Groups with our entries taken out; the first one is swapped for `replacement` when given.

    Returns (groups, placed, removed). A group whose `hooks` our removal emptied is dropped; groups of a shape we
    do not know are foreign and kept as they are.
    """
    placed = removed = False
    out: list[Any] = []
    for group in groups:
        entries = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(entries, list) or not any(owned_verb(e) for e in entries):
            out.append(group)
            continue
        kept = []
        for entry in entries:
            if owned_verb(entry) is None:
                kept.append(entry)
            elif replacement is not None and not placed:
                kept.append(replacement)
                placed = True
            else:
                removed = True
        if kept:
            out.append({**group, "hooks": kept})
    return out, placed, removed
