"""Episodes stored straight into a project's memory, with the real store and embedding model."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from tempera.core.memory import Memory
from tempera.core.models import Episode, Intent, ValidityScope
from tempera.core.project import project_for_path


def stored(memory: Memory, root: Path, summary: str, created_at: datetime) -> None:
    """One project-scoped episode of the checkout at `root`, whose intent is its summary."""
    ref = project_for_path(root)
    memory.store.add(
        Episode(
            project_id=ref.id,
            project_name=ref.name,
            project_path=ref.path,
            summary=summary,
            created_at=created_at,
            intent=Intent(extracted=summary, scope=ValidityScope.parse("project")),
        ),
        ref,
    )
