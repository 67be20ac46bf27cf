"""What else moves when one project's memory moves to another (project_merge.py): rows core cannot find itself.

Core re-keys every table with a `project_id` column. A package above core that keys rows by project some other way
(the fact graph names each stance by its project, `:constraint/mysql.3f2a9c1b`, and holds the id in a `:project`
value) hands core a mover, run inside the merge's transaction. Core imports none of those packages: the top of the
package, `tempera/__init__.py`, registers them, and Python runs that file before any `tempera.*` module, so every
process that can open memory has them whatever it imported first. A mover is a loader, so its package is imported
only when a merge runs. Standard library only: every process imports this.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tempera.core.db import Database


class ProjectMover(Protocol):
    def count(self, db: Database, source_id: str) -> int:
        """How many of `source_id`'s rows would move (0 when the package's tables do not exist)."""
        ...

    def move(self, db: Database, source_id: str, target_id: str) -> None:
        """Re-key them to `target_id`, inside the caller's transaction."""
        ...


_LOADERS: dict[str, Callable[[], ProjectMover]] = {}


def register(name: str, load: Callable[[], ProjectMover]) -> None:
    """`name` is the key of its count in a merge report (`tempera projects merge --dry-run`)."""
    _LOADERS[name] = load


def movers() -> dict[str, ProjectMover]:
    return {name: load() for name, load in _LOADERS.items()}
