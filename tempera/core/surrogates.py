"""Repairing lone UTF-16 surrogates in text that comes from outside (transcripts, hook payloads, `tempera capture`
input, MCP tool arguments).

Claude Code writes one when it cuts a string inside an emoji (`"fix the \\ud83d emoji bug"` in its JSON); Python's
json reads the escape back as an unpaired surrogate, which no UTF-8 encoder, tokenizer or JSON serialiser accepts,
so one such character would block the text for good. Each becomes U+FFFD. Standard library only: the hooks use it.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
# In a str, every surrogate code point is lone: json decodes an escaped pair into the one character it encodes.
_SURROGATE = re.compile("[\ud800-\udfff]")


def repair(text: str) -> str:
    """The text with each lone surrogate replaced by U+FFFD."""
    return text if text.isascii() else _SURROGATE.sub(REPLACEMENT, text)


def repair_data(value: Any) -> Any:
    """`repair` applied to every string (keys included) inside nested dicts and lists."""
    if isinstance(value, str):
        return repair(value)
    if isinstance(value, dict):
        return {repair_data(k): repair_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [repair_data(v) for v in value]
    return value
