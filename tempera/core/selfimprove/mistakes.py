"""The mistakes log: corrections a user made to the agent, by category, anchored to the files they concern.

The brief reads it back as "top correction categories for these files", so a category is a short stable key
(`wrong_convention`, `scope_creep`) rather than prose; the prose lives in description and correction.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import Field

from tempera.core.db import Database
from tempera.core.episodes import EpisodeStore
from tempera.core.selfimprove.drafting import Drafter
from tempera.core.selfimprove.logs import AnchoredInput, LogEntry, LogKind, count_by, list_entries, log_entry

MISTAKES = LogKind(
    name="mistake",
    table="mistakes",
    fields=("category", "description", "correction"),
    required=("category", "description"),
)


def normalize_category(text: str) -> str:
    """`Lifetime Annotations` and `lifetime-annotations` are one category: `lifetime_annotations`."""
    return re.sub(r"[^\w]+", "_", text.strip().lower()).strip("_")[:80]


class CorrectionInput(AnchoredInput):
    """The fields of `tempera lessons log-correction` and the tempera_log_correction tool."""

    category: str = Field(description="Short key of the kind of mistake, e.g. validation_skipped")
    description: str = Field(description="What the agent did or assumed that was wrong")
    correction: str = Field("", description="What is right instead")


def log_correction(
    store: EpisodeStore,
    item: CorrectionInput,
    *,
    cwd: str | None = None,
    source: str = "manual",
    dedupe_key: str | None = None,
    at: datetime | None = None,
) -> int | None:
    """Store a correction; None when `dedupe_key` was already logged."""
    values = {
        "category": normalize_category(item.category),
        "description": item.description,
        "correction": item.correction,
    }
    return log_entry(store, MISTAKES, item, values, cwd=cwd, source=source, dedupe_key=dedupe_key, at=at)


def mistakes(db: Database, *, project_id: str | None = None, limit: int | None = None) -> list[LogEntry]:
    return list_entries(db, MISTAKES, project_id=project_id, limit=limit)


def top_categories(db: Database, *, project_id: str | None = None, limit: int = 5) -> list[dict[str, Any]]:
    return count_by(db, MISTAKES, "category", project_id=project_id, limit=limit)


CATEGORY_SYSTEM = (
    "You classify why a user corrected a coding agent. Answer with exactly one of the given category "
    "keys and nothing else."
)


def llm_category(llm: Drafter, model: str, words: str, context: str, choices: list[str]) -> str | None:
    """A category from `choices` for a correction the heuristics could not place; None when the answer is not one."""
    answer = llm(
        CATEGORY_SYSTEM,
        f"Categories: {', '.join(choices)}\nWhat the agent was doing: {context}\nThe user's correction: {words}",
        model=model,
        max_tokens=20,
    )
    key = normalize_category(answer or "")
    return key if key in choices else None
