"""The learning tests' helper: episodes stored through the real store (real embeddings), injections recorded
through the hooks' own injection log."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from tempera.core.memory import Memory
from tempera.core.models import Context, Episode, ErrorRecord, Intent, Outcome, TestRun, ValidityScope
from tempera.core.project import project_for_path
from tempera.inject import injectlog
from tempera.inject.hits import episode_hit

NOW = datetime.now(timezone.utc).replace(microsecond=0)


class Book:
    """Stores episodes of one project; `at` is hours relative to NOW."""

    def __init__(self, memory: Memory, root: Path):
        self.memory = memory
        self.root = root
        self.project = project_for_path(root)

    def add(
        self,
        summary: str,
        *,
        at: float = 0.0,
        session: str | None = None,
        outcome: str = "unknown",
        modified: list[str] | None = None,
        read: list[str] | None = None,
        commands: list[str] | None = None,
        errors: list[tuple[str, str]] | None = None,
        tests_after: list[tuple[str, bool]] | None = None,
        scope: str | None = None,
        prompt: str = "",
        commit: str | None = None,
    ) -> Episode:
        ep = Episode(
            project_id=self.project.id,
            project_name=self.project.name,
            project_path=self.project.path,
            session_id=session,
            summary=summary,
            created_at=NOW + timedelta(hours=at),
            intent=Intent(raw_prompt=prompt, extracted=summary, scope=ValidityScope.parse(scope)),
            context=Context(
                files_modified=modified or [],
                files_read=read or [],
                commands=commands or [],
                errors=[ErrorRecord(message=m, fingerprint=f) for m, f in errors or []],
            ),
            outcome=Outcome(
                status=outcome, commit=commit, tests_after=[TestRun(command=c, passed=p) for c, p in tests_after or []]
            ),
        )
        return self.memory.store.add(ep, self.project)

    def inject(self, session: str, *episodes: Episode, prompt: str = "a prompt") -> None:
        injectlog.record(
            self.memory.db.conn,
            session_id=session,
            project_id=self.project.id,
            event="UserPromptSubmit",
            prompt=prompt,
            hits=[episode_hit(e, self.project, score=0.5) for e in episodes],
        )

    def utility(self, ep: Episode) -> float:
        return float(self.memory.db.one("SELECT utility FROM episodes WHERE id = ?", (ep.id,))[0])

    def rows(self, ep: Episode, source: str | None = None) -> list[dict[str, Any]]:
        from tempera.core.utility import feedback_history

        return [r for r in feedback_history(self.memory.db, ep.id) if source is None or r["source"] == source]
