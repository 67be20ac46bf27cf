"""Episode tools: retrieve (search, list, details), capture (with the learning that follows it) and feedback."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from tempera.mcp_server import args, render
from tempera.mcp_server.state import ToolResult, in_project, reply, with_memory

if TYPE_CHECKING:
    from tempera.core.memory import Memory

EPISODE_ID = re.compile(r"(?=.*\d)[0-9a-f-]{8,}")  # 8+ hex characters (dashes allowed), at least one digit


def looks_like_id(query: str) -> bool:
    """An id prefix, not words: `abc12345` shows an episode, `authentication bug` searches."""
    text = query.strip().lower()
    return bool(EPISODE_ID.fullmatch(text)) and len(text.replace("-", "")) >= 8


async def tempera_retrieve(
    ctx: Context,
    query: Annotated[
        str | None,
        Field(
            description="What to look for; or an episode id prefix (8+ hex characters) to show that episode in full.",
            min_length=1,
            max_length=2000,
        ),
    ] = None,
    all: Annotated[
        bool,
        Field(
            description="List episodes, newest first, instead of searching "  # noqa: A002
            "(leave out query)."
        ),
    ] = False,
    limit: Annotated[int, Field(description="How many search hits or listed episodes.", ge=1, le=200)] = 5,
    project: args.Project = None,
    scope: Annotated[
        Literal["project", "cross-project"],
        Field(
            description="cross-project adds transferable (not project-scoped) episodes of other projects; with "
            "all=true it lists every project."
        ),
    ] = "project",
    mode: Annotated[
        Literal["keyword", "vector", "hybrid"] | None,
        Field(description="Search mode; default retrieval.mode from the config (hybrid)."),
    ] = None,
) -> ToolResult:
    """Call to search for similar past episodes once you know what you are about to do, or to deep-dive after the
    brief: query="authentication bug" searches; query="abc12345" (an id prefix) shows one episode in full;
    all=true lists episodes. Set scope="cross-project" to include transferable claims from other projects."""
    if all == bool(query):
        raise ToolError(
            "send either a query (words, or an episode id prefix of 8+ hex characters) or all=true, "
            "not both and not neither"
        )
    cross = scope == "cross-project"

    def work(mem: "Memory", workdir: str) -> ToolResult:
        if all:
            project_id = None if cross else mem.store.projects.resolve(project, cwd=workdir).id
            rows = [render.episode_row(e) for e in mem.store.iter_episodes(project_id, limit=limit)]
            data = {"episodes": rows, "total": mem.store.count(project_id)}
            return reply(data, render.episode_rows(data))
        assert query is not None
        if looks_like_id(query):
            episode = mem.store.get(query)
            shown = render.guarded(episode.model_dump(mode="json") | {"scope": str(episode.scope)})
            return reply({"episode": shown}, render.episode_text(shown))
        hits = mem.retrieve(query, project=project, cwd=workdir, limit=limit, mode=mode, cross_project=cross, via="mcp")
        found = [render.guarded(h.as_dict()) for h in hits]
        return reply({"query": query, "hits": found}, render.hits_text(found))

    return await in_project(ctx, work)


async def tempera_capture(
    ctx: Context,
    summary: Annotated[
        str, args.text("What was done and what worked (or did not), a sentence or a paragraph.", limit=args.MAX_SUMMARY)
    ],
    task_type: args.TaskType = "other",
    outcome: args.Outcome = "success",
    files_modified: args.Files = [],  # noqa: B006 - never mutated; the schema shows the default
    tags: args.Words = [],  # noqa: B006
    errors_resolved: Annotated[args.Words, Field(description="Error messages this work resolved.")] = [],  # noqa: B006
    alternatives_considered: args.Words = [],  # noqa: B006
    validity_scope: args.Scope = None,
    session_id: args.SessionId = None,
    project: args.Project = None,
) -> ToolResult:
    """Call at the end of a task to save it as an episode; capture successful work without waiting to be asked.
    Links it to earlier episodes of its session and project, hands temporal credit back to what led to a success,
    and after a failure or partial outcome with a vague request drafts a clarifying question for the next session.
    validity_scope routes it across projects (anything but project may surface elsewhere)."""
    from tempera.core.capture_input import CaptureInput
    from tempera.transcripts.pipeline import learn_from_episodes

    fields: dict[str, Any] = dict(
        summary=summary,
        task_type=task_type,
        outcome=outcome,
        files_modified=files_modified,
        tags=tags,
        errors_resolved=errors_resolved,
        alternatives_considered=alternatives_considered,
        validity_scope=validity_scope,
        session_id=session_id,
        project=project,
    )

    def work(mem: "Memory", workdir: str) -> ToolResult:
        episode = mem.capture(CaptureInput(**fields), cwd=workdir)
        done = learn_from_episodes(mem, [episode])
        (learned,), drafted = done.learning, done.ask_backs
        data = {
            "id": episode.id,
            "project": episode.project_name,
            "project_id": episode.project_id,
            "summary": episode.summary,
            "scope": str(episode.scope),
            "links": [
                {"src_id": link.src_id, "dst_id": link.dst_id, "relationship": link.relationship}
                for link in learned.links
            ],
            "temporal_credit": [{"episode_id": e.episode_id, "weight": e.weight} for e in learned.temporal],
            "ask_back": drafted[0].as_dict() if drafted else None,
        }
        return reply(data, render.capture_text(data))

    return await in_project(ctx, work)


async def tempera_feedback(
    ctx: Context,
    helpful: Annotated[bool, Field(description="true: these episodes helped; false: they did not.")],
    episodes: Annotated[
        list[Annotated[str, Field(min_length=8, max_length=64)]],
        Field(
            description="Episode ids or prefixes (8+ hex characters), as returned by tempera_retrieve.",
            min_length=1,
            max_length=100,
        ),
    ],
) -> ToolResult:
    """Call after using retrieved episodes: mark them helpful or not. Their learned utility, and so their rank in
    later searches, moves accordingly; this is what drives the utility-learning loop."""
    signal = "helpful" if helpful else "unhelpful"

    def work(mem: "Memory") -> ToolResult:
        values = mem.feedback(signal, episodes)
        data = {"signal": signal, "utility": values}
        return reply(data, "\n".join(f"{eid[:8]}  utility now {u:.3f}" for eid, u in values.items()))

    return await with_memory(ctx, work)


TOOLS = [tempera_retrieve, tempera_capture, tempera_feedback]
