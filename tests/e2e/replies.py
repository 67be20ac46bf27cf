"""Scripted model replies for the stub: the agent's moves, written as what a model would answer.

Why fixed tool-use ids: a test can then find the exact result Claude Code sent back for one call (in the next model
request) and match the transcript's tool calls one to one against what the script did.
"""

from __future__ import annotations

from typing import Any

from messages_stub import Reply


def say(text: str) -> Reply:
    """The agent's closing words: the turn ends."""
    return {"text": text}


def call(tool: str, tool_input: dict[str, Any], *, id: str, text: str = "") -> Reply:
    return {"text": text, "tool_use": {"id": id, "name": tool, "input": tool_input}}


def bash(command: str, *, id: str, text: str = "") -> Reply:
    return call("Bash", {"command": command, "description": "Run a command"}, id=id, text=text)


def write(path: str, content: str, *, id: str) -> Reply:
    return call("Write", {"file_path": path, "content": content}, id=id)


def edit(path: str, old: str, new: str, *, id: str) -> Reply:
    return call("Edit", {"file_path": path, "old_string": old, "new_string": new}, id=id)


def read(path: str, *, id: str) -> Reply:
    return call("Read", {"file_path": path}, id=id)


def subagent(description: str, prompt: str, *, id: str) -> Reply:
    """Claude Code's subagent tool (`Agent`, called `Task` before 2.1), in the foreground so the script's order holds:
    the subagent's own requests come next, then the main agent's."""
    return call(
        "Agent",
        {"description": description, "prompt": prompt, "subagent_type": "general-purpose", "run_in_background": False},
        id=id,
    )
