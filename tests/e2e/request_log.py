"""Reading the stub's request log: what Claude Code actually put in front of the model.

Why a module of its own: every scenario asserts on the model request, and Claude Code moves context around between
versions (hook context has travelled between the system prompt, a `system` message and `<system-reminder>` text in
the user turn). So the assertions look at all text of a request, wherever it sits.
"""

from __future__ import annotations

import re
from typing import Any

from tempera.core.marker import CLOSE, OPEN
from tempera.inject.render import HEADER_PROMPT

Entry = dict[str, Any]  # one logged request: {method, path, body, step}
_MEMORY = re.compile(re.escape(OPEN) + r"(.*?)" + re.escape(CLOSE), re.S)


def agent_requests(entries: list[Entry]) -> list[Entry]:
    """The agent loop's requests (they carry tools), in the order Claude Code sent them."""
    return [
        e
        for e in entries
        if e["method"] == "POST"
        and isinstance(e.get("body"), dict)
        and e["body"].get("tools")
        and "count_tokens" not in e["path"]
    ]


def _texts(content: Any) -> list[str]:
    """All text inside one `content` value: a string, or blocks (text, tool_result, nested content)."""
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if isinstance(block.get("text"), str):
            out.append(block["text"])
        if "content" in block:
            out += _texts(block["content"])
    return out


def request_text(entry: Entry) -> str:
    """The system prompt and every message of one request, as one text."""
    body = entry.get("body") or {}
    parts = _texts(body.get("system"))
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            parts += _texts(message.get("content"))
    return "\n".join(parts)


def memory_blocks(entry: Entry) -> list[str]:
    """The insides of every `<tempera-memory>` block the request holds."""
    return [m.strip() for m in _MEMORY.findall(request_text(entry))]


def prompt_blocks(entry: Entry) -> list[str]:
    """Blocks the UserPromptSubmit retrieval wrote (past work related to the prompt)."""
    return [b for b in memory_blocks(entry) if HEADER_PROMPT in b]


def tool_result(entries: list[Entry], tool_use_id: str) -> tuple[str, bool] | None:
    """The text and is_error flag of the tool result that answers `tool_use_id`, from the first request holding it."""
    for entry in agent_requests(entries):
        for message in entry["body"].get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "tool_result"
                    and block.get("tool_use_id") == tool_use_id
                ):
                    return "\n".join(_texts(block.get("content"))), bool(block.get("is_error"))
    return None
