"""The wrapper around every block of context Tempera injects, so capture can strip it (memory never feeds on
itself). Standard library only: the hooks import it."""

from __future__ import annotations

import re

OPEN = "<tempera-memory>"
CLOSE = "</tempera-memory>"
_BLOCK = re.compile(re.escape(OPEN) + r".*?(?:" + re.escape(CLOSE) + r"|\Z)", re.S)


def wrap(text: str) -> str:
    return f"{OPEN}\n{text.strip()}\n{CLOSE}"


def strip_injected(text: str) -> str:
    """Remove every injected block (an unclosed one runs to the end of the text)."""
    return _BLOCK.sub("", text) if OPEN in text else text
