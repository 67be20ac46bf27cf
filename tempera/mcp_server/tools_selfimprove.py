"""Self-improvement tools: warm-up (session start, brief, template) and the two logs an agent writes mid-task.

Each calls the same core function as its `tempera` command, with the same arguments, so the structured result
equals the command's `--json` output and the text equals its plain output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from tempera.mcp_server import args
from tempera.mcp_server.render import guarded, template_text
from tempera.mcp_server.state import ToolResult, in_project, reply

if TYPE_CHECKING:
    from tempera.core.memory import Memory
    from tempera.core.selfimprove.logs import AnchoredInput


async def tempera_session_start(
    ctx: Context, project: args.Project = None, session_id: args.SessionId = None
) -> ToolResult:
    """Call ONCE at the very start of a task. Returns any clarifying question Tempera drafted after a previous
    failed or partial session in this project (shown once: calling this consumes it), with the project's top
    correction categories, should-have-asked triggers and calibration warning."""
    from tempera.core.brief import session_start

    def work(mem: "Memory", workdir: str) -> ToolResult:
        ref = mem.store.projects.resolve(project, cwd=workdir)
        brief = session_start(mem, ref.id, by=session_id or "mcp")
        text = brief.render(mem.config.inject.budget_chars)
        return reply(guarded(brief.as_dict()), text or f"Nothing pending for {ref.name}.")

    return await in_project(ctx, work)


async def tempera_brief(
    ctx: Context,
    files: args.Files,
    task_type: Annotated[
        args.TaskType | None, Field(description="Kind of task; adds its reasoning template and calibration.")
    ] = None,
    domain: args.Domain = None,
    cross_project: Annotated[
        bool, Field(description="Add transferable rows of other projects, tagged [from P].")
    ] = False,
    project: args.Project = None,
) -> ToolResult:
    """Call once the set of files to change is known. Joins the pending ask-back, the reasoning template, the top
    correction categories for these files, should-have-asked triggers and a calibration warning into one answer.
    Pass task_type and domain for richer output; cross_project=true adds transferable rows of other projects.
    Reads only: nothing is consumed."""
    from tempera.core.brief import build_brief
    from tempera.core.selfimprove.anchors import anchor_files

    def work(mem: "Memory", workdir: str) -> ToolResult:
        ref = mem.store.projects.resolve(project, cwd=workdir)
        brief = build_brief(mem, ref.id, anchor_files(files, ref.path, workdir), task_type, domain, cross_project)
        text = brief.render(mem.config.inject.budget_chars)
        return reply(guarded(brief.as_dict()), text or "Nothing to surface for these files yet.")

    return await in_project(ctx, work)


async def tempera_template(
    ctx: Context, task_type: args.TaskType, domain: args.Domain = None, project: args.Project = None
) -> ToolResult:
    """Call before planning a task of a known kind: returns the reasoning template stored for (task_type, domain)
    in this project, the step sequence that verified past successes followed (else the task type's general one)."""
    from tempera.core.selfimprove.templates import get_template

    def work(mem: "Memory", workdir: str) -> ToolResult:
        ref = mem.store.projects.resolve(project, cwd=workdir)
        found = get_template(mem.db, ref.id, task_type, domain)
        shown = guarded(found.as_dict()) if found else None
        text = template_text(shown) if shown else f"No template for {task_type}/{domain or '-'} in {ref.name} yet."
        return reply({"template": shown}, text)

    return await in_project(ctx, work)


async def _log(
    ctx: Context, log: Callable[..., int | None], model: type["AnchoredInput"], what: str, **fields: Any
) -> ToolResult:
    """Store one row through the core logger (as the CLI does), relative files taken against the client's
    directory; the core's input model validates on the lane, so its refusals become tool errors."""

    def work(mem: "Memory", workdir: str) -> ToolResult:
        row_id = log(mem.store, model(**fields), cwd=workdir)
        data = {"id": row_id, "logged": row_id is not None, "what": what}
        return reply(data, f"Logged {what} #{row_id}." if row_id is not None else f"Already logged: {what}.")

    return await in_project(ctx, work)


async def tempera_log_correction(
    ctx: Context,
    category: Annotated[str, args.text("Short stable key of the kind of mistake, e.g. validation_skipped.", limit=200)],
    description: Annotated[str, args.text("What was done or assumed that was wrong.")],
    correction: Annotated[str, args.text("What is right instead.", required=False)] = "",
    files: args.Files = [],  # noqa: B006 - never mutated; the schema shows the default
    episode: args.EpisodeRef = None,
    scope: args.Scope = None,
    session_id: args.SessionId = None,
    project: args.Project = None,
) -> ToolResult:
    """Call when the user corrects an assumption, a decision or a piece of code. The categorised log feeds the
    brief: the next brief for the same files names this category."""
    from tempera.core.selfimprove.mistakes import CorrectionInput, log_correction

    return await _log(
        ctx,
        log_correction,
        CorrectionInput,
        "correction",
        category=category,
        description=description,
        correction=correction,
        files=files,
        episode=episode,
        scope=scope,
        session_id=session_id,
        project=project,
    )


async def tempera_log_should_have_asked(
    ctx: Context,
    trigger: Annotated[
        str, args.text("The situation in which the question belongs, e.g. 'edit auth middleware'.", limit=1000)
    ],
    question: Annotated[str, args.text("The question that should have been asked up front.")],
    answer: Annotated[str, args.text("The answer it eventually got.", required=False)] = "",
    files: args.Files = [],  # noqa: B006 - never mutated; the schema shows the default
    episode: args.EpisodeRef = None,
    scope: args.Scope = None,
    session_id: args.SessionId = None,
    project: args.Project = None,
) -> ToolResult:
    """Call when you realise mid-task that a question should have been asked before acting. Records the trigger
    situation, the question and the eventual answer; briefs for the same files will show the trigger."""
    from tempera.core.selfimprove.asks import ShouldHaveAskedInput, log_should_have_asked

    return await _log(
        ctx,
        log_should_have_asked,
        ShouldHaveAskedInput,
        "should-have-asked",
        trigger=trigger,
        question=question,
        answer=answer,
        files=files,
        episode=episode,
        scope=scope,
        session_id=session_id,
        project=project,
    )


TOOLS = [tempera_session_start, tempera_brief, tempera_template, tempera_log_correction, tempera_log_should_have_asked]
