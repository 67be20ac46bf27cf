"""A dream cycle: the phases in order under one budget, one cycle at a time per data dir, each cycle recorded.

Free phases always run. A paid phase is planned right before it runs (so it sees what earlier phases wrote) and
takes only the items whose worst case fits what is left; when none fits it is skipped. When a call is refused
mid-phase the phase stops with status `budget` and the later paid phases are skipped: every item is written whole
or not at all, so the next cycle simply picks up what is missing. A phase that fails is logged and the cycle goes
on; an interruption (hook traffic resumed, the daemon exits) ends the cycle between two items.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempera.core import paths, processes
from tempera.core.db import Database, apply_migrations
from tempera.core.errors import InvalidInput, TemperaError
from tempera.core.llm import BudgetExceeded
from tempera.dream.budget import CycleBudget
from tempera.dream.phase import DreamContext, Interrupted, Phase, PhaseReport
from tempera.dream.phases import contradict, decay, patterns, reflect, templates, verify_advance
from tempera.dream.schema import MIGRATIONS

if TYPE_CHECKING:
    from tempera.core.memory import Memory

log = logging.getLogger("tempera.dream")
PHASES: list[Phase] = [
    verify_advance.PHASE,
    decay.PHASE,
    reflect.PHASE,
    patterns.PHASE,
    contradict.PHASE,
    templates.PHASE,
]
EMPTY_SIGNATURE = "0:0::0:0:0"


class CycleBusy(TemperaError):
    """Another dream cycle is running on this data dir."""


@dataclass
class CycleReport:
    id: int | None
    trigger: str
    status: str  # done | interrupted | planned (dry run)
    max_usd: float
    spent_usd: float
    llm: str  # "on", or why every phase ran on its fallback
    phases: list[PhaseReport] = field(default_factory=list)
    started_at: str = ""
    finished_at: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "trigger": self.trigger,
            "status": self.status,
            "max_usd": self.max_usd,
            "spent_usd": round(self.spent_usd, 6),
            "llm": self.llm,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "phases": [p.as_dict() for p in self.phases],
        }


def select_phases(names: Sequence[str] | None) -> list[Phase]:
    """The named phases in cycle order (all when none are named)."""
    known = {p.name for p in PHASES}
    unknown = [n for n in names or () if n not in known]
    if unknown:
        raise InvalidInput(f"unknown phase {unknown[0]!r}: use one of {', '.join(p.name for p in PHASES)}")
    return [p for p in PHASES if not names or p.name in names]


def memory_signature(db: Database) -> str:
    """Changes whenever memory gains something to dream about (episodes added or changed, feedback, retrievals,
    corrections); maxima of keys plus one scan of updated_at, cheap enough to check on every file event."""
    row = db.one(
        "SELECT (SELECT COALESCE(MAX(rowid), 0) FROM episodes), (SELECT COUNT(*) FROM episodes), "
        "(SELECT COALESCE(MAX(updated_at), '') FROM episodes), (SELECT COALESCE(MAX(id), 0) FROM "
        "feedback_events), (SELECT COALESCE(MAX(id), 0) FROM retrievals), "
        "(SELECT COALESCE(MAX(id), 0) FROM mistakes)"
    )
    return ":".join(str(v) for v in row)


@contextmanager
def cycle_lock(data_dir: Path) -> Iterator[None]:
    fd = os.open(data_dir / paths.DREAM_LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if not processes.try_lock(fd):
            raise CycleBusy("another dream cycle is running on this data dir; try again when it ends") from None
        yield
    finally:
        os.close(fd)


def _context(
    mem: "Memory",
    max_usd: float | None,
    now: datetime | None,
    should_stop: Callable[[], bool] | None,
    days: list[date] | None,
) -> DreamContext:
    cap = mem.config.dream.default_max_usd if max_usd is None else max_usd
    if cap < 0:
        raise InvalidInput("--max-usd must not be negative")
    apply_migrations(mem.db, MIGRATIONS)
    return DreamContext(
        mem,
        CycleBudget(mem.config, cap),
        now or datetime.now(timezone.utc),
        mem.db.path.parent,
        should_stop or (lambda: False),
        days,
    )


def _mode(phase: Phase, ctx: DreamContext) -> str:
    return "free" if not phase.paid else "llm" if ctx.budget.llm_on else "fallback"


def plan_cycle(
    mem: "Memory",
    *,
    max_usd: float | None = None,
    phases: Sequence[str] | None = None,
    now: datetime | None = None,
    days: list[date] | None = None,
) -> CycleReport:
    """The dry run: every selected phase's plan and worst-case cost, on the memory as it is now (a later phase
    would also see what earlier ones write). Nothing is called and nothing is written."""
    ctx = _context(mem, max_usd, now, None, days)
    report = CycleReport(
        None, "dry-run", "planned", ctx.budget.budget.max_usd, 0.0, ctx.budget.llm_state, started_at=ctx.now.isoformat()
    )
    for phase in select_phases(phases):
        plan = phase.plan(ctx)
        ctx.budget.set_aside(plan.estimate_usd)
        report.phases.append(
            PhaseReport(
                phase.name, "planned", _mode(phase, ctx), plan.estimate_usd, notes=[plan.detail] if plan.detail else []
            )
        )
    return report


def _run_phase(phase: Phase, ctx: DreamContext, report: PhaseReport) -> None:
    plan = phase.plan(ctx)
    report.estimate_usd = plan.estimate_usd
    if plan.deferred and not plan.items:
        report.status = "skipped"
        report.notes.append(
            f"estimate does not fit the ${ctx.budget.remaining:.4f} left "
            f"({plan.deferred} item(s) wait for a later cycle)"
        )
        return
    phase.run(ctx, plan, report)
    if plan.deferred:
        report.notes.append(f"{plan.deferred} item(s) wait for a later cycle (budget)")


def _run_phases(selected: list[Phase], ctx: DreamContext, report: CycleReport) -> None:
    """In order; after a refused call the later paid phases are skipped, after an interruption every later one."""
    exhausted = False
    for phase in selected:
        result = PhaseReport(phase.name, mode=_mode(phase, ctx))
        report.phases.append(result)
        if report.status == "interrupted" or (phase.paid and exhausted and ctx.budget.llm_on):
            result.status = "skipped"
            result.notes.append(
                "cycle interrupted" if report.status == "interrupted" else "budget exhausted earlier in the cycle"
            )
            continue
        before = ctx.budget.spent
        try:
            _run_phase(phase, ctx, result)
        except BudgetExceeded as exc:
            result.status, exhausted = "budget", True
            result.notes.append(f"stopped: {exc}")
        except Interrupted:
            result.status = report.status = "interrupted"
        except Exception as exc:  # one broken phase must not cost the others their run
            log.exception("dream phase %s failed", phase.name)
            result.status = "failed"
            result.notes.append(f"{type(exc).__name__}: {exc}")
        result.spent_usd = ctx.budget.spent - before


def run_cycle(
    mem: "Memory",
    *,
    max_usd: float | None = None,
    phases: Sequence[str] | None = None,
    trigger: str = "manual",
    now: datetime | None = None,
    should_stop: Callable[[], bool] | None = None,
    days: list[date] | None = None,
) -> CycleReport:
    """Run the selected phases (all by default); raises CycleBusy when another cycle holds the data dir."""
    selected = select_phases(phases)
    ctx = _context(mem, max_usd, now, should_stop, days)
    db = mem.db
    with cycle_lock(ctx.data_dir):
        started = datetime.now(timezone.utc).isoformat()
        with db.transaction():
            db.execute(
                "UPDATE dream_cycles SET status = 'interrupted', finished_at = ? WHERE status = 'running'", (started,)
            )  # we hold the lock: a row still running belongs to a cycle that died
            cycle_id = db.execute(
                "INSERT INTO dream_cycles(trigger, status, max_usd, llm, started_at) VALUES (?, 'running', ?, ?, ?)",
                (trigger, ctx.budget.budget.max_usd, ctx.budget.llm_state, started),
            ).lastrowid
        report = CycleReport(
            cycle_id, trigger, "done", ctx.budget.budget.max_usd, 0.0, ctx.budget.llm_state, started_at=started
        )
        _run_phases(selected, ctx, report)
        report.spent_usd, report.llm = ctx.budget.spent, ctx.budget.llm_state
        report.finished_at = datetime.now(timezone.utc).isoformat()
        whole = report.status == "done" and len(selected) == len(PHASES) and not days
        signature = memory_signature(db) if whole else None  # only a whole cycle settles the pending work
        db.execute(
            "UPDATE dream_cycles SET status = ?, spent_usd = ?, llm = ?, phases = ?, signature = ?, "
            "finished_at = ? WHERE id = ?",
            (
                report.status,
                report.spent_usd,
                report.llm,
                json.dumps([p.as_dict() for p in report.phases]),
                signature,
                report.finished_at,
                cycle_id,
            ),
        )
    log.info(
        "dream cycle %s (%s) %s, $%.4f of $%.2f, LLM %s: %s",
        cycle_id,
        trigger,
        report.status,
        report.spent_usd,
        report.max_usd,
        report.llm,
        "; ".join(f"{p.phase} {p.status}: {p.summary()}" for p in report.phases),
    )
    return report


def last_cycle(db: Database) -> dict[str, Any] | None:
    """The most recent cycle (what `tempera status` shows), or None before the first one."""
    apply_migrations(db, MIGRATIONS)
    row = db.one(
        "SELECT id, trigger, status, max_usd, spent_usd, llm, phases, started_at, finished_at "
        "FROM dream_cycles ORDER BY id DESC LIMIT 1"
    )
    if row is None:
        return None
    keys = ("id", "trigger", "status", "max_usd", "spent_usd", "llm", "phases", "started_at", "finished_at")
    out = dict(zip(keys, row))
    out["phases"] = json.loads(out["phases"])
    return out


def last_signature(db: Database) -> str:
    """The memory signature when the last completed cycle ended (EMPTY_SIGNATURE before any)."""
    apply_migrations(db, MIGRATIONS)
    row = db.one(
        "SELECT signature FROM dream_cycles WHERE status = 'done' AND signature IS NOT NULL ORDER BY id DESC LIMIT 1"
    )
    return row[0] if row else EMPTY_SIGNATURE
