"""What every phase shares: the context it runs in, its plan (work items and their worst-case cost) and its report.

A phase is idempotent and resumable because each work item is keyed by what it was made from (a project-day, an
evidence set, an episode pair) and written whole, in one transaction, after its LLM answer is in: a cycle that stops
half-way leaves finished items and untouched ones, and the next cycle plans only the untouched.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempera.core.errors import TemperaError
from tempera.dream.budget import CycleBudget

if TYPE_CHECKING:
    from tempera.core.memory import Memory


class Interrupted(TemperaError):
    """The cycle was asked to stop (hook traffic resumed, the daemon is exiting); finished items stay."""


@dataclass
class DreamContext:
    mem: "Memory"
    budget: CycleBudget
    now: datetime
    data_dir: Path
    should_stop: Callable[[], bool] = lambda: False
    days: list[date] | None = None  # reflect only these days (`tempera learn reflect --date`)

    def checkpoint(self) -> None:
        """Called between items: the only places a cycle may stop."""
        if self.should_stop():
            raise Interrupted("stopped between items")


@dataclass
class Plan:
    items: list[Any] = field(default_factory=list)
    estimate_usd: float = 0.0
    deferred: int = 0  # items that did not fit the budget: left for a later cycle
    detail: str = ""


@dataclass
class PhaseReport:
    phase: str
    status: str = "done"  # done | skipped | budget | interrupted | failed
    mode: str = "free"  # free | llm | fallback
    estimate_usd: float = 0.0
    spent_usd: float = 0.0
    counts: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{n} {what}" for what, n in self.counts.items() if n]
        return "; ".join(parts + self.notes) or "nothing to do"

    def as_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "status": self.status,
            "mode": self.mode,
            "estimate_usd": round(self.estimate_usd, 6),
            "spent_usd": round(self.spent_usd, 6),
            "counts": dict(self.counts),
            "notes": self.notes,
            "summary": self.summary(),
        }


@dataclass(frozen=True)
class Phase:
    name: str
    summary: str
    paid: bool  # has LLM steps (each with a fallback); free phases never touch the budget
    plan: Callable[[DreamContext], Plan]
    run: Callable[[DreamContext, Plan, PhaseReport], None]
