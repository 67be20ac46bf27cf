"""Argument types shared by the tools: each carries its bounds and description into the published input schema.

Bounds live in the schema rather than in tool bodies so a client sees them before calling, and a call outside
them is refused by validation (a tool error saying what to send) before any memory is opened. Lengths match what
the core stores: a longer text would otherwise be cut silently (logs keep 4,000 characters) or refused late.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from tempera.core.models import TASK_TYPES

MAX_TEXT = 4000  # what a mistakes / should-have-asked row keeps of one field
MAX_SUMMARY = 20_000  # capture.max_summary_chars default; a lower configured cap is enforced by the core
MAX_PATH = 4096
MAX_ITEMS = 500

TaskType = Literal[TASK_TYPES]  # type: ignore[valid-type]
Outcome = Literal["success", "partial", "failure"]  # OUTCOMES but "unknown", which only transcripts leave open

Project = Annotated[
    str | None,
    Field(
        description="Project path, name or id. Default: the client's first root, else the server's working directory "
        "(the same project the hooks use).",
        min_length=1,
        max_length=MAX_PATH,
    ),
]
Files = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=MAX_PATH)]],
    Field(description="File paths, relative to the project root (or absolute).", max_length=MAX_ITEMS),
]
Words = Annotated[list[Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]], Field(max_length=MAX_ITEMS)]
Domain = Annotated[str | None, Field(description="Domain tag, e.g. auth-middleware.", min_length=1, max_length=200)]
Scope = Annotated[
    str | None,
    Field(
        description="Validity scope: project (default, never leaves this project) | forever | language:NAME | "
        "crate:NAME@VERSION | domain:TAG | workaround:REF[@YYYY-MM-DD].",
        min_length=1,
        max_length=300,
    ),
]
SessionId = Annotated[str | None, Field(description="Claude Code session id.", min_length=1, max_length=200)]
EpisodeRef = Annotated[
    str | None, Field(description="Episode id or a prefix of 8+ hex characters.", min_length=8, max_length=64)
]


def text(description: str, *, required: bool = True, limit: int = MAX_TEXT) -> object:
    """A non-empty text field of at most `limit` characters (the empty string is no answer to a question)."""
    return Field(description=description, min_length=1 if required else 0, max_length=limit)
