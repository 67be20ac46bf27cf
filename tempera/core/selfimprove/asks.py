"""The should-have-asked log: questions the agent should have asked before acting, with the eventual answer.

The brief shows their triggers for the files at hand, so the next session sees where a question paid off.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from tempera.core.db import Database
from tempera.core.episodes import EpisodeStore
from tempera.core.selfimprove.drafting import Drafter, one_question
from tempera.core.selfimprove.logs import AnchoredInput, LogEntry, LogKind, count_by, list_entries, log_entry

ASKS = LogKind(
    name="ask", table="should_have_asked", fields=("trigger", "question", "answer"), required=("trigger", "question")
)


class ShouldHaveAskedInput(AnchoredInput):
    """The fields of `tempera lessons log-should-have-asked` and the tempera_log_should_have_asked tool."""

    trigger: str = Field(description="The situation in which the question should come up, e.g. 'edit auth middleware'")
    question: str = Field(description="The question that should have been asked up front")
    answer: str = Field("", description="The answer it eventually got")


def log_should_have_asked(
    store: EpisodeStore,
    item: ShouldHaveAskedInput,
    *,
    cwd: str | None = None,
    source: str = "manual",
    dedupe_key: str | None = None,
    at: datetime | None = None,
) -> int | None:
    """Store a should-have-asked row; None when `dedupe_key` was already logged."""
    values = {"trigger": item.trigger, "question": item.question, "answer": item.answer}
    return log_entry(store, ASKS, item, values, cwd=cwd, source=source, dedupe_key=dedupe_key, at=at)


def asks(db: Database, *, project_id: str | None = None, limit: int | None = None) -> list[LogEntry]:
    return list_entries(db, ASKS, project_id=project_id, limit=limit)


def top_questions(db: Database, *, project_id: str | None = None, limit: int = 5) -> list[dict[str, Any]]:
    return count_by(db, ASKS, "question", project_id=project_id, limit=limit)


QUESTION_SYSTEM = (
    "A user corrected a coding agent. Write the one short question the agent should have asked before "
    "acting, so that the correction would not have been needed. Answer with the question only."
)


def llm_missed_question(llm: Drafter, model: str, request: str, words: str) -> str | None:
    """The question a correction shows was missing, phrased for this case; None unless the answer is one."""
    return one_question(
        llm(QUESTION_SYSTEM, f"The request: {request}\nThe correction: {words}", model=model, max_tokens=80)
    )
