"""verify_advance (free): move every live episode as far along untested -> tests_pass -> merged ->
stable_no_revert as its evidence (tests, default-branch commits, reverts) now allows. Running it again changes
nothing unless the evidence changed, so it is idempotent by construction."""

from __future__ import annotations

from tempera.core.learning.verification import advance_all
from tempera.dream.phase import DreamContext, Phase, PhaseReport, Plan


def plan(ctx: DreamContext) -> Plan:
    live = ctx.mem.db.one("SELECT COUNT(*) FROM episodes WHERE id NOT IN (SELECT episode_id FROM episode_retirements)")[
        0
    ]
    return Plan(detail=f"check {live} live episode(s) against tests and git")


def run(ctx: DreamContext, plan: Plan, report: PhaseReport) -> None:
    for change in advance_all(ctx.mem, now=ctx.now):
        report.counts[f"now {change.after}"] += 1


PHASE = Phase("verify_advance", "advance verification states from tests, merges and reverts", False, plan, run)
