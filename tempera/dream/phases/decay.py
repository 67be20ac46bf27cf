"""decay (free): measure scope-aware freshness and retire workarounds past their expiry (see
tempera.core.learning.scope_decay); retiring is idempotent and nothing else is written."""

from __future__ import annotations

from tempera.core.learning.scope_decay import run_decay
from tempera.dream.phase import DreamContext, Phase, PhaseReport, Plan


def plan(ctx: DreamContext) -> Plan:
    preview = run_decay(ctx.mem, now=ctx.now, dry_run=True)
    return Plan(detail=f"{preview.checked} episode(s) checked; {len(preview.cut)} expired workaround(s) to retire")


def run(ctx: DreamContext, plan: Plan, report: PhaseReport) -> None:
    result = run_decay(ctx.mem, now=ctx.now)
    report.counts["episodes checked"] += result.checked
    report.counts["faded below half freshness"] += result.faded_total
    report.counts["expired workarounds retired"] += len(result.cut)


PHASE = Phase("decay", "scope-aware decay: report what faded, retire expired workarounds", False, plan, run)
