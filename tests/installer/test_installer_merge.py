"""Which hook and MCP entries are ours, and how install/uninstall change exactly those."""

from __future__ import annotations

import copy
import json

import pytest
from installer_support import SETTINGS, foreign_commands

from tempera.core.errors import InvalidInput
from tempera.installer.hookconfig import HOOK_EVENTS, owned_verb, with_hooks, without_hooks
from tempera.installer.jsontext import ABSENT
from tempera.installer.mcpconfig import SERVER_NAME, server_entry, with_server, without_server

PROGRAM = ["/opt/venv/bin/python", "-I", "-S", "/opt/venv/lib/python3.11/site-packages/tempera/hooks/relay.py"]
EXE = " ".join(PROGRAM)


def cmd(command: str) -> dict[str, str]:
    return {"type": "command", "command": command}


@pytest.mark.parametrize(
    ("command", "verb"),
    [
        ("/opt/venv/bin/tempera-hook stop", "stop"),
        ("'/Users/me/My Tools/bin/tempera-hook' user-prompt-submit", "user-prompt-submit"),
        ("tempera-hook session-start", "session-start"),
        ("  tempera-hook   pre-compact ", "pre-compact"),
        ("echo hi && tempera-hook stop", None),
        ("tempera-hook", None),
        ("python tempera-hook stop", None),
        ("/bin/not-tempera-hook stop", None),
        ("tempera-hook 'stop", None),
        ("/opt/venv/bin/python -I -S /opt/venv/lib/tempera/hooks/relay.py stop", "stop"),
        (
            "'/My Tools/python3' -I -S '/My Tools/site-packages/tempera/hooks/relay.py' user-prompt-submit",
            "user-prompt-submit",
        ),
        ("/opt/venv/bin/python -S /opt/venv/lib/tempera/hooks/relay.py stop", None),
        ("/opt/venv/bin/python -I -S /opt/venv/lib/mine/relay.py stop", None),
        ("/opt/venv/bin/python -I -S /opt/venv/lib/tempera/hooks/relay.py stop now", None),
    ],
)
def test_owned_verb(command: str, verb: str | None) -> None:
    assert owned_verb(cmd(command)) == verb


def test_owned_verb_ignores_other_shapes() -> None:
    assert owned_verb("tempera-hook stop") is None
    assert owned_verb({"type": "command", "command": ["tempera-hook", "stop"]}) is None
    assert owned_verb({"type": "command", "command": PROGRAM[0], "args": "-I -S relay.py stop"}) is None


def test_owned_verb_reads_the_exec_form() -> None:
    assert owned_verb({"type": "command", "command": PROGRAM[0], "args": [*PROGRAM[1:], "stop"]}) == "stop"
    assert owned_verb({"type": "command", "command": "/opt/bin/tempera-hook", "args": ["session-end"]}) == "session-end"
    assert owned_verb({"type": "command", "command": PROGRAM[0], "args": [*PROGRAM[1:], "stop", "x"]}) is None


def test_with_hooks_on_absent_and_roundtrip() -> None:
    hooks = with_hooks(ABSENT, PROGRAM)
    assert list(hooks) == list(HOOK_EVENTS)
    assert list(HOOK_EVENTS) == ["SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"]
    assert hooks["Stop"] == [
        {
            "matcher": "",
            "hooks": [{"type": "command", "command": PROGRAM[0], "args": [*PROGRAM[1:], "stop"], "timeout": 10}],
        }
    ]
    assert with_hooks(hooks, PROGRAM) == hooks
    assert without_hooks(hooks) is ABSENT


def test_foreign_hooks_in_the_same_group_are_kept() -> None:
    original = json.loads(SETTINGS)["hooks"]
    before = copy.deepcopy(original)
    hooks = with_hooks(original, PROGRAM)
    assert original == before  # input not mutated
    assert foreign_commands({"hooks": before}) <= foreign_commands({"hooks": hooks})
    assert hooks["SessionStart"][0] == before["SessionStart"][0]
    shared = {"Stop": [{"matcher": "", "hooks": [cmd("a.sh"), cmd(f"{EXE} stop"), cmd("b.sh")]}]}
    assert without_hooks(shared) == {"Stop": [{"matcher": "", "hooks": [cmd("a.sh"), cmd("b.sh")]}]}
    assert without_hooks(hooks) == before


def test_uninstall_prunes_only_what_it_emptied() -> None:
    hooks = {
        "Notification": [],
        "PreToolUse": [{"matcher": "Bash", "hooks": []}],
        "Stop": [{"matcher": "", "hooks": [cmd(f"{EXE} stop")]}, {"hooks": [cmd("mine.sh")]}],
        "PreCompact": [{"matcher": "", "hooks": [cmd(f"{EXE} pre-compact")]}],
    }
    assert without_hooks(hooks) == {
        "Notification": [],
        "PreToolUse": [{"matcher": "Bash", "hooks": []}],
        "Stop": [{"hooks": [cmd("mine.sh")]}],
    }
    assert without_hooks({"Notification": []}) == {"Notification": []}


def test_duplicates_of_ours_collapse_to_one_in_place() -> None:
    hooks = {
        "Stop": [
            {"matcher": "", "hooks": [cmd("/old/tempera-hook stop")]},
            {"matcher": "", "hooks": [cmd("x.sh"), cmd("/older/tempera-hook stop")]},
        ]
    }
    assert with_hooks(hooks, PROGRAM)["Stop"] == [
        {
            "matcher": "",
            "hooks": [{"type": "command", "command": PROGRAM[0], "args": [*PROGRAM[1:], "stop"], "timeout": 10}],
        },
        {"matcher": "", "hooks": [cmd("x.sh")]},
    ]


def test_groups_of_unknown_shape_are_left_alone() -> None:
    hooks = {"Stop": ["weird", {"matcher": ""}, {"hooks": "tempera-hook stop"}]}
    assert with_hooks(hooks, PROGRAM)["Stop"][:3] == hooks["Stop"]
    assert without_hooks(hooks) == hooks


@pytest.mark.parametrize(
    ("hooks", "message"),
    [
        ([], "`hooks` must be an object, not an array"),
        (None, "`hooks` must be an object, not null"),
        ({"Stop": {"hooks": []}}, "`hooks.Stop` must be an array, not an object"),
        ({"PreToolUse": "guard.sh"}, "`hooks.PreToolUse` must be an array, not a string"),
    ],
)
def test_bad_hooks_shapes_refused(hooks: object, message: str) -> None:
    for change in (lambda h: with_hooks(h, PROGRAM), without_hooks):
        with pytest.raises(InvalidInput) as err:
            change(hooks)
        assert str(err.value) == message


def test_mcp_server_added_replaced_and_removed() -> None:
    other = {"github": {"command": "npx", "args": ["-y", "gh"]}}
    servers = with_server(other, "/opt/venv/bin/tempera-mcp")
    assert list(servers) == ["github", SERVER_NAME] and servers["github"] == other["github"]
    assert servers[SERVER_NAME] == {"type": "stdio", "command": "/opt/venv/bin/tempera-mcp", "args": [], "env": {}}
    assert with_server({SERVER_NAME: server_entry("/old/tempera-mcp"), **other}, "/new/tempera-mcp") == {
        SERVER_NAME: server_entry("/new/tempera-mcp"),
        **other,
    }
    assert without_server(servers) == other
    assert without_server(other) == other
    assert without_server(with_server(ABSENT, "/x/tempera-mcp")) is ABSENT
    assert without_server(ABSENT) is ABSENT
    with pytest.raises(InvalidInput, match="`mcpServers` must be an object, not an array"):
        with_server([], "/x/tempera-mcp")
