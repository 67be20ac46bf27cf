"""templates: reusable step sequences per (task type, domain) from each project's successful, verified episodes
(tempera.core.selfimprove.templates). Only groups whose evidence changed since their template was written are
rebuilt, so the phase costs nothing without new evidence. The better model words the steps through the cycle's
budget (a refused call ends the phase before that group is written); without the LLM the mined steps are the
template."""

from __future__ import annotations

from dataclasses import dataclass

from tempera.core.selfimprove import templates as tpl
from tempera.dream.phase import DreamContext, Phase, PhaseReport, Plan

STEPS_TOKENS = 500  # what llm_steps asks for
GROUP_PROMPT_CHARS = 8 * (300 + 12 * 60) + 600  # llm_steps' prompt at its largest: 8 episodes, 12 actions each


@dataclass
class ProjectWork:
    project_id: str
    name: str
    groups: int
    cost: float


def _pending_groups(ctx: DreamContext, project_id: str) -> int:
    """Groups of the project whose evidence differs from what their stored template was made from."""
    cfg = ctx.mem.config.dream
    eligible = [
        ep
        for ep in ctx.mem.store.iter_episodes(project_id, newest_first=False)
        if ep.outcome.status == "success" and ep.outcome.verification.weight >= cfg.templates_min_verification_weight
    ]
    return sum(
        1
        for key, group in tpl._groups(eligible).items()
        if len(group) >= cfg.templates_min_evidence
        and tpl._stored_evidence(ctx.mem.db, project_id, key) != sorted(ep.id for ep in group)
        and tpl.mine_steps(group)
    )  # no common steps: extract_templates writes nothing for it


def plan(ctx: DreamContext) -> Plan:
    per_group = ctx.budget.estimate(
        ctx.mem.config.dream.reflect_model, tpl.LLM_SYSTEM + "x" * GROUP_PROMPT_CHARS, STEPS_TOKENS
    )
    work = [
        ProjectWork(p["id"], p["name"], n, n * per_group)
        for p in ctx.mem.store.projects.listing()
        if p["episodes"] and (n := _pending_groups(ctx, p["id"]))
    ]
    items, deferred, estimate = ctx.budget.take(work, lambda w: w.cost)
    return Plan(
        items,
        estimate,
        deferred,
        f"{sum(w.groups for w in items)} group(s) with new evidence in "
        f"{len(items)} project(s)" + (f"; {deferred} project(s) wait for budget" if deferred else ""),
    )


def run(ctx: DreamContext, plan: Plan, report: PhaseReport) -> None:
    llm_on = ctx.budget.llm_on
    for work in plan.items:
        ctx.checkpoint()
        written = tpl.extract_templates(
            ctx.mem, project_id=work.project_id, llm=ctx.budget.ask if llm_on else None, max_usd=None if llm_on else 0
        )
        for template in written:
            report.counts[f"templates written ({template.extracted_by})"] += 1


PHASE = Phase(
    "templates", "extract reusable step sequences from groups of verified successes with new evidence", True, plan, run
)
