"""Diagnostics and maintenance tools: status, stats/trends, propagation and review (consolidate, cleanup).

Each defaults to the project the client works in (the `tempera` commands default to every project), because an
agent asks about the codebase in front of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from tempera.mcp_server import args, render
from tempera.mcp_server.state import ToolResult, in_project, reply

if TYPE_CHECKING:
    from tempera.core.db import Database
    from tempera.core.memory import Memory

# What a project holds, by table: each row names its project in `project_id`.
PROJECT_ROWS = {
    "episodes": "episodes",
    "corrections": "mistakes",
    "should_have_asked": "should_have_asked",
    "templates": "reasoning_templates",
}


def _count(db: "Database", sql: str, project_id: str) -> int:
    return int(db.one(sql, (project_id,))[0])


async def tempera_status(ctx: Context, project: args.Project = None) -> ToolResult:
    """Call to check the memory's health for this project: what it holds (episodes, retired ones, corrections,
    should-have-asked rows, templates, pending ask-backs) and whether vector search works."""
    from tempera.core import paths

    def work(mem: "Memory", workdir: str) -> ToolResult:
        ref = mem.store.projects.resolve(project, cwd=workdir)
        counts = {
            key: _count(mem.db, f"SELECT COUNT(*) FROM {table} WHERE project_id = ?", ref.id)
            for key, table in PROJECT_ROWS.items()
        }
        counts["retired_episodes"] = _count(
            mem.db,
            "SELECT COUNT(*) FROM episode_retirements r JOIN episodes e ON e.id = r.episode_id WHERE e.project_id = ?",
            ref.id,
        )
        counts["pending_ask_backs"] = _count(
            mem.db, "SELECT COUNT(*) FROM ask_backs WHERE project_id = ? AND status = 'pending'", ref.id
        )
        vectors = mem.store.vectors.status()
        last = mem.db.one("SELECT MAX(created_at) FROM episodes WHERE project_id = ?", (ref.id,))[0]
        data = {
            "data_dir": str(paths.data_dir()),
            "project": {"id": ref.id, "name": ref.name, "path": ref.path},
            "counts": counts,
            "last_capture": last,
            "all_episodes": mem.store.count(),
            "vectors": {"state": vectors.state, "model": vectors.model, "detail": vectors.detail},
        }
        return reply(data, render.status_text(data))

    return await in_project(ctx, work)


async def tempera_stats(
    ctx: Context,
    kind: Annotated[
        Literal["stats", "trends"],
        Field(
            description="stats: counts by outcome, task type and verification, utility, feedback; trends: "
            "helpfulness over time, injected memories used, success rate, domains."
        ),
    ] = "stats",
    bucket: Annotated[Literal["weekly", "monthly"], Field(description="Period of a trends row.")] = "weekly",
    project: args.Project = None,
) -> ToolResult:
    """Call to see how memory is doing: statistics, or trend analytics (helpfulness over time, domain growth,
    the learning curve) for this project."""
    from tempera.core.learning.trends import trends
    from tempera.core.stats import memory_stats

    def work(mem: "Memory", workdir: str) -> ToolResult:
        ref = mem.store.projects.resolve(project, cwd=workdir)
        if kind == "trends":
            data = trends(mem, bucket=bucket, project_id=ref.id)
            return reply(data, render.trends_text(data))
        data = memory_stats(mem.db, ref.id)
        return reply(data, render.stats_text(data))

    return await in_project(ctx, work)


async def tempera_propagate(
    ctx: Context,
    temporal: Annotated[
        bool, Field(description="Also recompute temporal credit (successes credit the episodes that led to them).")
    ] = False,
    project: args.Project = None,
) -> ToolResult:
    """Call for periodic maintenance (e.g. after a series of feedback): multi-hop Bellman propagation spreads
    learned value from episodes with strong evidence to similar ones, until it converges. Running it again
    without new evidence changes nothing."""
    from tempera.core.learning.propagation import propagate

    def work(mem: "Memory", workdir: str) -> ToolResult:
        report = propagate(mem, project_id=mem.store.projects.resolve(project, cwd=workdir).id, temporal=temporal)
        data = report.as_dict()
        return reply(data, render.propagation_text(data))

    return await in_project(ctx, work)


async def tempera_review(
    ctx: Context,
    action: Annotated[
        Literal["analyze", "consolidate", "cleanup"],
        Field(
            description="analyze: list near-duplicates and cleanup candidates; consolidate: merge near-duplicates "
            "(nothing is lost: the absorbed episode stays stored, out of search); cleanup: delete old, "
            "low-utility episodes that were retrieved enough to be judged."
        ),
    ] = "analyze",
    dry_run: Annotated[
        bool, Field(description="Report what consolidate or cleanup would do without doing it; set false to act.")
    ] = True,
    project: args.Project = None,
) -> ToolResult:
    """Call after a related series of tasks: consolidate near-duplicate episodes and clean up stale ones.
    Start with action=analyze; consolidate and cleanup only act with dry_run=false."""
    from tempera.core.learning.consolidate import consolidate
    from tempera.core.learning.prune import prune

    def work(mem: "Memory", workdir: str) -> ToolResult:
        project_id = mem.store.projects.resolve(project, cwd=workdir).id
        storage = mem.config.storage
        data: dict[str, Any] = {"action": action, "dry_run": dry_run or action == "analyze"}
        if action in ("analyze", "consolidate"):
            data["consolidation"] = consolidate(mem, project_id=project_id, dry_run=data["dry_run"]).as_dict()
        if action in ("analyze", "cleanup"):
            data["cleanup"] = prune(
                mem,
                older_than_days=storage.max_age_days,
                min_utility=storage.min_utility_threshold,
                execute=not data["dry_run"],
                project_id=project_id,
            ).as_dict()
        data = render.guarded(data)
        return reply(data, render.review_text(data))

    return await in_project(ctx, work)


TOOLS = [tempera_status, tempera_stats, tempera_propagate, tempera_review]
