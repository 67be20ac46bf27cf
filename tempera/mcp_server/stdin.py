"""The server's stdin, one JSON-RPC message a line, with lone UTF-16 surrogates repaired before the SDK reads it.

A client may send `"\\ud83d"` (Claude Code writes one when it cuts a string inside an emoji). The SDK's strict
JSON parser refuses the whole line, and a message it cannot parse has no id to answer, so the call would wait
for ever. Python's json accepts the escape; each lone surrogate becomes U+FFFD (core/surrogates.py) and the
message is written back as JSON the SDK accepts. Lines without such an escape pass untouched.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from io import TextIOWrapper

import anyio

from tempera.core.surrogates import repair_data

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def repair_line(line: str) -> str:
    """The line with each lone surrogate escape's character replaced (pairs stay one character)."""
    if not _SURROGATE_ESCAPE.search(line):
        return line
    try:
        message = json.loads(line)
    except ValueError:  # not JSON at all: the SDK answers that itself
        return line
    return json.dumps(repair_data(message), ensure_ascii=False) + "\n"


class RepairedStdin:
    """What `stdio_server(stdin=...)` iterates: the wire's lines, repaired. The wire is moved off fd 0 (which then
    reads the null device) so a child process a tool starts can never read the protocol, as the SDK's own stdin
    claim does."""

    def __init__(self) -> None:
        wire = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        self._lines = anyio.wrap_file(TextIOWrapper(os.fdopen(wire, "rb"), encoding="utf-8", errors="replace"))

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines:
            yield repair_line(line)
