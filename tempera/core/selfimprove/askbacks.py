"""Ask-backs: one clarifying question drafted for the next session after a turn that failed with a vague intent.

A failed "fix it" teaches little; the cheapest repair is to ask the user what was meant before the next attempt.
The question is drafted by the LLM when one is available, else from a template over the intent, its errors and
the files it touched, and waits as `pending` until a session of the same project shows it (and consumes it).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from tempera.core import textsearch
from tempera.core.clipping import squeezed
from tempera.core.db import Database
from tempera.core.marker import strip_injected
from tempera.core.models import Episode, iso_utc
from tempera.core.project import ProjectRef
from tempera.core.projects import ProjectRegistry
from tempera.core.selfimprove.drafting import Drafter, drafter_for, one_question

if TYPE_CHECKING:
    from tempera.core.memory import Memory

# Words that say "do something" without saying what or where.
GENERIC = frozenset(
    """
fix fixed fixing make made work works working worked do does again try tried still broken break breaks issue issues
problem problems bug bugs stuff something anything everything thing better same now ok okay also check look update
change changes improve help just etc go run running whole all right properly correctly correct wrong error errors
fail fails failing fine good great
""".split()
)
_SPECIFIC = re.compile(
    r"[\w-]+/[\w./-]+|\b\w+\.(?:py|rs|go|ts|tsx|js|jsx|java|rb|toml|json|ya?ml|md|sql|sh|css|html)\b"
    r"|`[^`]+`|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w+\b|\b[A-Z]{2,}\d+\b|\bE\d{3,}\b"
)
ENDINGS = ("failure", "partial")


def intent_text(ep: Episode) -> str:
    return " ".join(strip_injected(ep.intent.raw_prompt or ep.intent.extracted or ep.summary).split())


def is_vague(text: str) -> bool:
    """Names no file, identifier or error code, and at most two words that say what or where."""
    if _SPECIFIC.search(text):
        return False
    specific = [t for t in textsearch.query_terms(text) if t not in GENERIC]
    return len(specific) <= 2


def template_question(intent: str, errors: list[str], files: list[str]) -> str:
    subject = f'"{squeezed(intent, 80)}"'
    if errors:
        return f"Is `{squeezed(errors[-1], 100)}` the problem {subject} refers to, and what result counts as done?"
    if files:
        return (
            f"Which file or behaviour does {subject} mean ({', '.join(files[:3])} were touched), and what "
            "result counts as done?"
        )
    return f"What exactly should {subject} achieve, in which part of the code, and what result counts as done?"


SYSTEM = (
    "You draft exactly one short clarifying question a coding agent should ask its user before retrying a task "
    "that failed because the request was vague. Answer with the question only, on one line."
)


def llm_question(llm: Drafter, model: str, intent: str, status: str, errors: list[str], files: list[str]) -> str | None:
    prompt = (
        f"Request: {intent}\nOutcome: {status}\nErrors: {'; '.join(errors[:3]) or 'none'}\n"
        f"Files touched: {', '.join(files[:8]) or 'none'}"
    )
    return one_question(llm(SYSTEM, prompt, model=model, max_tokens=120))


@dataclass
class AskBack:
    id: int
    project_id: str
    project: str
    episode_id: str | None
    session_id: str | None
    question: str
    context: str
    drafted_by: str
    status: str
    created_at: str
    consumed_at: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def statement(self) -> str:
        return (
            f"Pending clarifying question from an earlier session of {self.project} ({self.context}): {self.question}"
        )


def draft_ask_back(mem: "Memory", episode: Episode, *, llm: Drafter | None = None) -> AskBack | None:
    """Draft and store the ask-back for a failed/partial episode with a vague intent; idempotent per episode.

    Returns the stored ask-back (the earlier one when this episode already has one), or None when the episode
    does not call for one or ask-backs are switched off (capture.ask_back_on_failure).
    """
    if not mem.config.capture.ask_back_on_failure or episode.outcome.status not in ENDINGS:
        return None
    existing = ask_backs_of(mem.db, episode.id)
    if existing:
        return existing[0]
    intent = intent_text(episode)
    if not intent or not is_vague(intent):
        return None
    errors = [e.message.splitlines()[0] for e in episode.context.errors if not e.resolved and e.message.strip()]
    files = episode.context.files_modified or episode.context.files_read
    llm = llm or drafter_for(mem.config)
    question = (
        llm_question(llm, mem.config.dream.triage_model, intent, episode.outcome.status, errors, files) if llm else None
    )
    drafted_by = "llm" if question else "template"
    question = question or template_question(intent, errors, files)
    context = f'the request "{squeezed(intent, 80)}" ended {episode.outcome.status}' + (
        f"; last error: {squeezed(errors[-1], 120)}" if errors and drafted_by == "llm" else ""
    )
    at = iso_utc(episode.created_at)  # the turn it asks about: an imported session's ask-back keeps its date
    with mem.db.transaction():
        ProjectRegistry(mem.db).ensure(ProjectRef(episode.project_id, episode.project_name, episode.project_path))
        mem.db.execute(
            "INSERT INTO ask_backs(project_id, episode_id, session_id, question, context, drafted_by, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(episode_id) DO NOTHING",
            (episode.project_id, episode.id, episode.session_id, question, context, drafted_by, at),
        )
    return ask_backs_of(mem.db, episode.id)[0]


def ask_backs_of(db: Database, episode_id: str) -> list[AskBack]:
    """The ask-back drafted for an episode (at most one), whatever its status."""
    return _rows(db, "a.episode_id = ?", (episode_id,))


def _rows(db: Database, where: str, params: tuple[Any, ...], limit: int | None = None) -> list[AskBack]:
    sql = (
        "SELECT a.id, a.project_id, COALESCE(p.name, a.project_id), a.episode_id, a.session_id, a.question, "
        "a.context, a.drafted_by, a.status, a.created_at, a.consumed_at FROM ask_backs a "
        f"LEFT JOIN projects p ON p.id = a.project_id WHERE {where} ORDER BY a.created_at DESC, a.id DESC"
    )
    if limit:
        sql += f" LIMIT {int(limit)}"
    return [AskBack(*r) for r in db.query(sql, params)]


def ask_backs(
    db: Database, *, project_id: str | None = None, pending_only: bool = False, limit: int | None = None
) -> list[AskBack]:
    """Newest first; every project when `project_id` is None."""
    clauses, params = ["1"], []
    if project_id:
        clauses.append("a.project_id = ?")
        params.append(project_id)
    if pending_only:
        clauses.append("a.status = 'pending'")
    return _rows(db, " AND ".join(clauses), tuple(params), limit)


def consume(db: Database, project_id: str, *, by: str, limit: int = 3) -> list[AskBack]:
    """Take the newest pending ask-backs of a project (they will not be shown again) and return them."""
    now = iso_utc()
    with db.transaction():
        taken = ask_backs(db, project_id=project_id, pending_only=True, limit=limit)
        for a in taken:
            db.execute(
                "UPDATE ask_backs SET status = 'consumed', consumed_at = ?, consumed_by = ? WHERE id = ?",
                (now, by, a.id),
            )
            a.status, a.consumed_at = "consumed", now
    return taken
